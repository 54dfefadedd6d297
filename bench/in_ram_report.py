#!/usr/bin/env python3
"""Tabulates the in-RAM comparison (docs/benchmarks.md, "In RAM: held once,
overlapped"): bench/suite.sh's in_ram_fixed8, in_ram_npy512 and jsonl_heavy
cases run with the build before (extshuffle only) and the build after (every
tool), case by case in one run. Prints one Markdown table of median wall
time and peak RSS before and after at each budget, with the peers and floors
of the same run beside them, the goals of the issue, and where extshuffle's
time went (user and system seconds from GNU time, its --stats phase timers:
the driving thread's waits for reads and writes, the rest shuffling), and
draws the plot.

usage: /usr/bin/python3 bench/in_ram_report.py BEFORE AFTER [--plot PNG]"""
import statistics
import sys

from key_values import parse_fields

MIB = 1 << 20
LABELS = {
    "in_ram_fixed8": "8 B records",
    "in_ram_npy512": ".npy, 512 B rows",
    "jsonl_heavy": "JSONL lognormal",
}
TOOL_NAMES = {
    "extshuffle": "extshuffle",
    "cat_one_pass_sync": "`cat in > out; sync` (one-pass floor)",
    "cat_two_pass_sync": "`cat in > tmp; cat tmp > out; sync` (two-pass floor)",
    "stxxl": "STXXL `random_shuffle`",
    "terashuf": "terashuf",
    "shuf": "GNU `shuf`",
}


def load(path):
    """{(case, tool, memory): [fields of each ok run]}"""
    found = {}
    with open(path) as f:
        for line in f:
            if not line.startswith("BENCH suite "):
                continue
            r = parse_fields(line[len("BENCH suite "):])
            if r.get("status") != "ok" or r.get("case") not in LABELS:
                continue
            found.setdefault((r["case"], r["tool"], str(r["memory"])), []).append(r)
    return found


def med(rows, key):
    return statistics.median(r[key] for r in rows) if rows else None


def budget_text(memory, rows):
    if memory == "default":
        return f"default ({rows[0]['budget_bytes'] / 2**30:.1f} GiB)"
    return memory


def sort_key(item):
    (case, tool, memory), rows = item
    order = list(LABELS).index(case)
    budget = rows[0]["budget_bytes"]
    return (order, -budget, tool != "extshuffle", tool)


