# Tidal - top-level build driver (non-recursive).
#
# On a fresh Debian 12 machine, as root, `make demo` and `make check` do
# everything: the first run installs the Debian packages (scripts/deps.sh),
# fetches and configures the matching Slurm source (scripts/slurm-src.sh) and
# runs ./configure, which writes config.mk.
#
#   make            build everything the machine can build
#   make check      every test tier (check-emu check-cluster
#                   check-cluster-24 check-slurm-quick check-node
#                   check-unit check-fuzz check-sim check-deb)
#   make check-slurm  Slurm's own regression tests under sched/backfill and
#                   sched/tidal (tests/slurm/run.sh)
#   make bench      benchmarks, printed as tables
#   make demo       the main job: see README.md
#   make install    DESTDIR-aware install (PREFIX= or prefix=)
#   make deb        Debian packages for the installed Slurm (build/deb)
#   make SAN=1 ...  the same with ASan+UBSan, in build-san/
#
# GPL-2.0-or-later.

# Every core, unless make's command line says how many jobs (-jN): GNU
# make 4.3 does not show a -j of its command line in MAKEFLAGS while it
# reads this file, so it is looked for in make's own arguments.  Sub-makes
# share the top make's jobs.
ifeq ($(MAKELEVEL),0)
ifeq ($(shell tr '\0' '\n' </proc/$$PPID/cmdline 2>/dev/null | grep -E '^(-[a-zA-Z]*j|--jobs)'),)
MAKEFLAGS += -j$(shell nproc 2>/dev/null || echo 2)
endif
endif

# CONFIG_MK: which configure output to build with; config.mk, unless a
# second Slurm's build names its own (tests/slurm24.mk).
NO_CONFIG_GOALS := deps distclean clean help
CONFIG_MK ?= config.mk
ifneq ($(filter-out $(NO_CONFIG_GOALS),$(or $(MAKECMDGOALS),all)),)
-include $(CONFIG_MK)
endif

CXX ?= g++
CC ?= gcc
OPT ?= -O2 -g
ifeq ($(SAN),1)
BUILD ?= build-san
SANFLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer \
	-fno-sanitize-recover=undefined
# Leaks inside hwloc's plugins are hwloc's (tests/lsan.supp); full stacks
# so that the suppression can see libhwloc.so in them.
export ASAN_OPTIONS ?= fast_unwind_on_malloc=0
export LSAN_OPTIONS ?= suppressions=$(CURDIR)/tests/lsan.supp
else
BUILD ?= build
SANFLAGS :=
endif

WARN := -Wall -Wextra -Wno-unused-parameter -Wshadow=local
TIDAL_CXXFLAGS := -std=c++20 $(OPT) $(WARN) -fPIC $(SANFLAGS) -I. \
	$(JSONC_CFLAGS) $(CPPFLAGS) $(CXXFLAGS)
TIDAL_LDFLAGS := $(SANFLAGS) $(LDFLAGS)
# LP/MILP backend for core/solvers/solver.h and core/solvers/lp_glpk.h
# (Themis, Gavel, Shockwave): GLPK, which scripts/deps.sh always installs.
TIDAL_CXXFLAGS += -DTIDAL_HAVE_GLPK $(GLPK_CFLAGS)
# Prometheus metrics over HTTP (proto/http.cc): libmicrohttpd, which
# scripts/deps.sh installs; without it the endpoint refuses, saying so.
ifeq ($(HAVE_MHD),1)
$(BUILD)/obj/proto/http.o: TIDAL_CXXFLAGS += -DTIDAL_HAVE_MHD $(MHD_CFLAGS)
endif

.PHONY: all check check-unit check-sim check-fuzz check-emu check-cluster \
	bench bench-load bench-live demo install deps clean distclean help fuzz check-build \
	deb

all: $(BUILD)/tidal-sim plugin node

# ---------------------------------------------------------------- configure

# One configure at a time (parallel makes would race in the tree).  Without
# a Slurm source tree (no deb-src reachable) the plugin is skipped.
config.mk: configure.ac config.mk.in | $(BUILD)/.deps
	flock .configure.lock sh -c 'autoreconf -fi && \
		src=$$(scripts/slurm-src.sh) || { src=; \
		echo "warning: no Slurm source tree; the plugin will be skipped" >&2; }; \
		./configure --with-slurm-src="$$src"'

