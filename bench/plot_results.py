#!/usr/bin/python3
"""Turns the BENCH lines saved in bench/results/ into the plots of
docs/benchmarks.md. Usage: bench/plot_results.py [RESULTS_DIR] [OUT_DIR]"""
import pathlib
import sys

import matplotlib

from key_values import parse_fields

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def bench_lines(path):
    rows = []
    for line in pathlib.Path(path).read_text().splitlines():
        if not line.startswith("BENCH "):
            continue
        _, what, fields = line.split(maxsplit=2)
        rows.append({"what": what, **parse_fields(fields)})
    return rows


def plot_shuffle(rows, out):
    fig, ax = plt.subplots(figsize=(6, 4))
    for what, threads, label in [("bijective_shuffle", 1, "bijective shuffle, 1 thread"),
                                 ("bijective_shuffle", 2, "bijective shuffle, 2 threads"),
                                 ("std_shuffle", 1, "std::shuffle (mt19937_64)")]:
        pts = sorted((r["records"], r["records_per_s"]) for r in rows
                     if r["what"] == what and r["threads"] == threads)
        ax.plot([p[0] for p in pts], [p[1] / 1e6 for p in pts], marker="o", label=label)
    ax.set_xscale("log", base=2)
    ax.set_xlabel("records (uint64)")
    ax.set_ylabel("million records / s")
    ax.set_title("In-memory shuffle throughput (CPU, 2 cores)")
    ax.grid(True, alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(out, dpi=110)


def plot_constants(plan_rows, row_rows, out):
    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    for ax, rows, key, title, scale in [
            (axes[0], plan_rows, "records_per_s", "whole plan in RAM, million records/s", 1e6),
            (axes[1], row_rows, "ns_per_record", "matrix row sampling, ns per record", 1)]:
        leaves = sorted({r["leaf_records"] for r in rows})
        fanouts = sorted({r["fanout"] for r in rows})
        grid = [[next((r[key] / scale for r in rows
                       if r["leaf_records"] == l and r["fanout"] == f), float("nan"))
                 for f in fanouts] for l in leaves]
        image = ax.imshow(grid, cmap="viridis", origin="lower")
        ax.set_xticks(range(len(fanouts)), [f"2^{int(f).bit_length() - 1}" for f in fanouts])
        ax.set_yticks(range(len(leaves)), [f"2^{int(l).bit_length() - 1}" for l in leaves])
        ax.set_xlabel("fanout F")
        ax.set_ylabel("leaf records L")
        ax.set_title(title, fontsize=10)
        for i, line in enumerate(grid):
            for j, value in enumerate(line):
                ax.text(j, i, f"{value:.2f}" if value < 10 else f"{value:.1f}", ha="center",
                        va="center", color="white", fontsize=8)
        fig.colorbar(image, ax=ax, shrink=0.8)
    fig.tight_layout()
    fig.savefig(out, dpi=110)


def main():
    results = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "bench/results")
    out = pathlib.Path(sys.argv[2] if len(sys.argv) > 2 else "docs/img")
    out.mkdir(parents=True, exist_ok=True)
    plot_shuffle(bench_lines(results / "shuffle_bench.txt"), out / "shuffle_throughput.png")
    plan = [r for r in bench_lines(results / "plan_constants.txt") if r["what"] == "plan_in_memory"]
    rows = [r for r in bench_lines(results / "hypergeometric_bench.txt") if r["what"] == "matrix_row"]
    plot_constants(plan, rows, out / "plan_constants.png")


if __name__ == "__main__":
    main()
