#!/usr/bin/python3
"""Turns the BENCH lines of bench/suite.sh into tables, the goals of the
performance issue, and plots, and rewrites the section of docs/benchmarks.md
between <!-- suite:begin --> and <!-- suite:end --> (appended when absent).

usage: bench/suite_report.py [RESULTS ...] [--img DIR] [--doc FILE] [--no-doc]
  RESULTS  results files of one run (default bench/results/suite.txt); lines
           of several files (a run and its --append additions) are pooled
  --img    where the PNGs go (default docs/img)
  --doc    the Markdown file whose suite section is rewritten
           (default docs/benchmarks.md)
  --no-doc print the tables and goals only, write no PNG and no doc

Every figure is the median of the runs whose status is ok; ratios are taken
between medians of the same run of the suite."""
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from suite_plots import plot_cases, plot_phases, plot_scaling, scaling_points  # noqa: E402
from suite_results import (ALLOWANCE, BEGIN, CASES, END, GIB, MIB, PHASES, TOOLS, Run, fmt_s, fmt_x,  # noqa: E402
                           goals_table, human, phase_groups, report_arguments, rewrite_doc, short_label,
                           title_suffix, tool_label)

# --- tables -----------------------------------------------------------------

def case_title(run, case):
    rows = run.select(case=case)
    if not rows:
        return case
    r = rows[0]
    what = {"lines": "lines of 20-200 bytes", "jsonl": "JSONL of lognormal sizes"}.get(
        r["format"], f"{r['record_size']}-byte records")
    memory = "default budget" if r["memory"] == "default" else f"`-S {r['memory']}`"
    return f"{case}: {what}, {human(r['bytes'])}, {memory} (budget {human(r['budget_bytes'])})"


def case_table(run, case):
    ext = run.tool(case, "extshuffle")
    floor = run.tool(case, "cat_two_pass")
    lines = ["| tool | runs | median wall | min - max | x two-pass floor | x extshuffle's time "
             "| peak RSS | output a permutation |",
             "|---|---|---|---|---|---|---|---|"]
    for tool in TOOLS:
        g = run.tool(case, tool)
        if g is None:
            continue
        to_floor = g["median"] / floor["median"] if g["median"] and floor and floor["median"] else None
        to_ext = g["median"] / ext["median"] if g["median"] and ext and ext["median"] else None
        runs = f"{len(g['ok'])}/{g['runs']}" + ("" if g["status"] == "ok" else f" ({g['status']})")
        rss = "-" if g["rss"] is None else f"{g['rss'] / MIB:.0f} MiB"
        span = "-" if g["min"] is None else f"{fmt_s(g['min'])[:-2]} - {fmt_s(g['max'])}"
        lines.append(f"| {tool_label(tool, g['memory'])} | {runs} | {fmt_s(g['median'])} | {span} | "
                     f"{fmt_x(to_floor)} | {fmt_x(to_ext)} | {rss} | {g['permutation']} |")
    return "\n".join(lines)


