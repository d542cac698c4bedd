# trainer/trainer.mk - tidal-train and the trainer's library pieces
# (checkpoint format, rendezvous store), included from the top-level
# Makefile's node side.

NODE_LIB_SRC += trainer/checkpoint.cc trainer/store.cc
