#!/usr/bin/env python3
"""CPU seconds per GiB, before and after, from bench/compare_builds.sh.

usage: bench/cpu_report.py [--user] BEFORE.txt AFTER.txt

--user: user seconds alone per GiB (the process's own work, without the
kernel's page zeroing and copies), in place of user + system.

Reads the BENCH lines of the two results files (A: the build before, B: the
build after with the floors and peers of the same run, TOOLS_B=all) and
prints two Markdown tables: every case, budget and tool with its wall time
and its CPU time (user + system seconds from GNU time, per GiB of input),
medians with the range of the runs; then the goals of "Half the CPU per
record" (docs/benchmarks.md): CPU per GiB of extshuffle and its wall time
against the floors of the same run. CPU time is the steadier figure on a
shared machine: other processes lengthen a run's wall time far more than
its own CPU time.
"""
import statistics
import sys
from collections import defaultdict

GIB = 1024 ** 3
FLOOR_NAMES = {
    "cat_one_pass_sync": "`cat in > out; sync` (one-pass floor)",
    "cat_two_pass_sync": "`cat in > tmp; cat tmp > out; sync` (two-pass floor)",
    "stxxl": "STXXL `random_shuffle`",
    "shuf": "GNU `shuf`",
    "terashuf": "terashuf",
    "extshuffle": "extshuffle",
}


def read(path):
    """{(case, memory, tool): [row, ...]} of the BENCH suite lines of `path`."""
    rows = defaultdict(list)
    with open(path) as f:
        for line in f:
            if not line.startswith("BENCH suite "):
                continue
            row = dict(field.split("=", 1) for field in line.split()[2:] if "=" in field)
            if row.get("status") != "ok":
                continue
            rows[(row["case"], row["memory"], row["tool"])].append(row)
    return rows


USER_ONLY = "--user" in sys.argv[1:]


def cpu_per_gib(row):
    system = 0.0 if USER_ONLY else float(row["sys_seconds"])
    return (float(row["user_seconds"]) + system) / (int(row["bytes"]) / GIB)


def summary(values, unit, digits=2):
    """median (min-max) of `values`, or '-'."""
    if not values:
        return "-"
    median = statistics.median(values)
    if len(values) == 1:
        return f"{median:.{digits}f}{unit}"
    return f"{median:.{digits}f}{unit} ({min(values):.{digits}f}-{max(values):.{digits}f})"


def median(rows, key):
    return statistics.median(key(r) for r in rows) if rows else None


def main():
    paths = [a for a in sys.argv[1:] if a != "--user"]
    if len(paths) != 2:
        sys.exit(__doc__)
    before, after = read(paths[0]), read(paths[1])
    keys = sorted(set(before) | set(after), key=lambda k: (k[0], k[1] != "default", k[1], k[2] != "extshuffle", k[2]))
    print("| case | input | budget | tool | before: wall | before: CPU s/GiB | after: wall | after: CPU s/GiB"
          " | after / before (CPU) | peak RSS before / after | runs |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for key in keys:
        a, b = before.get(key, []), after.get(key, [])
        any_row = (a or b)[0]
        size = f"{int(any_row['bytes']) / 2**20:.0f} MiB"
        ratio = "-"
        if a and b and key[2] == "extshuffle":
            ratio = f"{median(b, cpu_per_gib) / median(a, cpu_per_gib):.2f}x"
        cpu = lambda rows: summary([cpu_per_gib(r) for r in rows], "") if key[2] not in ("cat_one_pass_sync", "cat_two_pass_sync") or rows else "-"
        rss = " / ".join(f"{median(rows, lambda r: int(r['peak_rss_bytes'])) / 2**20:.0f} MiB" if rows else "-"
                         for rows in (a, b))
        print(f"| {key[0]} | {size} | {key[1]} | {FLOOR_NAMES.get(key[2], key[2])} | "
              f"{summary([float(r['seconds']) for r in a], ' s')} | {cpu(a)} | "
              f"{summary([float(r['seconds']) for r in b], ' s')} | {cpu(b)} | {ratio} | {rss} | {len(a)} / {len(b)} |")

    print()
    print("| goal | before (medians) | after (medians) | target | verdict |")
    print("|---|---|---|---|---|")

    def cpu_goal(name, case, memory, target):
        a, b = before.get((case, memory, "extshuffle")), after.get((case, memory, "extshuffle"))
        if not (a and b):
            return
        ma, mb = median(a, cpu_per_gib), median(b, cpu_per_gib)
        verdict = "met" if mb <= target else f"missed ({mb / target:.2f}x the target)"
        print(f"| {name}: CPU s/GiB | {ma:.2f} | {mb:.2f} | <= {target:.2f} | {verdict} |")

    def wall_goal(name, case, memory, floor, target):
        a, b = before.get((case, memory, "extshuffle")), after.get((case, memory, "extshuffle"))
        f = after.get((case, memory, floor))
        if not (a and b and f):
            return
        wall = lambda r: float(r["seconds"])
        fl = median(f, wall)
        ra, rb = median(a, wall) / fl, median(b, wall) / fl
        verdict = "met" if rb <= target else f"missed ({rb / target:.2f}x the target)"
        print(f"| {name} / {FLOOR_NAMES[floor].split('(')[1].rstrip(')')} ({fl:.2f} s) | {ra:.2f}x | {rb:.2f}x"
              f" | <= {target}x | {verdict} |")

    cpu_goal("8 B records in RAM", "in_ram_fixed8", "default", 3.0)
    a = before.get(("in_ram_fixed8", "256M", "extshuffle"))
    if a:
        # "Down by the same factor" as in RAM: 6.5 -> 3.0.
        cpu_goal("8 B records at -S 256M (before / 2.17)", "in_ram_fixed8", "256M", median(a, cpu_per_gib) * 3.0 / 6.5)
    cpu_goal("heavy JSONL in RAM", "jsonl_heavy", "default", 1.5)
    wall_goal("8 B records in RAM", "in_ram_fixed8", "default", "cat_one_pass_sync", 1.6)
    wall_goal("8 B records at -S 256M", "in_ram_fixed8", "256M", "cat_two_pass_sync", 1.25)
    wall_goal("heavy JSONL in RAM", "jsonl_heavy", "default", "cat_one_pass_sync", 1.35)


if __name__ == "__main__":
    main()
