/*
 * test_colocate.cc - packed pair speeds (core/profiles/colocate.h): the
 * workload form, Lucid's lookup (either orientation, the outside models),
 * and the errors of a bad table.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include "core/profiles/colocate.h"
#include "tests/unit/unit.h"

#include <string>

using namespace tidal;

static const char kHead[] =
	",model1,dataset1,gpu_num1,batchsize1,amp1,speed1,model2,dataset2,"
	"gpu_num2,batchsize2,amp2,speed2,gpu_util,gmem_util,gmem\n";

static WorkloadKey key(const char *text)
{
	WorkloadKey k;
	std::string err;
	assert_true(parse_workload(text, &k, &err));
	return k;
}

static void test_workload(void **)
{
	WorkloadKey k = key("ResNet18/CIFAR-10/64/1");
	assert_string_equal(k.model.c_str(), "ResNet18");
	assert_string_equal(k.dataset.c_str(), "CIFAR-10");
	assert_int_equal(k.batch, 64);
	assert_int_equal(k.amp, 1);
	assert_string_equal(workload_name(k).c_str(), "ResNet18/CIFAR-10/64/1");
	std::string err;
	for (const char *bad : { "ResNet18/CIFAR-10/64", "a/b/x/0", "a/b/1/-1",
				 "/b/1/0", "a//1/0", "a/b/1/0/9", "" }) {
		assert_false(parse_workload(bad, &k, &err));
		assert_non_null(strstr(err.c_str(), "MODEL/DATASET/BATCH/AMP"));
	}
}

static void test_lookup(void **)
{
	ColocateTable t;
	std::string err;
	std::string text = std::string(kHead) +
			   "0,ResNet18,CIFAR-10,1,64,0,0.444,DCGAN,LSUN,1,128,0,"
			   "0.718,99.9,48.5,5778\n"
			   "1,VGG,CIFAR-10,1,32,0,1.2,VGG,CIFAR-10,1,32,0,1.1,1,"
			   "1,1\n";
	assert_true(t.parse("co.csv", text, &err));
	assert_int_equal(t.rows(), 2);
	std::pair<double, double> s;
	assert_true(t.speeds(key("ResNet18/CIFAR-10/64/0"),
			     key("DCGAN/LSUN/128/0"), &s));
	assert_float_equal(s.first, 0.444, 1e-12);
	assert_float_equal(s.second, 0.718, 1e-12);
	/* the other orientation: the speeds swapped */
	assert_true(t.speeds(key("DCGAN/LSUN/128/0"),
			     key("ResNet18/CIFAR-10/64/0"), &s));
	assert_float_equal(s.first, 0.718, 1e-12);
	assert_float_equal(s.second, 0.444, 1e-12);
	/* an outside model packs at 1 without a row */
	assert_true(t.speeds(key("BERT/SQuAD/32/0"), key("VGG/CIFAR-10/32/0"),
			     &s));
	assert_float_equal(s.first, 1, 0);
	assert_float_equal(s.second, 1, 0);
	/* amp is part of the key */
	assert_false(t.speeds(key("ResNet18/CIFAR-10/64/1"),
			      key("DCGAN/LSUN/128/0"), &s));
}

static void expect_error(const std::string &text, const char *what)
{
	ColocateTable t;
	std::string err;
	assert_false(t.parse("co.csv", text, &err));
	if (!strstr(err.c_str(), what))
		fail_msg("error '%s' does not say '%s'", err.c_str(), what);
}

static void test_bad_tables(void **)
{
	expect_error("", "co.csv: empty");
	expect_error(",model1,dataset1\n", "co.csv:1: missing column batchsize1");
	std::string row = "0,A,D,1,32,0,0.9,B,D,1,32,0,0.8,1,1,1\n";
	expect_error(kHead + row + row, "co.csv:3: a second row for A/D/32/0 "
					"with B/D/32/0");
	expect_error(std::string(kHead) + "0,A,D,1,32,0,0.9,B,D\n",
		     "co.csv:2: expected 16 cells, got 9");
	expect_error(std::string(kHead) +
			     "0,A,D,1,32,0,fast,B,D,1,32,0,0.8,1,1,1\n",
		     "'fast': a packed speed is a number above 0");
	expect_error(std::string(kHead) +
			     "0,A,D,1,32,0,0,B,D,1,32,0,0.8,1,1,1\n",
		     "'0': a packed speed is a number above 0");
	expect_error(std::string(kHead) +
			     "0,A,D,1,3.5,0,0.9,B,D,1,32,0,0.8,1,1,1\n",
		     "a batch size and amp are integers >= 0");
	ColocateTable t;
	std::string err;
	assert_false(t.load("/nonexistent/co.csv", &err));
	assert_string_equal(err.c_str(), "/nonexistent/co.csv: cannot be read");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_workload),
		cmocka_unit_test(test_lookup),
		cmocka_unit_test(test_bad_tables),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
