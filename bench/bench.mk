# bench/bench.mk - `make bench`: replay cost against the anchors' measured
# cost, and scale from 10k to 1M jobs.  Results are printed as tables with
# the machine noted; nothing here is a pass/fail test.

bench: $(BUILD)/tidal-sim
	bench/run.sh $(BUILD)/tidal-sim
