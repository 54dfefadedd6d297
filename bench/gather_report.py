#!/usr/bin/env python3
"""The table of docs/benchmarks.md "Prefetched gathers" from gather_bench lines.

usage: bench/gather_report.py RESULTS.txt [DISTANCE]

One row per path, record size, thread count and pages: CPU nanoseconds per
record (median of the rounds, range in brackets) of the plain gather, the
gather prefetching DISTANCE records ahead (default 32), and the routed
alternative (blocks of 256 KiB and 1 MiB), with prefetched / plain.
Only the 256-value Philox batches of the shuffle path are read.
"""
import sys
from collections import defaultdict


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    distance = sys.argv[2] if len(sys.argv) == 3 else "32"
    cells = defaultdict(dict)
    with open(sys.argv[1]) as f:
        for line in f:
            if not line.startswith("BENCH gather "):
                continue
            row = dict(field.split("=", 1) for field in line.split()[2:] if "=" in field)
            method = row["method"]
            if row["path"] == "shuffle" and not method.endswith("_b256"):
                continue
            method = method.split("_b")[0]
            if method == "prefetch" and row["prefetch"] != distance:
                continue
            key = (row["path"], int(row["record_bytes"]), int(row["threads"]), row["pages"])
            cells[key][method] = (float(row["cpu_ns_per_record"]), float(row["cpu_min"]), float(row["cpu_max"]))
    cell = lambda v: f"{v[0]:.1f} ({v[1]:.1f}-{v[2]:.1f})" if v else "-"
    print(f"| path | record | threads | pages | plain | prefetch {distance} | prefetch / plain | routed 256 KiB | routed 1 MiB |")
    print("|---|---|---|---|---|---|---|---|---|")
    for key in sorted(cells, key=lambda k: (k[0] != "shuffle", k[1], -k[2], k[3])):
        c = cells[key]
        ratio = f"{c['prefetch'][0] / c['plain'][0]:.2f}x" if "prefetch" in c and "plain" in c else "-"
        print(f"| {key[0]} | {key[1]} B | {key[2]} | {key[3]} | {cell(c.get('plain'))} | {cell(c.get('prefetch'))} | "
              f"{ratio} | {cell(c.get('routed256k'))} | {cell(c.get('routed1024k'))} |")


if __name__ == "__main__":
    main()
