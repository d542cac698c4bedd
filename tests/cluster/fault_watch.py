#!/usr/bin/env python3
# fault_watch.py STOPFILE OUTFILE - test_faults.sh's watcher.  Every 0.3 s,
# until STOPFILE exists, it reads the environment of every process of the
# cluster (its working directory under STOPFILE's directory, $T) and writes
# a line to OUTFILE for each breach it sees:
#
#   twice  JOB NODE   more than one tidal-launch of one job on one node
#                     (the job started twice)
#   shared NODE GPU   one GPU index in two jobs' allocations on one node:
#                     SLURM_JOB_GPUS of their processes, or the GRES
#                     indexes of running jobs in `scontrol -d show job`
#                     (every third sample)
#
# GPL-2.0-or-later.
import os
import re
import subprocess
import sys
import time

stop, out = sys.argv[1], sys.argv[2]
# This cluster's jobs run in its directory (sbatch -D $T/out): processes
# of other clusters on this host are not ours to judge.
ours = os.path.dirname(os.path.abspath(stop)) + "/"


def environ(pid):
    try:
        with open(f"/proc/{pid}/environ", "rb") as f:
            raw = f.read()
    except OSError:
        return None
    env = {}
    for item in raw.split(b"\0"):
        k, _, v = item.partition(b"=")
        env[k.decode(errors="replace")] = v.decode(errors="replace")
    return env


def comm(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            s = f.read()
    except OSError:
        return None, None, None
    name = s[s.index("(") + 1:s.rindex(")")]
    rest = s[s.rindex(")") + 2:].split()
    return name, rest[0], int(rest[1])  # name, state, ppid


def expand(idx):  # "0-1,3" -> ["0", "1", "3"]
    out = []
    for part in idx.split(","):
        a, _, b = part.partition("-")
        if a.isdigit():
            out += [str(i) for i in range(int(a), int(b or a) + 1)]
    return out


def slurm_view(gpus):
    try:
        text = subprocess.run(["scontrol", "-d", "-o", "show", "job"],
                              capture_output=True, text=True,
                              timeout=5).stdout
    except (OSError, subprocess.SubprocessError):
        return
    for line in text.splitlines():
        m = re.search(r"\bJobId=(\d+)", line)
        if not m or "JobState=RUNNING" not in line:
            continue
        job = m.group(1)
        for nodes, idx in re.findall(
                r"\bNodes=(\S+) CPU_IDs=\S+ Mem=\S+ GRES=\S*?\(IDX:([0-9,-]+)\)",
                line):
            names = subprocess.run(["scontrol", "show", "hostnames", nodes],
                                   capture_output=True, text=True).stdout.split()
            for node in names:
                for g in expand(idx):
                    gpus.setdefault((node, g), {}).setdefault(job, "slurm")


def sample(ask_slurm):
    launchers = {}  # (job, node) -> [pids]
    gpus = {}  # (node, gpu) -> {job: where seen}
    names = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        pid = int(d)
        name, state, ppid = comm(pid)
        if name is None or state == "Z":
            continue
        names[pid] = (name, ppid)
        env = environ(pid)
        if not env or "SLURM_JOB_ID" not in env or name == "slurmstepd":
            continue
        try:
            if not (os.readlink(f"/proc/{pid}/cwd") + "/").startswith(ours):
                continue
        except OSError:
            continue
        job, node = env["SLURM_JOB_ID"], env.get("SLURMD_NODENAME", "?")
        if name == "tidal-launch":
            launchers.setdefault((job, node), []).append((pid, ppid))
        for g in env.get("SLURM_JOB_GPUS", "").split(","):
            if g.strip():
                gpus.setdefault((node, g.strip()), {})[job] = f"{name} {pid}"
    if ask_slurm:
        slurm_view(gpus)
    lines = []
    for (job, node), procs in launchers.items():
        # threads and forks of one launcher have a launcher as parent
        tops = [p for p, pp in procs
                if names.get(pp, ("", 0))[0] != "tidal-launch"]
        if len(tops) > 1:
            lines.append(f"twice {job} {node} pids {sorted(p for p, _ in tops)}")
    for (node, g), jobs in gpus.items():
        if len(jobs) > 1:
            seen = ", ".join(f"{j} ({w})" for j, w in sorted(jobs.items()))
            lines.append(f"shared {node} {g} jobs {seen}")
    return lines


n = 0
while not os.path.exists(stop):
    found = sample(n % 3 == 0)
    n += 1
    if found:
        with open(out, "a") as f:
            for line in found:
                f.write(time.strftime("%H:%M:%S ") + line + "\n")
    time.sleep(0.3)
