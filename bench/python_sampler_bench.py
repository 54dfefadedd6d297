"""From Python: what a rank's epoch costs with extshuffle's Permutation and
DistributedSampler, side by side with torch and numpy, in one run and one
command that prints every table (docs/benchmarks.md, "From Python"):

1. A rank's epoch order (rank 3 of 8) at n = 10^7, 10^8, 10^9:
   torch.randperm(n)[r::8] and numpy's rng.permutation(n)[r::8] (what every
   rank of torch's DistributedSampler draws), against extshuffle's
   Permutation(n, s)[r::8] (the rank's samples kept as one array) and
   DistributedSampler's iteration in blocks of 2^16 (dropped as read). Each
   case in a fresh interpreter: wall and CPU seconds, peak RSS above the
   interpreter's after its imports.
2. The cost per sample inside a torch DataLoader (batch 256, a dataset
   whose record i is i) with torch's sampler and with extshuffle's, without
   and with 2 workers, and of the sampler alone.
3. The first position, and a rank's first block, at n up to 2^52; the
   longest block while a rank reads 256 blocks on (16 past 2^38, where
   reading in order descends to each block); the first block of a resume at
   the middle of the epoch.
4. Ctrl-C inside a long call: seconds from SIGINT to KeyboardInterrupt.

usage: PYTHONPATH=build/python /usr/bin/python3 bench/python_sampler_bench.py \\
           [--sizes 1e7,1e8,1e9] [--baseline-sizes 1e7,1e8] [--out bench/results/python_sampler.txt]
"""

import argparse
import json
import os
import signal
import subprocess
import sys
import time

EPOCH_CASE = r"""
import json, resource, sys, time
method, n, ranks, rank = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
import numpy as np
if method == "torch.randperm":
    import torch
import extshuffle
if method == "extshuffle.blocks":
    extshuffle.DistributedSampler  # its import (torch's, where installed) before the baseline
def rss():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
base = rss()
cpu, start = time.process_time(), time.perf_counter()
if method == "torch.randperm":
    order = torch.randperm(n, generator=torch.Generator().manual_seed(1))
    samples = int(order[rank::ranks].numel())
elif method == "numpy.permutation":
    order = np.random.default_rng(1).permutation(n)
    samples = order[rank::ranks].size
elif method == "extshuffle.slice":
    samples = extshuffle.Permutation(n, extshuffle.epoch_seed(1, 0))[rank::ranks].size
else:  # extshuffle.blocks
    sampler = extshuffle.DistributedSampler(n, ranks, rank, seed=1)
    samples = sum(block.size for block in sampler._blocks(0))
print(json.dumps({"method": method, "n": n, "samples": samples, "seconds": time.perf_counter() - start,
                  "cpu_seconds": time.process_time() - cpu, "peak_rss_above_imports": rss() - base}))
"""

LOADER_CASE = r"""
import json, sys, time, torch
from torch.utils.data import DataLoader, Dataset, DistributedSampler
import extshuffle
n, workers = int(sys.argv[1]), int(sys.argv[2])
class Records(Dataset):
    def __len__(self): return n
    def __getitem__(self, i): return i
rows = []
for name in ("torch", "extshuffle"):
    make = DistributedSampler if name == "torch" else extshuffle.DistributedSampler
    sampler = make(Records(), num_replicas=8, rank=3, seed=1)
    start = time.perf_counter()
    alone = sum(1 for _ in sampler)
    sampler_seconds = time.perf_counter() - start
    loader = DataLoader(Records(), batch_size=256, sampler=sampler, num_workers=workers)
    start = time.perf_counter()
    taken = sum(len(batch) for batch in loader)
    rows.append({"sampler": name, "workers": workers, "samples": taken, "loader_ns": (time.perf_counter() - start) / taken * 1e9,
                 "sampler_ns": sampler_seconds / alone * 1e9})
print(json.dumps(rows))
"""

LARGE_CASE = r"""
import json, sys, time
import extshuffle
n = int(eval(sys.argv[1]))
def timed(fn):  # (wall, CPU of every thread) seconds
    start, cpu = time.perf_counter(), time.process_time(); fn()
    return (time.perf_counter() - start, time.process_time() - cpu)
row = {"n": sys.argv[1]}
row["first"] = timed(lambda: extshuffle.Permutation(n, 1)[0])
row["last"] = timed(lambda: extshuffle.Permutation(n, 1)[-1])
sampler = extshuffle.DistributedSampler(n, 8, 3, seed=1)
blocks = sampler._blocks(0)
row["first_block"] = timed(lambda: next(blocks))
row["longest_block"] = max(timed(lambda: next(blocks)) for _ in range(int(sys.argv[2])))
if n <= 2**38:  # a resume at the middle: the middle bucket's column from nothing (a walk)
    resumed = extshuffle.DistributedSampler(n, 8, 3, seed=1)._blocks(n // 2)
    row["resume_block"] = timed(lambda: next(resumed))
print(json.dumps(row))
"""