$(BUILD)/.deps: scripts/deps.sh
	scripts/deps.sh
	@mkdir -p $(BUILD) && touch $@

deps:
	scripts/deps.sh

# ---------------------------------------------------------------- objects

CORE_SRC := $(sort $(wildcard core/*.cc core/*/*.cc))
SIM_SRC := $(filter-out sim/main.cc,$(sort $(wildcard sim/*.cc sim/*/*.cc)))
CORE_OBJ := $(CORE_SRC:%.cc=$(BUILD)/obj/%.o)
SIM_OBJ := $(SIM_SRC:%.cc=$(BUILD)/obj/%.o)

$(BUILD)/obj/%.o: %.cc
	@mkdir -p $(dir $@)
	$(CXX) $(TIDAL_CXXFLAGS) -MMD -MP -c $< -o $@

# LEMON 1.3 compiles only as C++17: its one translation unit (the matcher)
# gets $(LEMON_CXXFLAGS) after the C++20 flags.
$(BUILD)/obj/core/solvers/matching.o: TIDAL_CXXFLAGS += $(LEMON_CFLAGS) \
	$(LEMON_CXXFLAGS)

-include $(CORE_OBJ:.o=.d) $(SIM_OBJ:.o=.d)

# Every archive: its objects are named where it is declared (a rule
# without a recipe, below or in a component's .mk); this builds it afresh
# from them.
$(BUILD)/libtidal-%.a:
	@rm -f $@
	ar rcs $@ $^

# Policies register themselves from static constructors: link the archives
# whole so none is dropped.
$(BUILD)/libtidal-core.a: $(CORE_OBJ)

$(BUILD)/libtidal-sim.a: $(SIM_OBJ)

# What libtidal-core needs at link time, for every program that links it.
CORE_LIBS := $(JSONC_LIBS) $(LEMON_LIBS) $(GLPK_LIBS)
TIDAL_LIBS := -Wl,--whole-archive $(BUILD)/libtidal-sim.a \
	$(BUILD)/libtidal-core.a -Wl,--no-whole-archive $(CORE_LIBS)

$(BUILD)/tidal-sim: $(BUILD)/obj/sim/main.o $(BUILD)/libtidal-sim.a \
		$(BUILD)/libtidal-core.a
	$(CXX) $(TIDAL_LDFLAGS) -o $@ $< $(TIDAL_LIBS)

-include $(BUILD)/obj/sim/main.d

# ---------------------------------------------------------------- the wire
# proto/: what every component speaks (libtidal-proto.a).  The plugin's
# registry of node agents is listed here too (agents.mk), because the
# tests' object lists, read before plugin.mk, name its files.

include proto/proto.mk
include plugin/sched/agents/agents.mk

# ---------------------------------------------------------------- node side
# The node side: tidal-train (trainer/), tidal-launch (launcher/),
# tidald and tidal-topo (nodeagent/).
#
# Code shared by the programs (the wire of proto/; node/: checkpoint
# format, rendezvous store, topology) is archived in libtidal-node.a
# (node/node.mk, which also sets NODE_CFLAGS and NODE_LIBS); each
# program's .mk archives its own library pieces for the tests
# (libtidal-train.a, libtidal-launch.a, libtidal-agent.a) and adds its
# programs to NODE_TARGETS.

NODE_LIB_SRC :=
NODE_CFLAGS := $(MUNGE_CFLAGS)
NODE_LIBS := $(MUNGE_LIBS) -pthread
NODE_TARGETS :=

include node/node.mk
-include trainer/trainer.mk
-include launcher/launcher.mk
-include nodeagent/nodeagent.mk

NODE_LIB_OBJ := $(NODE_LIB_SRC:%.cc=$(BUILD)/obj/%.o)
-include $(NODE_LIB_OBJ:.o=.d)

$(NODE_LIB_OBJ): TIDAL_CXXFLAGS += $(NODE_CFLAGS)

