#!/usr/bin/env python3
# tests/pair_speed.py TABLE J T - print J's packed speed beside T from
# TABLE, a colocate_info.csv (Lucid's; either orientation of the row, as
# core/profiles/colocate.h looks it up); nothing if the table has no row.
# J and T are MODEL/DATASET/BATCH/AMP.  For the scripts that check packed
# speeds live (tests/node/test_pack.sh, tests/cluster/test_lucid_live.sh).
#
# GPL-2.0-or-later.
import csv
import sys

j, t = (k.split("/") for k in sys.argv[2:4])
for r in csv.DictReader(open(sys.argv[1])):
    a = [r["model1"], r["dataset1"], r["batchsize1"], r["amp1"]]
    b = [r["model2"], r["dataset2"], r["batchsize2"], r["amp2"]]
    if (a, b) == (j, t):
        print(r["speed1"])
        break
    if (a, b) == (t, j):
        print(r["speed2"])
        break
