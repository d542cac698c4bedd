/*
 * test_pack_unit.cc - a packed trainer's speed (trainer/pack.h): the
 * table's speed beside one partner, the product beside several, and 1
 * (with the reason) where a pair cannot be looked up.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include "trainer/pack.h"
#include "tests/unit/unit.h"

using namespace tidal;
using namespace tidal::train;

static ColocateTable table()
{
	ColocateTable t;
	std::string err;
	assert_true(t.parse(
		"co.csv",
		",model1,dataset1,gpu_num1,batchsize1,amp1,speed1,model2,"
		"dataset2,gpu_num2,batchsize2,amp2,speed2\n"
		"0,A,D,1,32,0,0.5,B,D,1,32,0,0.8\n"
		"1,C,D,1,32,0,0.9,A,D,1,32,0,0.6\n",
		&err));
	return t;
}

static void test_speed(void **)
{
	ColocateTable t = table();
	WorkloadKey a;
	std::string err, why;
	assert_true(parse_workload("A/D/32/0", &a, &err));
	assert_float_equal(packed_speed(&a, {}, &t, &why), 1, 0);
	assert_true(why.empty());
	assert_float_equal(packed_speed(&a, { { 2, "B/D/32/0" } }, &t, &why),
			   0.5, 1e-12);
	/* the row (C, A), read the other way round */
	assert_float_equal(packed_speed(&a, { { 3, "C/D/32/0" } }, &t, &why),
			   0.6, 1e-12);
	/* beside both: the product */
	assert_float_equal(packed_speed(&a,
					{ { 2, "B/D/32/0" }, { 3, "C/D/32/0" } },
					&t, &why),
			   0.3, 1e-12);
	assert_true(why.empty());
	/* a pair that cannot be looked up counts as 1, and says why */
	assert_float_equal(packed_speed(&a, { { 4, "" } }, &t, &why), 1, 0);
	assert_string_equal(why.c_str(), "job 4 does not say its workload");
	assert_float_equal(packed_speed(&a, { { 2, "B/D/32/0" }, { 5, "Z/D/1/0" } },
					&t, &why),
			   0.5, 1e-12);
	assert_string_equal(why.c_str(),
			    "the table has no row for A/D/32/0 with Z/D/1/0");
	assert_float_equal(packed_speed(&a, { { 6, "bad" } }, &t, &why), 1, 0);
	assert_non_null(strstr(why.c_str(), "job 6: 'bad': a workload is"));
	/* without a table nothing slows it */
	assert_float_equal(packed_speed(&a, { { 2, "B/D/32/0" } }, nullptr, &why),
			   1, 0);
	assert_float_equal(packed_speed(nullptr, { { 2, "B/D/32/0" } }, &t, &why),
			   1, 0);
	assert_string_equal(why.c_str(), "this job's workload is not known");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_speed),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