$(BUILD)/libtidal-node.a: $(NODE_LIB_OBJ)

.PHONY: node
node: $(NODE_TARGETS)

# ---------------------------------------------------------------- tests

include tests/tests.mk
include bench/bench.mk
include plugin/plugin.mk

# ---------------------------------------------------------------- install

# One install root, under either spelling: `make install PREFIX=/usr` and
# `make install prefix=/usr` both move everything (configure's --prefix
# is the default).  bindir, sbindir, mandir and docdir follow it unless
# named themselves.
ifeq ($(origin PREFIX),command line)
prefix := $(PREFIX)
else ifeq ($(origin prefix),command line)
PREFIX := $(prefix)
endif
prefix ?= /usr/local
PREFIX ?= $(prefix)
exec_prefix ?= $(prefix)
bindir ?= $(exec_prefix)/bin
sbindir ?= $(exec_prefix)/sbin
datarootdir ?= $(prefix)/share
mandir ?= $(datarootdir)/man
docdir ?= $(datarootdir)/doc/tidal
bashcompdir ?= $(datarootdir)/bash-completion/completions
# The examples an administrator starts from; the installed tree never
# holds a live configuration (that is /etc/slurm's, and the admin's).
CONF_EXAMPLES := conf/tidal.conf conf/plugstack.conf conf/gres.conf \
	conf/slurm.conf conf/topology.conf conf/tidald.default

install: all
	install -d $(DESTDIR)$(bindir) $(DESTDIR)$(mandir)/man1
	install -m 755 $(BUILD)/tidal-sim $(DESTDIR)$(bindir)/tidal-sim
	# The node side, where it was built (tidald: nodeagent.mk).
	for p in tidal-launch tidal-train; do \
		[ ! -x $(BUILD)/$$p ] || \
		install -m 755 $(BUILD)/$$p $(DESTDIR)$(bindir)/$$p; done
	# tidal-train's GPU module, where it looks from bindir (gpu_module.h).
	[ ! -f $(BUILD)/tidal-train-cuda.so ] || \
		install -D -m 644 $(BUILD)/tidal-train-cuda.so \
		$(DESTDIR)$(exec_prefix)/lib/tidal/tidal-train-cuda.so
	[ ! -x $(BUILD)/tidal-topo ] || { install -d $(DESTDIR)$(sbindir) && \
		install -m 755 $(BUILD)/tidal-topo $(DESTDIR)$(sbindir)/; }
	for m in man/man*/*.[1-8]; do \
		s=$${m##*.}; install -d $(DESTDIR)$(mandir)/man$$s; \
		install -m 644 $$m $(DESTDIR)$(mandir)/man$$s/; done
	install -d $(DESTDIR)$(bashcompdir)
	install -m 644 completion/tidal-sim.bash $(DESTDIR)$(bashcompdir)/tidal-sim
	[ ! -x $(BUILD)/tidalctl ] || \
		install -m 644 completion/tidalctl.bash $(DESTDIR)$(bashcompdir)/tidalctl
	install -d $(DESTDIR)$(docdir)/examples
	install -m 644 README.md $(DESTDIR)$(docdir)/
	install -m 644 $(CONF_EXAMPLES) $(DESTDIR)$(docdir)/examples/

# ---------------------------------------------------------------- deb

# Debian packages for the installed Slurm, in $(BUILD)/deb (scripts/deb.sh,
# debian/); tests/pkg/test_deb.sh checks them (make check-deb).
.PHONY: deb
deb: | $(BUILD)/.deps
	scripts/deb.sh $(BUILD)/deb

# ---------------------------------------------------------------- demo

# Everything the live half needs too (tidald, tidal-launch, tidal-train):
# the demo builds it, so that it is the first command on a fresh clone.
demo: $(BUILD)/tidal-sim $(BUILD)/gen-trace plugin node
	scripts/demo.sh $(BUILD)

# ---------------------------------------------------------------- cleaning

clean:
	rm -rf build build-san

distclean: clean
	rm -rf config.mk config.status config.log configure autom4te.cache

help:
	@sed -n '3,20p' Makefile
