/*
 * test_trace.cc - every trace reader on small hand-written files (written
 * under a mkdtemp directory), format detection, and errors that name
 * file:line.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include <cmath>
#include <cstdlib>
#include <filesystem>

#include "sim/csv.h"
#include "sim/trace.h"

#include "tests/unit/unit.h"

using namespace tidal;
using namespace tidal::sim;

using test::near;
using test::put;
static const std::string &root = test::scratch_root;

/* The InputError of loading TEXT (as FORMAT), with the path replaced by
 * "F"; "" if it loads. */
static std::string error_of(const std::string &text,
			    const std::string &format = "")
{
	std::string path = put(text);
	try {
		load_trace(path, format);
	} catch (const InputError &e) {
		std::string m = e.what();
		if (m.rfind(path, 0) == 0)
			m = "F" + m.substr(path.size());
		return m;
	}
	return "";
}

static void expect_error(const std::string &text, const std::string &format,
			 const char *want)
{
	std::string got = error_of(text, format);
	if (got.rfind(want, 0) != 0)
		fail_msg("got '%s', want '%s...'", got.c_str(), want);
}

/* Muri: ms -> s (duration through int() first), stages, priority. */
static void test_muri(void **)
{
	Trace t = load_trace(put(
		"job_id,num_gpu,submit_time,iterations,model_name,batch_size,"
		"duration,interval,iteration_time,resource_time_0,"
		"resource_time_1,resource_time_2,priority\n"
		"0,4,1500,1000,resnet18,128,60000.9,0,60,10,40,10,2\n"
		"5,1,2500,10,vgg16,32,700,0,70,1,2,3,0\n"));
	assert_string_equal(t.format.c_str(), "muri");
	assert_int_equal(t.jobs.size(), 2);
	const Job &j = t.jobs[0];
	assert_int_equal(j.id, 0);
	assert_string_equal(j.name.c_str(), "0");
	assert_int_equal(j.gpus, 4);
	near(j.submit, 1.5);
	near(j.iterations, 1000);
	near(j.duration, 60.0);
	near(j.iter_time, 0.06);
	near(j.stages[0], 0.01);
	near(j.stages[1], 0.04);
	near(j.stages[2], 0.01);
	assert_int_equal(j.priority_class, 2);
	assert_int_equal(j.batch, 128);
	assert_string_equal(j.model.c_str(), "resnet18");
	assert_int_equal(t.jobs[1].id, 5);
	assert_int_equal(t.jobs[1].index, 1);
	assert_int_equal((int)t.jobs[1].state, (int)JobState::Future);
}

/* ElasticFlow generated traces: int() duration, deadline unless
 * best_effort, elastic 1..num_gpu. */
static void test_elasticflow(void **)
{
	Trace t = load_trace(put(
		"job_id,submit_time,iteration,model_name,ddl,batch_size,"
		"num_gpu,duration,best_effort\n"
		"0,0,1000,resnet50,5000,256,2,3000.7,0\n"
		"1,100,2000,gpt2,9000,128,1,4000,1\n"));
	assert_string_equal(t.format.c_str(), "elasticflow");
	const Job &a = t.jobs[0], &b = t.jobs[1];
	near(a.duration, 3000);
	near(a.deadline, 5000);
	near(a.iter_time, 3.0);
	assert_false(a.best_effort);
	assert_int_equal(a.min_gpus, 1);
	assert_int_equal(a.max_gpus, 2);
	assert_int_equal(a.batch, 256);
	assert_true(b.best_effort);
	assert_false(b.has_deadline());
	near(b.submit, 100);
}

/* ITP cluster traces: the aliased columns, and UUID ids numbered by row
 * as ElasticFlow does. */
