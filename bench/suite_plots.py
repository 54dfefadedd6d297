"""The plots of bench/suite_report.py: time per case, the scaling curve,
extshuffle's phases."""
import matplotlib

from suite_results import (ALLOWANCE, CASES, COLOURS, GIB, MIB, PHASES, TOOLS, human, phase_groups,  # noqa: E402
                           short_label, title_suffix)

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def scaling_points(run):
    """{bytes: {tool: group}} for 8-byte records at the scaling case's budget,
    pooled with fixed8_8g (its 8 GiB point)."""
    rows = run.select(case="scaling")
    if not rows:
        return None, {}
    memory = rows[0]["memory"]
    points = {}
    for case in ("scaling", "fixed8_8g"):
        for r in run.select(case=case, memory=memory, record_size=8, format="fixed"):
            points.setdefault(r["bytes"], {})
    for size in points:
        for tool in ("extshuffle", "cat_two_pass", "cat_one_pass"):
            for case in ("scaling", "fixed8_8g"):
                g = run.group(case=case, tool=tool, bytes=size, memory=memory)
                if g is not None:
                    points[size][tool] = g
                    break
    return memory, dict(sorted(points.items()))


def plot_cases(run, out):
    cases = [c for c in CASES if run.select(case=c)]
    if not cases:
        return False
    fig, axes = plt.subplots(2, 3, figsize=(14, 8))
    axes = axes.ravel()
    for ax, case in zip(axes, cases):
        tools = [t for t in TOOLS if run.tool(case, t)]
        groups = [run.tool(case, t) for t in tools]
        medians = [g["median"] or 0 for g in groups]
        lows = [(g["median"] - g["min"]) if g["median"] else 0 for g in groups]
        highs = [(g["max"] - g["median"]) if g["median"] else 0 for g in groups]
        ax.bar(range(len(tools)), medians, yerr=[lows, highs], capsize=3,
               color=[COLOURS[t] for t in tools])
        ax.set_xticks(range(len(tools)), [short_label(t) for t in tools], rotation=30, ha="right")
        ax.set_ylabel("wall seconds (median, min-max)")
        r = run.select(case=case)[0]
        what = "text lines" if r["format"] == "lines" else f"{r['record_size']} B records"
        memory = "default budget" if r["memory"] == "default" else f"-S {r['memory']}"
        ax.set_title(f"{human(r['bytes'])} {what}, {memory}", fontsize=10)
        if max(medians) > 20 * max(min(m for m in medians if m > 0), 1e-9):
            ax.set_yscale("log")
        ext = run.tool(case, "extshuffle")
        for i, g in enumerate(groups):
            if g["median"] is None:
                ax.text(i, 0.5, g["status"], ha="center", va="bottom", rotation=90, fontsize=8,
                        transform=ax.get_xaxis_transform())
            elif ext and ext["median"] and tools[i] != "extshuffle":
                ax.text(i, g["median"], f"{g['median'] / ext['median']:.2f}x", ha="center",
                        va="bottom", fontsize=8)
        ax.grid(True, axis="y", alpha=0.3)
    # Last panel: extshuffle's peak RSS against budget + allowance.
    ax = axes[5]
    labels, rss, limits = [], [], []
    for case in cases + ["scaling", "threads"]:
        g = run.tool(case, "extshuffle")
        ok_rss = [r["peak_rss_bytes"] for r in g["ok"] if r["peak_rss_bytes"] >= 0] if g else []
        if ok_rss:
            labels.append(case)
            rss.append(max(ok_rss) / MIB)
            limits.append((g["budget"] + ALLOWANCE) / MIB)
    if labels:
        ax.bar(range(len(labels)), rss, color="tab:blue", label="extshuffle peak RSS")
        ax.scatter(range(len(labels)), limits, marker="_", s=400, color="tab:red",
                   label="budget + 64 MiB")
        ax.set_yscale("log")
        ax.set_xticks(range(len(labels)), labels, rotation=30, ha="right")
        ax.set_ylabel("MiB")
        ax.set_title("extshuffle peak RSS (max over successful runs)", fontsize=10)
        ax.legend(fontsize=8)
        ax.grid(True, axis="y", alpha=0.3)
    for ax in axes[len(cases):5]:
        ax.axis("off")
    fig.suptitle("extshuffle and its peers, same data and budget; labels: time / extshuffle's" +
                 title_suffix(run))
    fig.tight_layout()
    fig.savefig(out, dpi=100)
    plt.close(fig)
    return True


