# plugin/sched/agents/agents.mk - the registry of node agents, one file
# per concern (registry.h says which).  Included from the top-level
# Makefile before the tests and the plugin, whose object lists name these.

AGENTS_SRC := $(sort $(wildcard plugin/sched/agents/*.cc))
AGENTS_OBJ := $(AGENTS_SRC:%.cc=$(BUILD)/obj/%.o)