static void test_elasticflow_itp(void **)
{
	Trace t = load_trace(put(
		"job_id,submission_time,num_iteration,model_name,deadline,"
		"batch_size,num_gpu,duration\n"
		"965d744f-0445-c1a8-12af-97e4c536c66e,193,500,bert,900,64,8,"
		"300\n"
		"0bc6e292-b9b4-36d3-61bf-fb714fe2f053,911,700,vgg16,5000,32,1,"
		"700\n"));
	assert_string_equal(t.format.c_str(), "elasticflow");
	assert_int_equal(t.jobs[0].id, 0);
	assert_int_equal(t.jobs[1].id, 1);
	assert_string_equal(t.jobs[0].name.c_str(),
			    "965d744f-0445-c1a8-12af-97e4c536c66e");
	near(t.jobs[0].submit, 193);
	near(t.jobs[0].iterations, 500);
	near(t.jobs[0].deadline, 900);
	assert_int_equal(t.jobs[0].gpus, 8);
}

/* Helios/Lucid: datetimes as UTC epoch seconds, gpu_num=0 skipped with a
 * warning, profile key model/dataset/batch/amp. */
static void test_lucid(void **)
{
	Trace t = load_trace(put(
		"job_id,user,vc,jobname,gpu_num,cpu_num,state,submit_time,"
		"duration,dataset,model,batchsize,amp,speed,gpu_util,"
		"gmem_util,gmem\n"
		"11,u1,vcA,r_u1,1,4,COMPLETED,2020-04-01 00:00:00,600,"
		"ImageNet,ResNet50,64,0,400.5,90.5,50.1,8000.0\n"
		"12,u2,vcB,x_u2,0,4,FAILED,2020-04-01 00:05:00,60,CIFAR-10,"
		"VGG16,32,1,100.0,10.0,5.0,1000.0\n"
		"13,u2,vcB,b_u2,8,32,COMPLETED,2020-04-02T12:30:59,86400,wiki,"
		"BERT,16,1,10.0,99.0,80.0,30000.0\n"));
	assert_string_equal(t.format.c_str(), "lucid");
	assert_int_equal(t.jobs.size(), 2);
	assert_int_equal(t.skipped, 1);
	assert_non_null(strstr(t.warnings[0].c_str(),
			       ":3: job 12 asks for no GPU; skipped"));
	const Job &a = t.jobs[0], &b = t.jobs[1];
	near(a.submit, 1585699200); /* 2020-04-01 00:00:00 UTC */
	near(b.submit, 1585699200 + 86400 + 12 * 3600 + 30 * 60 + 59);
	assert_string_equal(a.user.c_str(), "u1");
	assert_string_equal(a.group.c_str(), "vcA");
	assert_string_equal(a.model.c_str(), "ResNet50/ImageNet/64/0");
	near(a.duration, 600);
	near(a.iterations, 600);
	near(a.iter_time, 1);
	near(a.gpu_util, 90.5);
	near(a.gpu_mem_mb, 8000);
	assert_int_equal(b.gpus, 8);
	assert_int_equal(b.index, 2);
}

static void test_pollux(void **)
{
	Trace t = load_trace(put("name,time,application,num_replicas,"
				 "batch_size\n"
				 "cifar10-0,53,cifar10,6,2048\n"
				 "imagenet-1,120,imagenet,16,1600\n"));
	assert_string_equal(t.format.c_str(), "pollux");
	assert_int_equal(t.jobs[1].id, 1);
	assert_string_equal(t.jobs[1].name.c_str(), "imagenet-1");
	assert_string_equal(t.jobs[1].model.c_str(), "imagenet");
	assert_int_equal(t.jobs[1].gpus, 16);
	assert_int_equal(t.jobs[1].batch, 1600);
	near(t.jobs[1].submit, 120);
	assert_int_equal(t.jobs[1].max_gpus, 64);
}

static const char *kGavelRow0 =
	"ResNet-18 (batch size 64)\tpython3 main.py\tcifar\t--num_steps\t0\t"
	"1000\t1\tstatic\t1\t-1.000000\t500\t0\n";

