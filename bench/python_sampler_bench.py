"""One epoch's order for one rank of 8: torch.randperm(n) and numpy's
rng.permutation(n) (what every rank of torch's DistributedSampler draws)
against extshuffle's rank slice, kept whole (Permutation(n, s)[r::8]) or
read in blocks and dropped (DistributedSampler's iteration). Each case runs
in a fresh interpreter, so that its peak RSS is its own; the table gives
wall seconds and the peak RSS above the interpreter's after its imports.

usage: PYTHONPATH=build/python /usr/bin/python3 bench/python_sampler_bench.py \
           [--sizes 1e7,1e8,1e9] [--out bench/results/python_sampler.txt]
docs/benchmarks.md, "From Python: a rank's epoch order"."""

import argparse
import json
import subprocess
import sys

CASE = r"""
import json, resource, sys, time
method, n, ranks, rank = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
import numpy as np
if method == "torch.randperm":
    import torch
    torch.set_num_threads(1)
import extshuffle
def rss():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
base = rss()
start = time.perf_counter()
if method == "torch.randperm":
    order = torch.randperm(n, generator=torch.Generator().manual_seed(1))
    samples = int(order[rank::ranks].numel())
elif method == "numpy.permutation":
    order = np.random.default_rng(1).permutation(n)
    samples = order[rank::ranks].size
elif method == "extshuffle.slice":
    order = extshuffle.Permutation(n, extshuffle.epoch_seed(1, 0))[rank::ranks]
    samples = order.size
else:  # extshuffle.blocks
    sampler = extshuffle.DistributedSampler(n, ranks, rank, seed=1)
    samples = 0
    for block in sampler._blocks(0):
        samples += block.size
seconds = time.perf_counter() - start
print(json.dumps({"method": method, "n": n, "ranks": ranks, "rank": rank, "samples": samples,
                  "seconds": round(seconds, 3), "peak_rss_above_imports": rss() - base, "base_rss": base}))
"""

METHODS = ["torch.randperm", "numpy.permutation", "extshuffle.slice", "extshuffle.blocks"]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="1e7,1e8,1e9")
    parser.add_argument("--ranks", type=int, default=8)
    parser.add_argument("--rank", type=int, default=3)
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    rows = []
    for n in (int(float(s)) for s in args.sizes.split(",")):
        for method in METHODS:
            run = subprocess.run([sys.executable, "-c", CASE, method, str(n), str(args.ranks), str(args.rank)],
                                 capture_output=True, text=True)
            if run.returncode != 0:
                rows.append({"method": method, "n": n, "error": run.stderr.strip().splitlines()[-1:]})
            else:
                rows.append(json.loads(run.stdout))
            print(json.dumps(rows[-1]), flush=True)
    table = ["| n | method | seconds | peak RSS above imports (MiB) |", "|---|---|---|---|"]
    for row in rows:
        if "error" in row:
            table.append(f"| {row['n']:.0e} | {row['method']} | failed: {row['error']} | |")
        else:
            table.append(f"| {row['n']:.0e} | {row['method']} | {row['seconds']:.2f} | "
                         f"{row['peak_rss_above_imports'] / 2**20:.0f} |")
    print("\n".join(table))
    if args.out:
        with open(args.out, "w") as out:
            out.write("\n".join(json.dumps(r) for r in rows) + "\n\n" + "\n".join(table) + "\n")


if __name__ == "__main__":
    main()