INTERRUPT_CASE = r"""
import sys, time
import extshuffle
from extshuffle import _native
def probe():
    if not probe.fired:
        probe.fired = True
        print("busy", flush=True)
probe.fired = False
_native._set_interrupt_probe(probe)
try:
    extshuffle.Permutation(2**52, 1)[2**51:2**51 + 2**20]
except KeyboardInterrupt:
    print(time.monotonic(), flush=True)
"""


def python(program, *arguments, timeout=3600):
    run = subprocess.run([sys.executable, "-c", program, *map(str, arguments)], capture_output=True, text=True,
                         timeout=timeout)
    if run.returncode != 0:
        return {"error": (run.stderr.strip().splitlines() or ["exit %d" % run.returncode])[-1]}
    return json.loads(run.stdout.strip().splitlines()[-1])


def epoch_table(sizes, baseline_sizes, rows):
    lines = ["| n | method | wall s | CPU s | peak RSS above imports (MiB) |", "|---|---|---|---|---|"]
    for n in sizes:
        baselines = ("torch.randperm", "numpy.permutation") if n in baseline_sizes else ()
        for method in baselines + ("extshuffle.slice", "extshuffle.blocks"):
            row = python(EPOCH_CASE, method, n, 8, 3)
            rows.append(dict(row, table="epoch", method=method, n=n))
            print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
            if "error" in row:
                lines.append(f"| {n:.0e} | {method} | failed: {row['error']} | | |")
            else:
                lines.append(f"| {n:.0e} | {method} | {row['seconds']:.2f} | {row['cpu_seconds']:.2f} | "
                             f"{row['peak_rss_above_imports'] / 2**20:.0f} |")
    return lines


def loader_table(rows):
    lines = ["| sampler | workers | ns a sample in the DataLoader | ns a sample, sampler alone |", "|---|---|---|---|"]
    for workers in (0, 2):
        for row in python(LOADER_CASE, 10**7, workers):
            rows.append(dict(row, table="loader"))
            lines.append(f"| {row['sampler']} | {workers} | {row['loader_ns']:.0f} | {row['sampler_ns']:.0f} |")
    return lines


def large_table(rows):
    lines = ["Each cell: wall s / CPU s (every thread).", "",
             "| n | p[0] | p[-1] | rank's first block | longest of 256 blocks after it | resume at n/2: first block |",
             "|---|---|---|---|---|---|"]
    for n in ("2**30 + 1", "5.85e9", "2**36", "2**40", "2**52"):
        row = python(LARGE_CASE, n, 256 if n not in ("2**40", "2**52") else 16)
        rows.append(dict(row, table="large", n=n))
        print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
        if "error" in row:
            lines.append(f"| {n} | failed: {row['error']} | | | | |")
            continue
        cells = [row.get(key) for key in ("first", "last", "first_block", "longest_block", "resume_block")]
        lines.append(f"| {n} | " + " | ".join("-" if c is None else f"{c[0]:.3f} / {c[1]:.3f}" for c in cells) + " |")
    return lines


def interrupt_latency():
    child = subprocess.Popen([sys.executable, "-c", INTERRUPT_CASE], stdout=subprocess.PIPE, text=True)
    assert child.stdout.readline() == "busy\n"
    sent = time.monotonic()
    os.kill(child.pid, signal.SIGINT)
    out, _ = child.communicate(timeout=600)
    return float(out.strip()) - sent


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1e7,1e8,1e9")
    # torch's and numpy's n-sized orders at 10^9: 7 minutes and 8 GB each, too
    # much for a shared machine; they run at these sizes only (default: all).
    parser.add_argument("--baseline-sizes", default=None)
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    sizes = [int(float(s)) for s in args.sizes.split(",")]
    baseline_sizes = sizes if args.baseline_sizes is None else [int(float(s)) for s in args.baseline_sizes.split(",")]
    uptime_before = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    rows = []
    sections = [epoch_table(sizes, baseline_sizes, rows), loader_table(rows),
                large_table(rows)]
    latency = interrupt_latency()
    rows.append({"table": "interrupt", "seconds": latency})
    uptime_after = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    text = "\n\n".join("\n".join(lines) for lines in sections)
    text += f"\n\nCtrl-C: KeyboardInterrupt {latency:.3f} s after SIGINT\n"
    text += f"\nuptime before: {uptime_before}\nuptime after:  {uptime_after}\n"
    print(text)
    if args.out:
        with open(args.out, "w") as out:
            out.write("\n".join(json.dumps(r) for r in rows) + "\n\n" + text)


if __name__ == "__main__":
    main()