static void test_gavel(void **)
{
	Trace t = load_trace(put(std::string(kGavelRow0) +
				 "LM (batch size 10)\tpython3 lm.py\tlm\t--steps"
				 "\t1\t5000\t4\tgns\t1\t1.2\t-1\t120.5\n"));
	assert_string_equal(t.format.c_str(), "gavel");
	const Job &a = t.jobs[0], &b = t.jobs[1];
	assert_string_equal(a.model.c_str(), "ResNet-18");
	assert_int_equal(a.batch, 64);
	near(a.iterations, 1000);
	assert_int_equal(a.gpus, 1);
	near(a.iter_time, 0.5);
	assert_string_equal(b.model.c_str(), "LM");
	assert_int_equal(b.batch, 10);
	assert_int_equal(b.gpus, 4);
	near(b.submit, 120.5);
	near(b.duration, 0); /* placeholder duration -1: not given */
	near(b.iter_time, 0);
}

static const char *kSacct =
	"JobID|JobIDRaw|User|Partition|Submit|Start|End|Elapsed|State|"
	"AllocTRES|ReqTRES|Timelimit\n"
	"100|100|alice|gpu|2026-01-01T00:00:00|2026-01-01T00:01:00|"
	"2026-01-01T01:01:00|01:00:00|COMPLETED|billing=8,cpu=8,gres/gpu=4,"
	"gres/gpu:a100=4,node=1|cpu=8,gres/gpu=4|1-00:00:00\n"
	"100.batch|100.batch||||2026-01-01T00:01:00|2026-01-01T01:01:00|"
	"01:00:00|COMPLETED|cpu=8,gres/gpu=4||\n"
	"101_3|105|bob|gpu|2026-01-01T00:10:00|2026-01-01T00:10:00|"
	"2026-01-03T00:10:00|2-00:00:00|TIMEOUT|cpu=4,gres/gpu:v100=2|"
	"cpu=4,gres/gpu=8|2-00:00:00\n"
	"102|102|carol|cpu|2026-01-01T00:20:00|Unknown|Unknown|00:00:00|"
	"CANCELLED||cpu=2|30:00\n"
	"103|103|dave|gpu|2026-01-01T00:30:00|2026-01-01T00:31:00|"
	"2026-01-01T00:41:00|10:00|COMPLETED||gres/gpu=1|UNLIMITED\n"
	"104|104|erin|gpu|2026-01-01T00:40:00|Unknown|Unknown|00:00:00|"
	"PENDING||gres/gpu=2|1:00:00\n";

/* sacct --parsable2: steps skipped, AllocTRES over ReqTRES (typed counts
 * when there is no untyped one), Elapsed with days, jobs without GPUs or
 * that never ran skipped, submits rebased to the first. */
static void test_sacct(void **)
{
	Trace t = load_trace(put(kSacct));
	assert_string_equal(t.format.c_str(), "sacct");
	assert_int_equal(t.jobs.size(), 3);
	assert_int_equal(t.skipped, 2);
	assert_non_null(strstr(t.warnings[0].c_str(),
			       ":5: job 102 used no GPU; skipped"));
	assert_non_null(strstr(t.warnings[1].c_str(),
			       ":7: job 104 never ran; skipped"));
	const Job &a = t.jobs[0], &b = t.jobs[1], &c = t.jobs[2];
	assert_int_equal(a.id, 100);
	assert_int_equal(a.gpus, 4);
	near(a.submit, 0);
	near(a.duration, 3600);
	near(a.estimate, 86400);
	assert_string_equal(a.user.c_str(), "alice");
	assert_string_equal(a.group.c_str(), "gpu");
	assert_int_equal(b.id, 105); /* JobIDRaw of array task 101_3 */
	assert_string_equal(b.name.c_str(), "101_3");
	assert_int_equal(b.gpus, 2); /* AllocTRES, not ReqTRES's 8 */
	near(b.duration, 2 * 86400);
	near(b.submit, 600);
	assert_int_equal(c.gpus, 1); /* never allocated: ReqTRES */
	near(c.duration, 600);
	near(c.estimate, -1);
	near(c.submit, 1800);
}

