# tests/cluster/cluster.mk - what `make check-cluster` needs built first.
# The tier itself (tests/cluster/test_*.sh, each with BUILD set) is run by
# tests/tests.mk's check-cluster rule.  Included from tests/tests.mk.

check-cluster: plugin
