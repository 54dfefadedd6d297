#!/usr/bin/env python3
"""Tabulates bench/compare_builds.sh: for each suite case, the median wall
time, peak RSS and bytes read of build A and build B, and B's time as a ratio
of A's (below 1: B is faster). Prints a Markdown table for docs/benchmarks.md.

usage: bench/compare_report.py [--plot PNG] RESULTS_A RESULTS_B [LABEL_A LABEL_B]
  --plot PNG  also draw each case's runs of A and B (wall seconds) into PNG"""
import statistics
import sys

from key_values import parse_fields


def runs(path):
    """{(case, threads): [fields of each ok extshuffle run]}"""
    found = {}
    with open(path) as f:
        for line in f:
            if not line.startswith("BENCH suite "):
                continue
            fields = parse_fields(line[len("BENCH suite "):])
            if fields.get("tool") != "extshuffle" or fields.get("status") != "ok":
                continue
            found.setdefault((fields["case"], fields["threads"]), []).append(fields)
    return found


def median(rows, key):
    return statistics.median(r[key] for r in rows)


def plot(path, a, b, label_a, label_b, keys):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 3.6))
    for k, key in enumerate(keys):
        for offset, runs_of, colour in ((-0.15, a, "tab:grey"), (0.15, b, "tab:blue")):
            seconds = [r["seconds"] / median(a[key], "seconds") for r in runs_of[key]]
            ax.scatter([k + offset] * len(seconds), seconds, color=colour, s=14)
    ax.axhline(1.0, color="black", linewidth=0.6)
    ax.set_xticks(range(len(keys)), [f"{c}\n-j {j}" for c, j in keys], fontsize=8)
    ax.set_ylabel(f"wall time / median of {label_a}")
    ax.scatter([], [], color="tab:grey", label=label_a)
    ax.scatter([], [], color="tab:blue", label=label_b)
    ax.legend(fontsize=8)
    ax.set_title("every run of each case, as a ratio of the first build's median", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main(argv):
    plot_path = None
    if len(argv) > 2 and argv[1] == "--plot":
        plot_path = argv[2]
        argv = [argv[0]] + argv[3:]
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    a, b = runs(argv[1]), runs(argv[2])
    label_a, label_b = (argv[3], argv[4]) if len(argv) >= 5 else ("A", "B")
    print(f"| case | -j | runs | {label_a} s | {label_b} s | {label_b} / {label_a} | "
          f"{label_a} peak RSS MiB | {label_b} peak RSS MiB | bytes read {label_a} / {label_b} |")
    print("|---|---|---|---|---|---|---|---|---|")
    keys = sorted(set(a) & set(b), key=lambda k: (k[0], k[1]))
    for key in keys:
        ra, rb = a[key], b[key]
        ta, tb = median(ra, "seconds"), median(rb, "seconds")
        read_a = median(ra, "stats_bytes_read") if "stats_bytes_read" in ra[0] else 0
        read_b = median(rb, "stats_bytes_read") if "stats_bytes_read" in rb[0] else 0
        print(f"| {key[0]} | {key[1]} | {len(ra)}+{len(rb)} | {ta:.2f} | {tb:.2f} | {tb / ta:.3f} | "
              f"{median(ra, 'peak_rss_bytes') / 2**20:.0f} | {median(rb, 'peak_rss_bytes') / 2**20:.0f} | "
              f"{read_a / 2**30:.2f} / {read_b / 2**30:.2f} GiB |")
    if plot_path:
        plot(plot_path, a, b, label_a, label_b, keys)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