/* Without Elapsed, End - Start; without JobIDRaw, array tasks get fresh
 * ids past the largest plain one. */
static void test_sacct_start_end_and_ids(void **)
{
	Trace t = load_trace(put(
		"JobID|Submit|Start|End|ReqTRES\n"
		"7_1|2026-02-01 00:00:10|2026-02-01T00:00:15|"
		"2026-02-01T00:10:15|gres/gpu=2\n"
		"7_2|2026-02-01 00:00:10|2026-02-01T00:00:15|"
		"2026-02-01T00:00:20|gres/gpu=1\n"
		"9|2026-02-01 00:00:00|2026-02-01T00:00:00|"
		"2026-02-01T01:00:00|gres/gpu=1\n"));
	assert_int_equal(t.jobs.size(), 3);
	assert_int_equal(t.jobs[0].id, 10);
	assert_int_equal(t.jobs[1].id, 11);
	assert_int_equal(t.jobs[2].id, 9);
	near(t.jobs[0].duration, 600);
	near(t.jobs[1].duration, 5);
	near(t.jobs[0].submit, 10);
	near(t.jobs[2].submit, 0);
}

/* The UB Slurm Simulator's events file: GPUs from --gres per node times
 * the nodes (-N, or ntasks over ntasks-per-node) or from --gpus; run time
 * -sim-walltime, -1 = the time limit; CPU-only jobs, jobs of no run time
 * and other events skipped. */
static void test_ub(void **)
{
	Trace t = load_trace(put(
		"-dt 0 -e submit_batch_job | -J jobid_1001 -sim-walltime 0 "
		"--uid=user5 -t 00:01:00 -n 12 --ntasks-per-node=12 -A a2 "
		"-p normal -q normal --gres=gpu:1 pseudo.job\n"
		"-dt 2 -e submit_batch_job | -J jobid_1003 -sim-walltime 5 "
		"--uid=user4 -t 00:01:00 -n 1 pseudo.job\n"
		"# a comment\n"
		"-dt 16 -e submit_batch_job | -J jobid_1004 -sim-walltime 21 "
		"--uid=user3 -t 2-01:30 -n 24 --ntasks-per-node=12 -A a1 "
		"--gres=gpu:v100:2 --exclusive pseudo.job\n"
		"-dt 19 -e submit_batch_job | -J jobid_1005 -sim-walltime -1 "
		"--time 90 -N 3 --gpus-per-node=4 -c 2 -n 3 pseudo.job\n"
		"-dt 20 -e send_job_update | -J jobid_1004\n"
		"-dt 21.5 -e submit_batch_job | -J late -sim-walltime 7 "
		"-G 6 --mem=500000 --constraint=CPU-N pseudo.job\n"));
	assert_string_equal(t.format.c_str(), "ub");
	assert_int_equal(t.jobs.size(), 3);
	assert_int_equal(t.skipped, 3);
	assert_non_null(strstr(t.warnings[0].c_str(),
			       ":1: job jobid_1001 runs 0 s; skipped"));
	assert_non_null(strstr(t.warnings[1].c_str(),
			       ":2: job jobid_1003 uses no GPU; skipped"));
	assert_non_null(strstr(t.warnings[2].c_str(),
			       ":6: event 'send_job_update' is not a job "
			       "submission; skipped"));
	const Job &a = t.jobs[0], &b = t.jobs[1], &c = t.jobs[2];
	assert_int_equal(a.id, 1004);
	assert_int_equal(a.gpus, 4); /* 2 per node on 24 / 12 nodes */
	near(a.submit, 16);
	near(a.duration, 21);
	near(a.estimate, ((2 * 24 + 1) * 60 + 30) * 60);
	assert_string_equal(a.user.c_str(), "user3");
	assert_string_equal(a.group.c_str(), "a1"); /* no -p: the account */
	assert_int_equal(a.cpus, 24);
	assert_int_equal(t.line(a), 4);
	assert_int_equal(b.id, 1005);
	assert_int_equal(b.gpus, 12);
	near(b.duration, 90 * 60); /* -1: its limit of 90 minutes */
	assert_int_equal(b.cpus, 6);
	assert_int_equal(c.id, 1006); /* past the largest jobid_N */
	assert_string_equal(c.name.c_str(), "late");
	assert_int_equal(c.gpus, 6);
	near(c.submit, 21.5);
	near(c.estimate, -1);
}

