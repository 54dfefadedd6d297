#!/usr/bin/python3
"""The passes extshuffle makes over the data, from the BENCH lines of
bench/suite.sh: bytes read and written per input byte (its --stats), its time
against the cached and the durable floors, the goals of the two-pass issue,
and a plot; rewrites the section of docs/benchmarks.md between
<!-- passes:begin --> and <!-- passes:end --> (appended when absent).

usage: bench/io_report.py [RESULTS ...] [--img DIR] [--doc FILE] [--no-doc]
  (the same arguments as bench/suite_report.py, whose parsing it shares)

Every figure is the median of the runs whose status is ok; ratios are taken
between medians of the same run of the suite."""
import pathlib
import sys

import matplotlib

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from suite_results import (ALLOWANCE, COLOURS, MIB, Run, fmt_s, fmt_x, goals_table, human,  # noqa: E402
                          report_arguments, rewrite_doc, short_label)

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

BEGIN, END = "<!-- passes:begin -->", "<!-- passes:end -->"
IO_LIMIT = 2.05      # bytes read (and written) per input byte, counting pass apart
IN_RAM_FACTOR = 1.15  # an in-RAM run's peak RSS per input byte (+ ALLOWANCE)


def distribution(row):
    return {"lines": "lines 20-200 B", "jsonl": "JSONL lognormal"}.get(
        row["format"], f"{row['record_size']} B records")


def budgets(run):
    """[(case, memory, bytes)] of every extshuffle group with --stats, in file
    order (the scaling case has one per input size)."""
    seen = {}
    for r in run.select(tool="extshuffle"):
        if "stats_bytes_read" in r and r["case"] != "threads":
            seen.setdefault((r["case"], r["memory"], r["bytes"]), None)
    return list(seen)


def floor(run, case, size, tool):
    """The median of a floor measured on the same input (cat takes no budget)."""
    g = run.group(case=case, tool=tool, bytes=size)
    return g["median"] if g else None


def io_rows(run):
    """One dict per (case, budget): extshuffle's medians and their ratios."""
    rows = []
    for case, memory, size in budgets(run):
        g = run.group(case=case, tool="extshuffle", memory=memory, bytes=size)
        if not g or not g["ok"]:
            continue
        r0, st = g["ok"][0], g["stats"]
        text = r0["format"] != "fixed"
        in_ram = st.get("stats_passes") == 1  # one pass: the input held in RAM
        rows.append({
            "case": case, "memory": memory, "budget": g["budget"], "bytes": size, "text": text,
            "what": distribution(r0), "seconds": g["median"], "rss": g["rss"], "in_ram": in_ram,
            "read": st.get("stats_bytes_read", 0) / size, "written": st.get("stats_bytes_written", 0) / size,
            "passes": st.get("stats_passes"),
            "cached": floor(run, case, size, "cat_one_pass" if in_ram else "cat_two_pass"),
            "durable": floor(run, case, size, "cat_one_pass_sync" if in_ram else "cat_two_pass_sync"),
            "permutation": g["permutation"]})
    return rows


