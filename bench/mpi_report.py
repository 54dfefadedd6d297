#!/usr/bin/python3
"""Tables for docs/benchmarks.md from bench/mpi_scaling.sh's results.

usage: bench/mpi_report.py [bench/results/mpi_scaling.txt]

Each run is a "BENCH mpi series=... input=... ranks=... run=... tool=...
seconds=..." line followed by its --stats lines (RESULT, then RANK per rank
for extshuffle-mpi). The reference of an extshuffle-mpi point is extshuffle
on the same input in the same series. Times are medians over the runs of a
point; "wall" is around the whole command (mpirun's start included), "run"
the RESULT line's own seconds; a phase's time is the largest of any rank's.
"""
import re
import statistics
import sys
from collections import defaultdict

path = sys.argv[1] if len(sys.argv) > 1 else "bench/results/mpi_scaling.txt"
pairs = re.compile(r"(\w+)=([^ ]+)")

runs = []
current = None
for line in open(path):
    if line.startswith("BENCH mpi "):
        current = dict(pairs.findall(line))
        current["ranks_stats"] = []
        runs.append(current)
    elif current is not None and line.startswith("RESULT "):
        current["result"] = dict(pairs.findall(line))
    elif current is not None and line.startswith("RANK "):
        current["ranks_stats"].append(dict(pairs.findall(line)))
    elif current is not None and line.startswith("# DIFFERENT"):
        current["different"] = True


def median(values):
    return statistics.median(values) if values else float("nan")


def seconds(run, key="seconds"):
    if key == "wall":
        return float(run["seconds"])
    if key == "cpu":
        return float(run.get("cpu_seconds", "nan"))
    return float(run["result"][key])


failed = [r for r in runs if r.get("exit") != "0" or r.get("different")]
print(f"runs: {len(runs)}, failed or different from extshuffle: {len(failed)}\n")

# P = 1 under MPI against extshuffle, alternated runs.
p1 = [r for r in runs if r["series"] == "p1"]
if p1:
    single = [r for r in p1 if r["tool"] == "extshuffle"]
    mpi = [r for r in p1 if r["tool"] == "extshuffle-mpi"]
    print("| P = 1, 1 GiB of 8-byte records, -S 256M | extshuffle | extshuffle-mpi | ratio |")
    print("|---|---|---|---|")
    for key, name in (("wall", "wall seconds (median)"), ("seconds", "run seconds (median)"),
                      ("cpu", "CPU seconds, user + system (median)")):
        a, b = median([seconds(r, key) for r in single]), median([seconds(r, key) for r in mpi])
        print(f"| {name} | {a:.2f} | {b:.2f} | {b / a:.2f} |")
    paired = [seconds(m) / seconds(s) for s, m in zip(single, mpi)]
    print(f"| run seconds, each pair's ratio | | | {', '.join(f'{x:.2f}' for x in paired)} |")
    loads = [float(r.get("load", "nan")) for r in p1]
    print(f"| load average during the runs | | | {min(loads):.1f} to {max(loads):.1f} |")
    a = median([int(r["result"]["peak_rss_bytes"]) for r in single]) / 2**20
    b = median([int(r["result"]["peak_rss_bytes"]) for r in mpi]) / 2**20
    print(f"| peak RSS (MiB) | {a:.0f} | {b:.0f} | {b / a:.2f} |\n")

for series, title in (("strong", "strong scaling: 1 GiB of 8-byte records, -S 256M and -j 1 per rank"),
                      ("weak", "weak scaling: 256 MiB of 8-byte records per rank, -S 128M and -j 1 per rank"),
                      ("text", "strong scaling, text: 512 MiB of 10-50-byte lines, -S 256M and -j 1 per rank")):
    points = defaultdict(list)
    for r in runs:
        if r["series"] == series and r["tool"] == "extshuffle-mpi" and "result" in r:
            points[int(r["ranks"])].append(r)
    if not points:
        continue
    print(f"{title}\n")
    print("| P | extshuffle run s | wall s | run s | run / extshuffle | CPU s / extshuffle's | counting s | scatter s "
          "| of which exchange s | buckets s | commit s | bytes sent / lower bound | count bytes / record "
          "| largest peak RSS MiB (-S) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for p in sorted(points):
        rs = points[p]
        inputs = {r["input"] for r in rs}
        refs = [r for r in runs if r["series"] == series and r["tool"] == "extshuffle" and r["input"] in inputs
                and "result" in r]
        ref = median([seconds(r) for r in refs])
        cpu = median([seconds(r, "cpu") for r in rs]) / median([seconds(r, "cpu") for r in refs])
        run = median([seconds(r) for r in rs])
        wall = median([seconds(r, "wall") for r in rs])

        def phase(key):
            return median([max(float(k[key]) for k in r["ranks_stats"]) for r in rs])

        budget = {"strong": 256, "weak": 128, "text": 256}[series] * 2**20
        records = int(rs[0]["result"]["records"])
        data = int(rs[0]["result"]["bytes"])
        sent = median([sum(int(k["bytes_sent"]) for k in r["ranks_stats"]) for r in rs])
        counts = median([sum(int(k["count_bytes_sent"]) for k in r["ranks_stats"]) for r in rs])
        bound = data * (p - 1) / p
        ratio = f"{sent / bound:.4f}" if p > 1 else "-"
        rss = max(max(int(k["peak_rss_bytes"]) for k in r["ranks_stats"]) for r in rs) / 2**20
        print(f"| {p} | {ref:.2f} | {wall:.2f} | {run:.2f} | {run / ref:.2f} | {cpu:.2f} | {phase('seconds_counting'):.2f} "
              f"| {phase('seconds_scattering'):.2f} | {phase('seconds_exchanging'):.2f} | {phase('seconds_buckets'):.2f} "
              f"| {phase('seconds_committing'):.2f} | {ratio} | {counts / records:.5f} | {rss:.0f} ({budget // 2**20}) |")
    print()