def main():
    args = [a for a in sys.argv[1:] if a != "--plot"]
    plot_path = None
    if "--plot" in sys.argv:
        plot_path = sys.argv[sys.argv.index("--plot") + 1]
        args.remove(plot_path)
    before, after = load(args[0]), load(args[1])
    print("| case | input | budget | tool | before: time (best) | before: peak RSS | after: time (best) "
          "| after: peak RSS | after / before | permutation |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for (case, tool, memory), rows in sorted(after.items(), key=sort_key):
        b = before.get((case, tool, memory), [])
        size = rows[0]["bytes"] / MIB
        t_b, t_a = med(b, "seconds"), med(rows, "seconds")
        rss_b, rss_a = med(b, "peak_rss_bytes"), med(rows, "peak_rss_bytes")
        perm = "yes" if all(r["permutation"] in ("yes", "unchecked") for r in rows + b) else "no"
        best_b = min((r["seconds"] for r in b), default=None)
        best_a = min(r["seconds"] for r in rows)
        print(f"| {case} | {LABELS[case]}, {size:.0f} MiB | {budget_text(memory, rows)} | {TOOL_NAMES.get(tool, tool)} "
              f"| {f'{t_b:.2f} s ({best_b:.2f})' if t_b else '-'} | {f'{rss_b / MIB:.0f} MiB' if rss_b else '-'} "
              f"| {t_a:.2f} s ({best_a:.2f}) | {rss_a / MIB:.0f} MiB | {f'{t_a / t_b:.2f}x' if t_b else '-'} | {perm} |")

    def compute_goals(best_of_runs):
        def time(results, case, tool, memory):
            rows = results.get((case, tool, memory), [])
            if not rows:
                return None
            return min(r["seconds"] for r in rows) if best_of_runs else med(rows, "seconds")

        def ratio(a, b):
            return a / b if a and b else None

        def eighth(case):
            size = next(r for (c, _, _), rows in after.items() if c == case for r in rows)["bytes"]
            return f"{size // 8 // MIB}M"

        goals = []

        def goal(what, measured_before, measured_after, target, lower_is_better=True):
            if measured_after is None:
                return
            measured_before = measured_before or 0
            met = measured_after <= target if lower_is_better else measured_after >= target
            goals.append((what, measured_before, measured_after, target, lower_is_better, met))

        floor1 = lambda c: time(after, c, "cat_one_pass_sync", "default")  # noqa: E731
        floor2 = lambda c: time(after, c, "cat_two_pass_sync", "256M")  # noqa: E731
        for c, name in (("in_ram_fixed8", "8 B records"), ("jsonl_heavy", "heavy JSONL")):
            if floor1(c):
                goal(f"{name} in RAM / one-pass floor", ratio(time(before, c, "extshuffle", "default"), floor1(c)),
                     ratio(time(after, c, "extshuffle", "default"), floor1(c)), 1.6 if c == "in_ram_fixed8" else 1.35)
            if floor2(c):
                goal(f"{name} at -S 256M / two-pass floor", ratio(time(before, c, "extshuffle", "256M"), floor2(c)),
                     ratio(time(after, c, "extshuffle", "256M"), floor2(c)), 1.25 if c == "in_ram_fixed8" else 1.2)
        t = time(after, "jsonl_heavy", "terashuf", "256M")
        if t:
            goal("heavy JSONL at -S 256M: terashuf / extshuffle", ratio(t, time(before, "jsonl_heavy", "extshuffle", "256M")),
                 ratio(t, time(after, "jsonl_heavy", "extshuffle", "256M")), 3.0, lower_is_better=False)
        for c in ("in_ram_fixed8", "in_ram_npy512"):
            s = eighth(c)
            if time(after, c, "extshuffle", s):
                goal(f"{LABELS[c]}: in RAM / streamed at -S {s} (1/8)",
                     ratio(time(before, c, "extshuffle", "default"), time(before, c, "extshuffle", s)),
                     ratio(time(after, c, "extshuffle", "default"), time(after, c, "extshuffle", s)), 1.0)
        if time(after, "jsonl_heavy", "extshuffle", "256M"):
            goal("heavy JSONL: in RAM / streamed at -S 256M (1/4)",
                 ratio(time(before, "jsonl_heavy", "extshuffle", "default"), time(before, "jsonl_heavy", "extshuffle", "256M")),
                 ratio(time(after, "jsonl_heavy", "extshuffle", "default"), time(after, "jsonl_heavy", "extshuffle", "256M")), 1.0)
        # Held once: every fixed-size run whose budget holds the input.
        for (case, tool, memory), rows in sorted(after.items(), key=sort_key):
            if case == "jsonl_heavy" or tool != "extshuffle" or rows[0]["budget_bytes"] < rows[0]["bytes"]:
                continue
            allowed = 1.1 * rows[0]["bytes"] + 64 * MIB
            b = before.get((case, tool, memory), [])
            goal(f"{LABELS[case]} at {budget_text(memory, rows)}: peak RSS / (1.1x input + 64 MiB)",
                 (med(b, "peak_rss_bytes") or 0) / allowed, med(rows, "peak_rss_bytes") / allowed, 1.0)
        return goals

    goals = compute_goals(False)
    best = compute_goals(True)
    print()
    print("| goal | before (medians) | after (medians) | after (best runs) | target | verdict (medians) "
          "| verdict (best runs) |")
    print("|---|---|---|---|---|---|---|")
    for (what, b, a, target, lower, met), (_, _, a_best, _, _, met_best) in zip(goals, best):
        sign = "<=" if lower else ">="
        print(f"| {what} | {b:.2f}x | {a:.2f}x | {a_best:.2f}x | {sign} {target:g}x | {'met' if met else 'missed'} "
              f"| {'met' if met_best else 'missed'} |")
    print()
    print("| case | budget | build | wall | user | system | reading | shuffling | writing |")
    print("|---|---|---|---|---|---|---|---|---|")
    for (case, tool, memory), rows in sorted(after.items(), key=sort_key):
        if tool != "extshuffle":
            continue
        for name, results in (("before", before), ("after", after)):
            r = results.get((case, tool, memory), [])
            if not r:
                continue
            cells = [med(r, k) if all(k in x for x in r) else None
                     for k in ("seconds", "user_seconds", "sys_seconds", "stats_seconds_reading",
                               "stats_seconds_shuffling", "stats_seconds_writing")]
            print(f"| {case} | {budget_text(memory, r)} | {name} | "
                  + " | ".join(f"{c:.2f} s" if c is not None else "-" for c in cells) + " |")
    if plot_path:
        plot(plot_path, before, after)


def plot(path, before, after):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    keys = [k for k, _ in sorted(after.items(), key=sort_key) if k[1] == "extshuffle"]
    fig, ax = plt.subplots(figsize=(10, 4.2))
    for k, key in enumerate(keys):
        for offset, results, colour, label in ((-0.2, before, "tab:grey", "before"), (0.2, after, "tab:blue", "after")):
            rows = results.get(key, [])
            if not rows:
                continue
            t, rss = med(rows, "seconds"), med(rows, "peak_rss_bytes")
            ax.bar(k + offset, t, width=0.38, color=colour, label=label if k == 0 else None)
            ax.text(k + offset, t, f"{rss / MIB:.0f}", ha="center", va="bottom", fontsize=7)
        floor = None
        case, _, memory = key
        if memory == "default":
            floor = med(after.get((case, "cat_one_pass_sync", "default"), []), "seconds")
        elif memory == "256M":
            floor = med(after.get((case, "cat_two_pass_sync", "256M"), []), "seconds")
        if floor:
            ax.hlines(floor, k - 0.42, k + 0.42, colors="black", linestyles="dashed",
                      label="durable floor" if not any(t.get_label() == "durable floor" for t in ax.lines + ax.collections) else None)
    ax.set_xticks(range(len(keys)))
    ax.set_xticklabels([f"{LABELS[c]}\n-S {m}" for c, _, m in keys], fontsize=7)
    ax.set_ylabel("wall seconds (median; cold cache, durable)")
    ax.set_title("extshuffle before and after, in RAM and streamed (numbers: peak RSS, MiB)", fontsize=9)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


if __name__ == "__main__":
    main()
