# bench/bench.mk - `make bench`: replay cost against the anchors' measured
# cost, scale from 10k to 1M jobs, checkpoint and resize times, tidalctl
# latency under heart-beating agents (bench/ctl.sh), a burst of 10,000
# jobs on the loopback cluster (bench/load.sh), srun's time to start
# (bench/srun.sh), a trainer world's start and the Tidal.RankStart that
# models it (bench/rank_start.sh), and Muri's interleaving against srsf,
# live and beside tidal-sim (bench/muri_live.sh).  Results are printed as
# tables with the machine noted; nothing here is a pass/fail test.

$(BUILD)/gen-trace: bench/gen_trace.cc $(BUILD)/libtidal-sim.a \
		$(BUILD)/libtidal-core.a
	@mkdir -p $(dir $@)
	$(CXX) $(TIDAL_CXXFLAGS) -o $@ $< $(TIDAL_LDFLAGS) $(TIDAL_LIBS)

bench: $(BUILD)/tidal-sim $(BUILD)/gen-trace \
		$(filter $(BUILD)/tidal-train,$(NODE_TARGETS))
	bench/run.sh $(BUILD)
	bench/ckpt.sh $(BUILD)
	bench/resize.sh $(BUILD)
	bench/gpu.sh $(BUILD)
	bench/ctl.sh $(BUILD)
	bench/load.sh $(BUILD)
	bench/srun.sh $(BUILD)
	bench/rank_start.sh $(BUILD)
	bench/muri_live.sh $(BUILD)

# Simulator mode's fidelity (bench/sim_live.sh): ElasticFlow's Fig 10
# trace and a 200-job synthetic one, live and replayed, under fifo,
# tiresias, elastic-edf and elasticflow.  About two and a half hours on 2
# cores, with nothing else running: not part of `make bench`.
bench-live: $(BUILD)/tidal-sim $(BUILD)/gen-trace plugin node
	bench/sim_live.sh $(BUILD)

# The loopback cluster's load benchmarks alone (bench/ctl.sh,
# bench/load.sh, bench/srun.sh; BENCH_CTL_*, BENCH_LOAD_* and BENCH_SRUN_*
# set their size).
bench-load: all
	bench/ctl.sh $(BUILD)
	bench/load.sh $(BUILD)
	bench/srun.sh $(BUILD)

# Duration estimators compared by MAE (bench/estimator_mae.cc).
$(BUILD)/estimator-mae: bench/estimator_mae.cc $(BUILD)/libtidal-sim.a \
		$(BUILD)/libtidal-core.a
	@mkdir -p $(dir $@)
	$(CXX) $(TIDAL_CXXFLAGS) -o $@ $< $(TIDAL_LDFLAGS) $(TIDAL_LIBS)