def goal_rows(run):
    """(goal, measured, target, verdict) for each goal of the issue."""
    out = []

    def median(case, tool):
        g = run.tool(case, tool)
        if g is None:
            return None, f"{short_label(tool)} not run"
        if g["median"] is None:
            return None, f"{short_label(tool)} {g['status']}"
        if g["permutation"] == "no":
            return None, f"{short_label(tool)} output not a permutation"
        return g["median"], None

    def at_most(case, tool, peer, limit, goal):
        a, why_a = median(case, tool)
        b, why_b = median(case, peer)
        if a is None or b is None:
            out.append((goal, "-", f"<= {limit}x", f"not measured ({why_a or why_b})"))
            return
        r = a / b
        verdict = f"met ({limit / r:.2f}x margin)" if r <= limit else \
                  f"missed by {r / limit:.2f}x (extshuffle must get {r / limit:.2f}x faster)"
        out.append((goal, f"{r:.2f}x ({fmt_s(a)} / {fmt_s(b)})", f"<= {limit}x", verdict))

    def at_least(case, peer, limit, goal):
        a, why_a = median(case, "extshuffle")
        b, why_b = median(case, peer)
        if a is None or b is None:
            out.append((goal, "-", f">= {limit}x", f"not measured ({why_a or why_b})"))
            return
        s = b / a
        verdict = f"met ({s / limit:.2f}x margin)" if s >= limit else \
                  f"missed by {limit / s:.2f}x (extshuffle must get {limit / s:.2f}x faster)"
        out.append((goal, f"{s:.1f}x ({fmt_s(b)} / {fmt_s(a)})", f">= {limit}x", verdict))

    def size(case):
        g = run.select(case=case)
        return human(g[0]["bytes"]) if g else {"fixed8_8g": "8 GiB", "fixed8_1g": "1 GiB",
                                               "text_1g": "1 GiB", "text_4g": "4 GiB"}.get(case, case)

    at_most("fixed8_8g", "extshuffle", "cat_two_pass", 1.25,
            f"{size('fixed8_8g')} fixed (8 B): extshuffle / two-pass floor")
    at_least("fixed8_8g", "stxxl", 3, f"{size('fixed8_8g')} fixed (8 B): faster than STXXL random_shuffle")
    at_most("fixed8_1g", "extshuffle", "cat_one_pass", 1.5,
            f"{size('fixed8_1g')} fixed (8 B), fits in memory: extshuffle / `cat in > out`")
    at_least("text_1g", "shuf", 3, f"{size('text_1g')} text: faster than `shuf`")
    at_least("text_4g", "sort_r", 20, f"{size('text_4g')} text: faster than `sort -R`")
    at_most("text_4g", "extshuffle", "cat_two_pass", 1.4,
            f"{size('text_4g')} text: extshuffle / two-pass floor")
    # Peak RSS of every successful extshuffle run, the worst per case.
    for case in dict.fromkeys(r["case"] for r in run.select(tool="extshuffle")):
        rows = run.select(case=case, tool="extshuffle")
        ok = [r for r in rows if r["status"] == "ok" and r["peak_rss_bytes"] >= 0]
        label = f"{case}: peak RSS within budget + 64 MiB"
        if not ok:
            budget = max(r["budget_bytes"] for r in rows)
            out.append((label, "-", f"<= {human(budget + ALLOWANCE)}", "not measured (extshuffle failed)"))
            continue
        # The run closest to (or furthest over) its own limit.
        worst = max(ok, key=lambda r: r["peak_rss_bytes"] - r["budget_bytes"])
        limit = worst["budget_bytes"] + ALLOWANCE
        where = f" ({human(worst['bytes'])}" + (f", -j {worst['threads']}" if case == "threads" else "") + ")"
        peak = worst["peak_rss_bytes"]
        verdict = "met" if all(r["peak_rss_bytes"] <= r["budget_bytes"] + ALLOWANCE for r in ok) else \
            f"missed by {(peak - limit) / MIB:.0f} MiB"
        out.append((label, f"{peak / MIB:.0f} MiB{where if len({r['bytes'] for r in ok}) > 1 or case == 'threads' else ''}",
                    f"<= {human(limit)}", verdict))
    return out


def scaling_table(run):
    memory, points = scaling_points(run)
    if not points:
        return None
    lines = [f"| input (8-byte records, `-S {memory}`) | extshuffle | s / GiB | disk passes | "
             "two-pass floor | one pass | x floor |", "|---|---|---|---|---|---|---|"]
    for size, tools in points.items():
        e, c2, c1 = tools.get("extshuffle"), tools.get("cat_two_pass"), tools.get("cat_one_pass")
        em = e["median"] if e else None
        per_gib = f"{em / (size / GIB):.1f}" if em else "-"
        passes = e["stats"].get("stats_passes", "-") if e else "-"
        ratio = fmt_x(em / c2["median"]) if em and c2 and c2["median"] else "-"
        lines.append(f"| {human(size)} | {fmt_s(em)} | {per_gib} | {passes} | "
                     f"{fmt_s(c2['median'] if c2 else None)} | {fmt_s(c1['median'] if c1 else None)} | {ratio} |")
    return "\n".join(lines)


def phase_table(run):
    groups = phase_groups(run)
    if not groups:
        return None
    lines = ["| extshuffle run | wall | " + " | ".join(PHASES) + " | other | passes |",
             "|---|---|" + "---|" * (len(PHASES) + 2)]
    for label, g in groups:
        st = g["stats"]
        total = st["stats_seconds"]
        parts = [st.get(f"stats_seconds_{p}", 0.0) for p in PHASES]
        other = max(0.0, total - sum(parts))
        cells = [f"{v:.1f} s ({100 * v / total:.0f}%)" for v in parts + [other]]
        lines.append(f"| {label} | {fmt_s(g['median'])} | " + " | ".join(cells) +
                     f" | {st.get('stats_passes', '-')} |")
    return "\n".join(lines)