def plot_scaling(run, out):
    memory, points = scaling_points(run)
    if not points:
        return False
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(12, 4.5))
    budget = None
    for tool, marker in (("extshuffle", "o"), ("cat_two_pass", "s"), ("cat_one_pass", "^")):
        pts = [(size, tools[tool]["median"]) for size, tools in points.items()
               if tool in tools and tools[tool]["median"]]
        if not pts:
            continue
        if tool == "extshuffle":
            budget = next(iter(points.values()))[tool]["budget"]
        xs = [p[0] / MIB for p in pts]
        a1.plot(xs, [p[1] for p in pts], marker=marker, color=COLOURS[tool], label=short_label(tool))
        a2.plot(xs, [p[1] / (p[0] / GIB) for p in pts], marker=marker, color=COLOURS[tool],
                label=short_label(tool))
    for ax in (a1, a2):
        ax.set_xscale("log", base=2)
        ax.set_xlabel("input (MiB of 8-byte records)")
        if budget:
            ax.axvline(budget / MIB, color="tab:red", linestyle=":", label=f"budget -S {memory}")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8)
    a1.set_yscale("log")
    a1.set_ylabel("wall seconds (median)")
    a2.set_ylabel("seconds per GiB")
    fig.suptitle(f"Scaling at -S {memory}: one pass while the input fits, two beyond" + title_suffix(run))
    fig.tight_layout()
    fig.savefig(out, dpi=100)
    plt.close(fig)
    return True


def plot_phases(run, out):
    groups = phase_groups(run)
    if not groups:
        return False
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(14, 4.5), gridspec_kw={"width_ratios": [3, 2]})
    colours = ["tab:cyan", "tab:blue", "tab:purple", "tab:green", "lightgray"]
    names = PHASES + ["other"]
    for ax, chosen, normalise in ((a1, groups, True),
                                  (a2, [(l, g) for l, g in groups if l.startswith("threads")], False)):
        if not chosen:
            ax.axis("off")
            continue
        bottoms = [0.0] * len(chosen)
        for name, colour in zip(names, colours):
            values = []
            for label, g in chosen:
                st = g["stats"]
                parts = [st.get(f"stats_seconds_{p}", 0.0) for p in PHASES]
                v = max(0.0, st["stats_seconds"] - sum(parts)) if name == "other" else \
                    st.get(f"stats_seconds_{name}", 0.0)
                values.append(100 * v / st["stats_seconds"] if normalise else v)
            ax.bar(range(len(chosen)), values, bottom=bottoms, color=colour, label=name)
            bottoms = [b + v for b, v in zip(bottoms, values)]
        ax.set_xticks(range(len(chosen)), [l for l, _ in chosen], rotation=30, ha="right")
        ax.grid(True, axis="y", alpha=0.3)
    a1.set_ylabel("share of extshuffle's time (%)")
    a1.set_title("where the time goes (--stats, median run)", fontsize=10)
    a1.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    a2.set_ylabel("seconds")
    a2.set_title("threads: -j 1 vs -j 2", fontsize=10)
    fig.suptitle("extshuffle --stats" + title_suffix(run))
    fig.tight_layout()
    fig.savefig(out, dpi=100)
    plt.close(fig)
    return True


# --- the doc section --------------------------------------------------------
