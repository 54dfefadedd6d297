#!/usr/bin/python3
"""Tables and the throughput plot of docs/benchmarks.md's GPU section, from
the raw results that gpu_check.sh (in the bundle) writes on a GPU machine:
cuda_shuffle_bench.txt, cli_bench.txt, summary.txt. Every row names the
device it was measured on; goals are checked as ratios within the run.
Usage: bench/cuda_report.py RESULTS_DIR [PLOT.png]   (markdown on stdout)"""
import pathlib
import statistics
import sys

import matplotlib

from key_values import parse_fields

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def lines(path):
    rows = []
    if path.exists():
        for line in path.read_text().splitlines():
            if line.startswith("BENCH "):
                _, what, fields = line.split(maxsplit=2)
                rows.append({"what": what, **parse_fields(fields)})
    return rows


def pick(rows, what, **match):
    return [r for r in rows if r["what"] == what and all(r.get(k) == v for k, v in match.items())]


def rate(rows, what, **match):
    found = pick(rows, what, **match)
    return found[0]["items_per_s"] if found else None


def size_name(n):
    k = n.bit_length() - 1
    return f"2^{k}" if n == 1 << k else f"2^{k} + {n - (1 << k)}"


def fmt(x, unit=1e6, suffix=" M/s"):
    return "n/a" if x is None else f"{x / unit:.1f}{suffix}"


def ratio(a, b):
    return "n/a" if a is None or b is None else f"{a / b:.2f}"


def table(columns, body):
    """Markdown lines of a table: a header of `columns`, one row per list of cells."""
    return ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)] + \
           ["| " + " | ".join(str(c) for c in cells) + " |" for cells in body]


def kernels_table(rows):
    body = []
    for n in sorted({r["records"] for r in pick(rows, "shuffle_single")}):
        single = rate(rows, "shuffle_single", records=n)
        gather = rate(rows, "random_gather", records=n)
        thrust = rate(rows, "thrust_shuffle_copy", records=n)
        copy = pick(rows, "device_copy", records=n)
        body.append([pick(rows, "shuffle_single", records=n)[0]["device"], size_name(n),
                     fmt(copy[0]["bytes_per_s"], 1e9, " GB/s") if copy else "n/a", fmt(gather), fmt(thrust),
                     fmt(single), ratio(single, gather), ratio(single, thrust)])
    return table(["device", "records (uint64)", "device copy", "random gather", "thrust::shuffle_copy",
                  "single-pass kernel", "kernel / gather", "kernel / thrust"], body)


def shapes_table(rows):
    body = []
    for r in pick(rows, "shape_tiles"):
        batch = rate(rows, "shape_batch", shape=r["shape"], jobs=r["jobs"], job_records=r["job_records"])
        faster = "n/a" if batch is None else ("tiles" if r["items_per_s"] >= batch else "batched")
        body.append([r["device"], r["shape"], f"{r['jobs']} x {r['job_records']}", fmt(r["items_per_s"]),
                     fmt(batch), faster])
    return table(["device", "shape", "jobs x records", "single-pass (tiles)", "batched", "faster"], body)


def pipeline_table(rows):
    pcie = {r["what"]: r["bytes_per_s"] for r in rows if r["what"].startswith("pcie_")}
    one_way = min(pcie.get("pcie_h2d_pinned", float("inf")), pcie.get("pcie_d2h_pinned", float("inf")))
    body = [[r["device"], r["what"][9:], r["slot"], r["unit"], fmt(r["bytes_per_s"], 1e9, " GB/s"),
             ratio(r["bytes_per_s"], one_way)] for r in rows if r["what"].startswith("pipeline_")]
    return ["Pinned PCIe: " + ", ".join(f"{k[5:]} {v / 1e9:.1f} GB/s" for k, v in pcie.items()), ""] + \
        table(["device", "buffers", "slot", "unit", "host to host", "/ one PCIe direction"], body)


def node_table(rows):
    body = []
    for r in pick(rows, "node_gpu"):
        cpu = pick(rows, "node_cpu", records=r["records"])
        cpu_rate = cpu[0]["items_per_s"] if cpu else None
        body.append([r["device"], size_name(r["records"]), r["levels"], fmt(r["items_per_s"]),
                     f"{fmt(cpu_rate)} ({cpu[0]['threads'] if cpu else '?'})", ratio(r["items_per_s"], cpu_rate)])
    return table(["device", "node records (uint64)", "levels", "GPU node", "CPU node (threads)", "GPU / CPU"], body)


def cli_table(rows):
    cpu = [r["seconds"] for r in pick(rows, "cli_fixed8", device_flag="cpu")]
    gpu = [r["seconds"] for r in pick(rows, "cli_fixed8", device_flag="cuda")]
    body = []
    if cpu and gpu:
        r = rows[0]
        c, g = statistics.median(cpu), statistics.median(gpu)
        body.append([r["device"], f"{r['gib']} GiB of 8-byte records", r["memory"], f"{c:.2f}", f"{g:.2f}",
                     f"{c / g:.2f}"])
    return table(["device", "input", "-S", "--device cpu (median s)", "--device cuda (median s)", "cpu / cuda"], body)


def plot(rows, path):
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for what, label in [("random_gather", "random 8-byte gather (ceiling)"),
                        ("thrust_shuffle_copy", "thrust::shuffle_copy"),
                        ("shuffle_single", "single-pass kernel (ours)")]:
        pts = sorted((r["records"], r["items_per_s"]) for r in pick(rows, what))
        if pts:
            ax.plot([p[0] for p in pts], [p[1] / 1e9 for p in pts], marker="o", ms=3, label=label)
    devices = sorted({r["device"] for r in rows if "device" in r})
    ax.set_xscale("log", base=2)
    ax.set_xlabel("records (uint64)")
    ax.set_ylabel("G records/s")
    ax.set_title("GPU shuffle throughput, " + ", ".join(devices))
    ax.grid(True, alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    results = pathlib.Path(sys.argv[1])
    rows = lines(results / "cuda_shuffle_bench.txt")
    cli = lines(results / "cli_bench.txt")
    sections = [("Kernels", kernels_table(rows)), ("Production shapes", shapes_table(rows)),
                ("Host to host", pipeline_table(rows)), ("Whole nodes", node_table(rows)), ("CLI", cli_table(cli))]
    summary = results / "summary.txt"
    if summary.exists():
        print("Steps of gpu_check.sh:\n\n```\n" + summary.read_text().strip() + "\n```\n")
    for title, table in sections:
        print(f"#### {title}\n\n" + "\n".join(table) + "\n")
    if len(sys.argv) == 3:
        plot(rows, sys.argv[2])


if __name__ == "__main__":
    main()