def threads_table(run):
    one, two = run.group(case="threads", tool="extshuffle", threads=1), \
        run.group(case="threads", tool="extshuffle", threads=2)
    if not one or not two:
        return None
    speedup = one["median"] / two["median"] if one["median"] and two["median"] else None
    return ("| threads | median wall | speedup |\n|---|---|---|\n"
            f"| `-j 1` | {fmt_s(one['median'])} | 1.00x |\n"
            f"| `-j 2` | {fmt_s(two['median'])} | {fmt_x(speedup)} |")


def duration_table(run):
    if not run.cases:
        return None
    lines = ["| case | measured | estimated by suite.sh |", "|---|---|---|"]
    total = est = 0
    for c in run.cases:
        lines.append(f"| {c['case']} | {c['seconds']} s | {c['estimated_seconds']} s |")
        total += c["seconds"]
        est += c["estimated_seconds"]
    lines.append(f"| total | {total} s ({total / 60:.1f} min) | {est} s ({est / 60:.1f} min) |")
    return "\n".join(lines)


# --- plots ------------------------------------------------------------------

def section(run, args, figures, goals):
    results = " ".join(str(p) for p in args.results)
    report_cmd = f"/usr/bin/python3 bench/suite_report.py {results}"
    suite_cmd = run.meta.get("command", "bench/suite.sh")
    parts = [BEGIN, "", "## Benchmark suite: extshuffle against its peers", ""]
    if run.quick:
        parts += ["**Quick validation run** (`--quick`: every size / 16, budget 128M instead of 512M, "
                  "one run per tool), taken on a busy machine to check the suite itself: the figures "
                  "below are **not** representative and the goals are not judged by them. The full "
                  "suite (`bench/suite.sh`) replaces this section.", ""]
    parts += [f"Produced by `{suite_cmd}` (raw lines: {', '.join(f'`{p}`' for p in args.results)}), then "
              f"`{report_cmd}`, which writes the tables, plots and this section.", ""]
    for key in ("date", "host", "commit", "extshuffle", "settings", "load before", "load after"):
        if key in run.meta:
            parts.append(f"- {key}: {run.meta[key]}")
    parts += ["",
              "Method: each case generates its input once with `build/bench/generate_lines` (seed 1: "
              "random bytes, `--binary`, for fixed-size records; printable ASCII lines of uniform "
              "length 20-200 bytes, newline included, for text), then runs every tool on it in turn, round after "
              "round, dropping the page cache before each run (as root). Wall time covers the whole "
              "command; peak RSS (largest process of the tree) and CPU time come from GNU time. Every "
              "output is checked to be a permutation of the input with `build/bench/record_digest` "
              "(order-independent digest; `--lines` for text; the `cat` outputs only in the first "
              "round). Figures are medians; ratios are taken between medians of the same run. "
              "`sort` and `shuf` run with `LC_ALL=C`; `sort -R` gets the same `-S` and `-T` as "
              "extshuffle. STXXL's `random_shuffle` runs through `build/bench/stxxl_random_shuffle` "
              "(see below).", ""]
    parts += ["### Goals of the performance issue", "", goals_table(goals), ""]
    parts += ["### Cases", ""]
    for case in CASES:
        if run.select(case=case):
            parts += [f"**{case_title(run, case)}**", "", case_table(run, case), ""]
    if "cases" in figures:
        parts += [f"![suite cases](img/{figures['cases']})", "",
                  f"Command: `{suite_cmd}` then `{report_cmd}` (`docs/img/{figures['cases']}`).", ""]
    table = scaling_table(run)
    if table:
        parts += ["### Scaling with the input size", "", table, ""]
        if "scaling" in figures:
            parts += [f"![suite scaling](img/{figures['scaling']})", "",
                      f"Command: `{suite_cmd}` (cases `scaling` and `fixed8_8g`) then `{report_cmd}` "
                      f"(`docs/img/{figures['scaling']}`).", ""]
    t_threads, t_phases = threads_table(run), phase_table(run)
    if t_threads or t_phases:
        parts += ["### Threads and where the time goes", ""]
        if t_threads:
            parts += [t_threads, ""]
        if t_phases:
            parts += ["Medians of extshuffle's own `--stats` (`seconds_reading`: waiting for input "
                      "reads, `shuffling`, `scattering` into bucket buffers, `writing`; other: the "
                      "rest of its wall time).", "", t_phases, ""]
        if "phases" in figures:
            parts += [f"![suite phases](img/{figures['phases']})", "",
                      f"Command: `{suite_cmd}` then `{report_cmd}` (`docs/img/{figures['phases']}`).", ""]
    if run.errors:
        parts += ["### Failed runs", ""] + [f"- `{e}`" for e in dict.fromkeys(run.errors)] + [""]
    table = duration_table(run)
    parts += ["### Duration and repeats", ""]
    if table:
        parts += [table, ""]
    parts += [
        "`bench/suite.sh` prints its estimate at the start (`--estimate` prints it and stops); the "
        "model's seconds per GiB are in the script (quiet machine). Every tool runs `REPEATS=3` times "
        "in every case, with three exceptions that keep the full suite near 40 minutes (estimated "
        "38): the two slowest peers run `SLOW_REPEATS=1` time, `sort -R` (it hashes both lines with "
        "MD5 at every comparison: about 200 CPU seconds per GiB measured here, some 12 minutes of "
        "wall time estimated for the 4 GiB text case alone) and STXXL on 8 GiB (2-3.5 minutes a "
        "run); and the scaling case runs each size "
        "`SCALING_REPEATS=1` time (its points check each other, and its 8 GiB point is the "
        "`fixed8_8g` case's median). `SLOW_REPEATS=3 SCALING_REPEATS=3` gives every figure three "
        "runs in about 75 minutes. Cases can be run apart and pooled: "
        "`bench/suite.sh --cases text_4g --append` adds to the results file.", "",
        "### Notes on the peers", "",
        "- **STXXL `random_shuffle`** (1.4.1, Debian; its banner calls the build "
        "`prerelease/Debug`) shuffles an `stxxl::vector` in place, so the driver first copies the "
        "input into the output file (one pass, as `cat in > out`; its RESULT line reports it as "
        "`seconds_copy`), maps it as a file-backed vector and shuffles it: it moves the data three "
        "times where extshuffle moves it twice. Its memory parameter M does not bound its memory: "
        "M covers k = M / 6 MiB bucket stacks of 2 MiB blocks, but each bucket is then shuffled in "
        "RAM out of place by libstdc++'s parallel mode (about 2.25 x the bucket for 8-byte "
        "records), and glibc keeps its freed write buffers resident unless the mmap threshold is "
        "fixed. Nor does more memory help it: k grows with M whatever the input size (\"TODO: "
        "shuffle small input in internal memory\" in its source); 1 GiB with M = 12 GiB (the "
        "default budget) made 2004 buckets and took 110 s, against 14 s with M = 116 MiB (busy machine). The "
        "driver therefore fixes the mmap threshold at 1 MiB and passes the smallest M whose "
        "buckets fit in RAM (no recursion) and whose predicted peak (M / 3 + 2.25 x bucket, or M, "
        "plus 24 MiB) fits the budget: STXXL at its best within the same budget as extshuffle. "
        "M, k and the prediction are on its RESULT line (`stats_memory_param_bytes`, "
        "`stats_buckets`, `stats_predicted_peak_bytes`); `STXXL_SHUFFLE_M=BYTES` forces M. Its "
        "scratch disk is configured in code (syscall, no O_DIRECT, like extshuffle's, under the "
        "same `-T` directory); its logs go to /dev/null. Its output depends on M and the thread "
        "count.",
        "- **`shuf`** reads everything into memory: it runs only where the input fits (1 GiB text).",
        "- **`sort -R`** sorts by a keyed hash of each line: a shuffle only up to duplicate lines, "
        "which it keeps together.", "",
        END]
    return "\n".join(parts)


def main():
    args = report_arguments(__doc__.split("\n\n")[0])
    run = Run(args.results)
    if not run.rows:
        sys.exit(f"suite_report.py: no 'BENCH suite' lines in {' '.join(args.results)}")

    goals = goal_rows(run)
    print("Goals of the performance issue" + title_suffix(run) + "\n")
    print(goals_table(goals) + "\n")
    for case in CASES:
        if run.select(case=case):
            print(case_title(run, case) + "\n\n" + case_table(run, case) + "\n")
    for table in (scaling_table(run), threads_table(run), phase_table(run), duration_table(run)):
        if table:
            print(table + "\n")
    if args.no_doc:
        return
    img = pathlib.Path(args.img)
    img.mkdir(parents=True, exist_ok=True)
    figures = {}
    for name, plot in (("cases", plot_cases), ("scaling", plot_scaling), ("phases", plot_phases)):
        if plot(run, img / f"suite_{name}.png"):
            figures[name] = f"suite_{name}.png"
    rewrite_doc(args.doc, section(run, args, figures, goals))
    print(f"wrote {', '.join(str(img / f) for f in figures.values())} and the suite section of {args.doc}")


if __name__ == "__main__":
    main()