def io_table(rows):
    lines = ["| case | records | size | budget | passes | read / input | written / input | time | "
             "/ cached floor | / durable floor | peak RSS | permutation |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        budget = "default" if r["memory"] == "default" else r["memory"]
        ratio = (lambda f: fmt_x(r["seconds"] / f) if f else "-")
        lines.append(f"| {r['case']} | {r['what']} | {human(r['bytes'])} | {budget} "
                     f"({human(r['budget'])}) | {r['passes']} | {r['read']:.2f}x | {r['written']:.2f}x | "
                     f"{fmt_s(r['seconds'])} | {ratio(r['cached'])} | {ratio(r['durable'])} | "
                     f"{r['rss'] / MIB:.0f} MiB | {r['permutation']} |")
    return "\n".join(lines)


def verdict_at_most(value, limit):
    return f"met ({limit / value:.2f}x margin)" if value <= limit else f"missed by {value / limit:.2f}x"


def goal_rows(run, rows):
    """(goal, measured, target, verdict) for each goal of the two-pass issue."""
    out = []
    for r in rows:
        count = 1 if r["text"] and not r["in_ram"] else 0
        where = f"{r['case']} ({human(r['bytes'])}) at {r['memory']}"
        out.append((f"{where}: bytes read / input" + (" (+1 counting pass)" if count else ""),
                    f"{r['read']:.2f}x", f"<= {IO_LIMIT + count:.2f}x", verdict_at_most(r["read"], IO_LIMIT + count)))
        out.append((f"{where}: bytes written / input", f"{r['written']:.2f}x", f"<= {IO_LIMIT:.2f}x",
                    verdict_at_most(r["written"], IO_LIMIT)))
        limit = r["budget"] + ALLOWANCE
        if r["in_ram"]:
            limit = min(limit, IN_RAM_FACTOR * r["bytes"] + ALLOWANCE)
        out.append((f"{where}: peak RSS" + (" (in RAM: 1.15x input + 64 MiB)" if r["in_ram"] else ""),
                    f"{r['rss'] / MIB:.0f} MiB", f"<= {limit / MIB:.0f} MiB", verdict_at_most(r["rss"], limit)))

    def ratio(case, memory, peer, limit, goal, faster):
        a = run.group(case=case, tool="extshuffle", memory=memory)
        b = run.group(case=case, tool=peer, memory=memory) or run.group(case=case, tool=peer)
        if not a or not b or a["median"] is None or b["median"] is None:
            out.append((goal, "-", f"{'>=' if faster else '<='} {limit}x", f"not measured ({short_label(peer)} or extshuffle absent or failed)"))
            return
        if faster:
            s = b["median"] / a["median"]
            out.append((goal, f"{s:.1f}x ({fmt_s(b['median'])} / {fmt_s(a['median'])})", f">= {limit}x",
                        f"met ({s / limit:.2f}x margin)" if s >= limit else f"missed by {limit / s:.2f}x"))
        else:
            q = a["median"] / b["median"]
            out.append((goal, f"{q:.2f}x ({fmt_s(a['median'])} / {fmt_s(b['median'])})", f"<= {limit}x",
                        verdict_at_most(q, limit)))

    ratio("jsonl_heavy", "256M", "cat_two_pass_sync", 1.4,
          "heavy JSONL at -S 256M: extshuffle / durable two-pass floor", False)
    ratio("jsonl_heavy", "256M", "terashuf", 2.5, "heavy JSONL at -S 256M: faster than terashuf", True)
    ratio("jsonl_heavy", "default", "shuf", 3, "heavy JSONL in RAM (default budget): faster than `shuf`", True)
    ratio("fixed8_1g", "default", "cat_one_pass_sync", 2,
          "1 GiB of 8 B records in RAM: extshuffle / `cat in > out; sync`", False)
    return out


def plot(run, rows, out):
    """Left: extshuffle and its floors and peers on the heavy JSONL, per budget.
    Right: bytes read and written per input byte, every case and budget."""
    if not rows:
        return False
    fig, (left, right) = plt.subplots(1, 2, figsize=(14, 5.5))
    bars, labels, colours = [], [], []
    for memory in dict.fromkeys(r["memory"] for r in run.select(case="jsonl_heavy")):
        for tool in ("extshuffle", "cat_two_pass_sync", "cat_one_pass_sync", "terashuf", "shuf"):
            g = run.group(case="jsonl_heavy", tool=tool, memory=memory)
            if g and g["median"]:
                bars.append(g["median"])
                labels.append(f"{short_label(tool)}\n{'default' if memory == 'default' else '-S ' + memory}")
                colours.append(COLOURS[tool])
    if bars:
        left.bar(range(len(bars)), bars, color=colours)
        left.set_xticks(range(len(bars)), labels, rotation=45, ha="right", fontsize=8)
        left.set_ylabel("wall seconds (median)")
        left.set_title("heavy-tailed JSONL (median 440 B, tail to 200 KB)", fontsize=10)
        left.grid(True, axis="y", alpha=0.3)
    names = [f"{r['case']}\n{r['memory']}" for r in rows]
    x = range(len(rows))
    right.bar([i - 0.2 for i in x], [r["read"] for r in rows], width=0.4, label="read / input")
    right.bar([i + 0.2 for i in x], [r["written"] for r in rows], width=0.4, label="written / input")
    right.axhline(IO_LIMIT, color="tab:red", linestyle="--", linewidth=1, label=f"{IO_LIMIT}x (goal)")
    right.axhline(IO_LIMIT + 1, color="tab:red", linestyle=":", linewidth=1, label="+1 counting pass (text)")
    right.set_xticks(list(x), names, rotation=45, ha="right", fontsize=8)
    right.set_ylabel("bytes per input byte (--stats)")
    right.set_title("bytes moved, every case and budget", fontsize=10)
    right.legend(fontsize=8)
    right.grid(True, axis="y", alpha=0.3)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return True


def section(run, args, rows, goals, figure):
    command = run.meta.get("command", "bench/suite.sh")
    parts = [BEGIN, "", "## Two passes: bytes moved and the durable floor", "",
             f"Measured by `{command}` ({run.meta.get('date', '?')}, {run.meta.get('host', '?')}, "
             f"commit {run.meta.get('commit', '?')}); tables and plot: "
             f"`/usr/bin/python3 bench/io_report.py {' '.join(args.results)}`. Bytes read and written are "
             "extshuffle's own `--stats` (input, scratch and output together), per input byte; the "
             "cached floor is `cat` without `sync` (the page cache may still hold the output when it "
             "ends), the durable floor adds `sync`, as extshuffle fsyncs its output before renaming "
             "it. Runs that fit in RAM are set against the one-pass floors, the others against the "
             "two-pass ones. The page cache is dropped before every run.", "",
             io_table(rows), "", goals_table(goals), ""]
    if figure:
        parts += [f"![time and bytes moved](img/{figure})", ""]
    parts += [END]
    return "\n".join(parts)


def main():
    args = report_arguments(__doc__.split("\n\n")[0])
    run = Run(args.results)
    rows = io_rows(run)
    if not rows:
        sys.exit(f"io_report.py: no extshuffle runs with --stats in {' '.join(args.results)}")
    goals = goal_rows(run, rows)
    print(io_table(rows) + "\n")
    print("\n".join(f"{g}: {m} (target {t}): {v}" for g, m, t, v in goals))
    if args.no_doc:
        return
    img = pathlib.Path(args.img)
    img.mkdir(parents=True, exist_ok=True)
    figure = "two_pass.png" if plot(run, rows, img / "two_pass.png") else None
    rewrite_doc(args.doc, section(run, args, rows, goals, figure), BEGIN, END)
    print(f"wrote {img / 'two_pass.png'} and the passes section of {args.doc}")


if __name__ == "__main__":
    main()