static void test_ub_errors(void **)
{
	const char *head = "-dt 0 -e submit_batch_job | -J jobid_1 ";
	expect_error(std::string(head) + "-sim-walltime 5 -G 1 -t 1:2:3:4 x\n",
		     "", "F:1: time limit '1:2:3:4' is not one of Slurm's forms "
			 "(M, M:S, H:M:S, D-H, D-H:M, D-H:M:S)");
	expect_error(std::string(head) + "-sim-walltime -1 -G 1 x\n", "",
		     "F:1: job jobid_1 runs until its time limit (-sim-walltime "
		     "-1) but has no -t");
	expect_error(std::string(head) + "-G 1 x\n", "",
		     "F:1: job jobid_1 has no -sim-walltime (its run time)");
	expect_error(std::string(head) + "-sim-walltime ten -G 1 x\n", "",
		     "F:1: -sim-walltime 'ten' is not seconds >= 0 or -1 (until "
		     "the time limit)");
	expect_error(std::string(head) + "-sim-walltime 5 --gpus=two x\n", "",
		     "F:1: --gpus=two: not a whole number");
	expect_error(std::string(head) + "-sim-walltime 5 -G\n", "",
		     "F:1: -G has no value");
	expect_error("-dt -3 -e submit_batch_job | -G 1\n", "",
		     "F:1: -dt '-3' is not a number of seconds >= 0");
	expect_error("-dt 0 -e submit_batch_job | -G 1 -sim-walltime 5\n"
		     "-dt 1 -e x\n", "ub",
		     "F:2: no '|' between the event and its sbatch options "
		     "(expected '-dt SECONDS -e submit_batch_job | OPTIONS')");
	expect_error("-dt 0 -x 1 -e submit_batch_job | -G 1\n", "ub",
		     "F:1: unexpected '-x' before '|' (expected -dt SECONDS -e "
		     "EVENT)");
	expect_error("-dt 0 -e submit_batch_job | -G 1\n", "",
		     "F:1: the job has no -sim-walltime (its run time)");
	expect_error("-dt 0 -e submit_batch_job | -J a -sim-walltime 5 x\n",
		     "", "F: the trace holds no usable job");
}

static void test_tidal(void **)
{
	Trace t = load_trace(put(
		"id,submit,gpus,duration,user,model,batch,iterations,deadline,"
		"min_gpus,max_gpus\n"
		"1,0,4,3600,alice,resnet50,256,1000,7200,1,8\n"
		"2,10.5,1,60,,,,,,,\n"));
	assert_string_equal(t.format.c_str(), "tidal");
	const Job &a = t.jobs[0], &b = t.jobs[1];
	near(a.iter_time, 3.6);
	near(a.deadline, 7200);
	assert_int_equal(a.min_gpus, 1);
	assert_int_equal(a.max_gpus, 8);
	assert_true(a.elastic());
	assert_string_equal(a.model.c_str(), "resnet50");
	near(b.iterations, 60);
	near(b.iter_time, 1);
	assert_false(b.has_deadline());
	assert_false(b.elastic());
}

