#!/usr/bin/python3
"""The results of bench/suite.sh as the reports read them (bench/suite_report.py,
bench/io_report.py): the runs pooled from the results files, their medians,
the tools' names and colours, and the doc sections the reports rewrite."""
import argparse
import pathlib
import re
import statistics
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from key_values import parse_fields  # noqa: E402

MIB = 1 << 20
GIB = 1 << 30
ALLOWANCE = 64 * MIB  # extshuffle's peak RSS may exceed the budget by this much
BEGIN, END = "<!-- suite:begin -->", "<!-- suite:end -->"
CASES = ["fixed8_1g", "fixed8_8g", "text_1g", "text_4g", "fixed4k_4g"]
TOOLS = ["extshuffle", "cat_two_pass", "cat_two_pass_sync", "cat_one_pass", "cat_one_pass_sync",
         "stxxl", "terashuf", "shuf", "sort_r"]
PHASES = ["reading", "shuffling", "scattering", "writing"]
COLOURS = {"extshuffle": "tab:blue", "cat_two_pass": "tab:gray", "cat_one_pass": "silver",
           "cat_two_pass_sync": "dimgray", "cat_one_pass_sync": "darkgray",
           "stxxl": "tab:orange", "terashuf": "tab:purple", "shuf": "tab:green", "sort_r": "tab:red"}


def human(n):
    """Bytes as the suite writes sizes: 512 MiB, 8 GiB, 12.0 GiB."""
    if n >= GIB:
        return f"{n // GIB} GiB" if n % GIB == 0 else f"{n / GIB:.1f} GiB"
    return f"{n // MIB} MiB" if n % MIB == 0 else f"{n / MIB:.1f} MiB"


def tool_label(tool, memory=None):
    return {"extshuffle": "`extshuffle`",
            "cat_two_pass": "`cat in > tmp; cat tmp > out` (two-pass floor)",
            "cat_one_pass": "`cat in > out` (one pass)",
            "cat_two_pass_sync": "`cat in > tmp; cat tmp > out; sync` (durable two-pass floor)",
            "cat_one_pass_sync": "`cat in > out; sync` (durable one pass)",
            "terashuf": "terashuf (`MEMORY` = the budget)",
            "stxxl": "STXXL `random_shuffle`",
            "shuf": "`shuf in -o out`",
            "sort_r": f"`sort -R -S {memory}`" if memory and memory != "default" else "`sort -R -S` (budget)",
            }.get(tool, tool)


def short_label(tool):
    return {"extshuffle": "extshuffle", "cat_two_pass": "cat x2 (floor)", "cat_one_pass": "cat x1",
            "cat_two_pass_sync": "cat x2; sync", "cat_one_pass_sync": "cat x1; sync", "terashuf": "terashuf",
            "stxxl": "STXXL", "shuf": "shuf", "sort_r": "sort -R"}.get(tool, tool)


class Run:
    """The pooled lines of one run of the suite."""

    def __init__(self, paths):
        self.rows, self.cases, self.meta, self.errors = [], [], {}, []
        self.paths = paths
        for path in paths:
            for line in pathlib.Path(path).read_text().splitlines():
                if line.startswith("BENCH suite "):
                    self.rows.append(parse_fields(line[len("BENCH suite "):]))
                elif line.startswith("BENCH suite_case "):
                    self.cases.append(parse_fields(line[len("BENCH suite_case "):]))
                elif line.startswith("# "):
                    key, sep, value = line[2:].partition(": ")
                    if sep and re.fullmatch(r"[a-z ]+", key):
                        self.meta.setdefault(key, value)
                    elif sep and " run=" in key:
                        self.errors.append(line[2:])
        for row in self.rows:
            row.setdefault("threads", 0)
        self.quick = "quick=1" in self.meta.get("settings", "")

    def select(self, **want):
        return [r for r in self.rows if all(r.get(k) == v for k, v in want.items())]

    def group(self, **want):
        """Summary of the runs matching want: None if there are none."""
        rows = self.select(**want)
        if not rows:
            return None
        ok = [r for r in rows if r["status"] == "ok"]
        seconds = [r["seconds"] for r in ok]
        rss = [r["peak_rss_bytes"] for r in ok if r.get("peak_rss_bytes", -1) >= 0]
        checks = {r["permutation"] for r in ok}
        return {
            "rows": rows, "ok": ok, "runs": len(rows),
            "median": statistics.median(seconds) if seconds else None,
            "min": min(seconds) if seconds else None, "max": max(seconds) if seconds else None,
            "rss": max(rss) if rss else None,
            "budget": rows[0]["budget_bytes"], "memory": rows[0]["memory"], "bytes": rows[0]["bytes"],
            "status": "ok" if len(ok) == len(rows) else
                      ("failed" if not ok else f"{len(rows) - len(ok)} of {len(rows)} failed"),
            "permutation": "no" if "no" in checks else ("yes" if "yes" in checks else "unchecked"),
            "stats": {k: statistics.median([r[k] for r in ok if k in r])
                      for k in {k for r in ok for k in r if k.startswith("stats_")}
                      if all(k in r for r in ok)},
        }

    def tool(self, case, tool, **more):
        return self.group(case=case, tool=tool, **more)


def fmt_s(value):
    if value is None:
        return "-"
    return f"{value:.1f} s" if value >= 10 else (f"{value:.2f} s" if value >= 0.1 else f"{value:.3f} s")


def fmt_x(value):
    return "-" if value is None else (f"{value:.2f}x" if value < 10 else f"{value:.0f}x")


def goals_table(rows):
    lines = ["| goal | measured | target | verdict |", "|---|---|---|---|"]
    lines += [f"| {g} | {m} | {t} | {v} |" for g, m, t, v in rows]
    return "\n".join(lines)


def title_suffix(run):
    return " [quick validation run]" if run.quick else ""


def rewrite_doc(path, text, begin=BEGIN, end=END):
    """Replaces the section of path between the markers begin and end (text
    holds them) or appends it."""
    doc = pathlib.Path(path)
    old = doc.read_text() if doc.exists() else ""
    if begin in old and end in old:
        head, rest = old.split(begin, 1)
        _, tail = rest.split(end, 1)
        new = head + text + tail
    else:
        new = old.rstrip("\n") + "\n\n" + text + "\n"
    doc.write_text(new)


def report_arguments(description):
    """The arguments of the reports on the suite's results (this one and
    bench/io_report.py)."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("results", nargs="*", default=["bench/results/suite.txt"])
    parser.add_argument("--img", default="docs/img")
    parser.add_argument("--doc", default="docs/benchmarks.md")
    parser.add_argument("--no-doc", action="store_true")
    return parser.parse_args()


def phase_groups(run):
    """[(label, group)] of extshuffle runs with --stats, one per case/threads."""
    out = []
    for case in CASES + ["threads"]:
        threads_seen = sorted({r["threads"] for r in run.select(case=case, tool="extshuffle")})
        for threads in threads_seen:
            g = run.group(case=case, tool="extshuffle", threads=threads)
            if g and g["median"] and "stats_seconds" in g["stats"]:
                label = f"{case} -j {threads}" if case == "threads" else case
                out.append((label, g))
    return out