static void test_detection(void **)
{
	std::string mini = "id,submit,gpus,duration\n1,0,1,10\n";
	assert_string_equal(load_trace(put(mini)).format.c_str(), "tidal");
	/* A forced format wins over detection. */
	expect_error(mini, "muri", "F:1: missing column 'job_id'");
	expect_error("a,b,c\n1,2,3\n", "",
		     "F:1: cannot tell the trace format from the first line");
	expect_error(mini, "csv", "F: unknown trace format 'csv' (known: "
				  "muri, elasticflow, lucid, pollux, gavel, "
				  "sacct, tidal, ub)");
	expect_error("id,submit,gpus,duration\n", "",
		     "F: the trace holds no usable job");
	/* Detection looks at the first line of each format. */
	for (const TraceFormat &f : trace_formats()) {
		assert_false(f.detect("x,y\n"));
		bool tidal = f.name == "tidal";
		assert_true(f.detect(mini) == tidal);
	}
}

/* A file no format recognises: empty, or a header that is close to one
 * format - named, with what it lacks. */
static void test_detection_explains(void **)
{
	expect_error("", "", "F: the trace is empty");
	expect_error("\n \n", "", "F: the trace holds only blank lines");
	expect_error("id,submit,gpus\n1,0,2\n", "",
		     "F:1: cannot tell the trace format: the header is closest "
		     "to the tidal format but lacks column 'duration'");
	expect_error("id,submit,gpus,duraton\n1,0,2,5\n", "",
		     "F:1: cannot tell the trace format: the header is closest "
		     "to the tidal format but lacks column 'duration' (the "
		     "header has 'duraton')");
	expect_error("id,gpus,submit,duration\n1,2,0,5\n", "",
		     "F:1: the header has the columns of the tidal format, in "
		     "another order than detection expects; give "
		     "--trace-format tidal");
	/* ElasticFlow over Muri: more of its columns are there. */
	expect_error("job_id,submit_time,num_gpu,duration,model_name,"
		     "batch_size,iteration\n1,0,1,5,m,8,10\n",
		     "",
		     "F:1: cannot tell the trace format: the header is closest "
		     "to the elasticflow format but lacks column 'ddl' (or "
		     "'deadline')");
	expect_error("JobID|User\n1|a\n", "",
		     "F:1: cannot tell the trace format: the header is closest "
		     "to the sacct format but lacks column 'Submit'");
	expect_error("M (batch size 8)\tb\tc\n", "",
		     "F:1: cannot tell the trace format: the line looks like a "
		     "gavel trace, which has 12 tab-separated columns, not 3");
	/* One column of four is not close to anything. */
	expect_error("id,a,b,c\n1,2,3,4\n", "",
		     "F:1: cannot tell the trace format from the first line; "
		     "give --trace-format (known: muri, elasticflow, lucid, "
		     "pollux, gavel, sacct, tidal, ub)");
}

/* Each job knows the line it was read from, blank lines counted. */
static void test_lines(void **)
{
	Trace t = load_trace(put("id,submit,gpus,duration\n1,0,1,10\n\n"
				 "2,5,1,10\n"));
	assert_int_equal(t.line(t.jobs[0]), 2);
	assert_int_equal(t.line(t.jobs[1]), 4);
	Trace s = load_trace(put(kSacct));
	assert_int_equal(s.line(s.jobs[0]), 2);
	assert_int_equal(s.line(s.jobs[1]), 4);
	assert_int_equal(s.line(s.jobs[2]), 6);
	Job stray;
	stray.index = 99;
	assert_int_equal(t.line(stray), 0);
}

static void test_errors(void **)
{
	const char *tidal_head = "id,submit,gpus,duration\n";
	auto tidal = [&](const char *rows) {
		return std::string(tidal_head) + rows;
	};
	expect_error(tidal("1,0,1,10\n2,-5,1,10\n"), "",
		     "F:3: negative submit time");
	expect_error(tidal("1,0,0,10\n"), "",
		     "F:2: GPU count must be positive, got 0");
	expect_error(tidal("1,0,1,-10\n"), "", "F:2: negative duration");
	expect_error(tidal("1,0,x,10\n"), "",
		     "F:2: column 'gpus': 'x' is not a number");
	expect_error(tidal("1,0,1.5,10\n"), "",
		     "F:2: column 'gpus': '1.5' is not an integer");
	expect_error(tidal("1,0,1e12,10\n"), "",
		     "F:2: column 'gpus': 1e12 is out of range");
	expect_error(tidal("1,0,1e300,10\n"), "",
		     "F:2: column 'gpus': '1e300' is not an integer");
	expect_error(tidal("1,0,1,nan\n"), "",
		     "F:2: column 'duration': 'nan' is not a number");
	expect_error(tidal("1,0,1\n"), "", "F:2: expected 4 columns, found 3");
	expect_error(tidal("7,0,1,10\n\n7,1,1,10\n"), "",
		     "F:4: job id 7 is already used on line 2");
	expect_error("id,submit,gpus,duration,min_gpus,max_gpus\n"
		     "1,0,2,10,3,2\n",
		     "", "F:2: min_gpus must be in [0, max_gpus]");
	expect_error("id,submit,gpus,duration,min_gpus\n1,0,2,10,-1\n", "",
		     "F:2: min_gpus must be in [0, max_gpus]");
	/* The header's own line, after blank lines. */
	expect_error("\n\nid,submit,gpus,dur\n1,0,1,10\n", "tidal",
		     "F:3: missing column 'duration'");
	expect_error("job_id,user,vc,gpu_num,submit_time,duration\n"
		     "1,u,v,1,2020-13-01 00:00:00,5\n",
		     "", "F:2: submit_time '2020-13-01 00:00:00' is not");
	expect_error(std::string(kGavelRow0) + "x\ty\n", "",
		     "F:2: expected 12 tab-separated columns, found 2");
	expect_error(std::string(kGavelRow0) +
			     "LM (batch size 10)\tc\td\te\t1\t5\t4\tg\t1\t1\t-1\t"
			     "-3\n",
		     "", "F:2: scale_factor, total_steps must be positive");
	expect_error("name,time,application,num_replicas,batch_size\n"
		     "a,1,app,2,x\n",
		     "", "F:2: column 'batch_size': 'x' is not a number");
	expect_error("JobID|Submit|Elapsed\n1|2026-01-01T00:00:00|01:00\n", "",
		     "F:1: missing column 'AllocTRES' (or 'ReqTRES')");
	expect_error("JobID|Submit|Elapsed|AllocTRES\n1|yesterday|01:00|"
		     "gres/gpu=1\n",
		     "", "F:2: Submit 'yesterday' is not");
	try {
		load_trace(root + "/missing.csv");
		fail_msg("a missing file loaded");
	} catch (const InputError &e) {
		assert_non_null(strstr(e.what(), "/missing.csv: cannot open"));
	}
}

static void test_parse_datetime(void **)
{
	double t = -1;
	assert_true(parse_datetime("1970-01-02 00:00:01", &t));
	near(t, 86401);
	assert_true(parse_datetime("2026-01-01T00:00:00 ", &t));
	assert_false(parse_datetime("2026-01-01 00:00:00x", &t));
	assert_false(parse_datetime("2026-01-01 -1:00:00", &t));
	assert_false(parse_datetime("2026-01-01 24:00:00", &t));
	assert_false(parse_datetime("2026-01-01", &t));
	assert_false(parse_datetime("", &t));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_muri),
		cmocka_unit_test(test_elasticflow),
		cmocka_unit_test(test_elasticflow_itp),
		cmocka_unit_test(test_lucid),
		cmocka_unit_test(test_pollux),
		cmocka_unit_test(test_gavel),
		cmocka_unit_test(test_sacct),
		cmocka_unit_test(test_sacct_start_end_and_ids),
		cmocka_unit_test(test_ub),
		cmocka_unit_test(test_ub_errors),
		cmocka_unit_test(test_tidal),
		cmocka_unit_test(test_detection),
		cmocka_unit_test(test_detection_explains),
		cmocka_unit_test(test_lines),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_parse_datetime),
	};
	return cmocka_run_group_tests(tests, test::scratch_setup,
				      test::scratch_teardown);
}
