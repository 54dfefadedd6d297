#!/usr/bin/python3
"""Turns the permlab output under bench/quality/data/ (written by run_all.sh)
into the plots under bench/quality/plots/ and writes docs/quality.md from the
template bench/quality/quality.md.in.

Template markers (each on a line of its own, or inline for VALUE):
  @@TABLE name@@        a markdown table built by one of the table_* functions
  @@COMMANDS file@@     the exact permlab commands recorded in data/file
  @@VALUE name@@        one number (see values())

Usage: /usr/bin/python3 bench/quality/make_report.py
"""
import math
import os
import re
import sys

import matplotlib

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from key_values import parse_fields  # noqa: E402  (bench/key_values.py)

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
DATA = os.path.join(ROOT, "bench", "quality", "data")
PLOTS = os.path.join(ROOT, "bench", "quality", "plots")
TEMPLATE = os.path.join(ROOT, "bench", "quality", "quality.md.in")
OUTPUT = os.path.join(ROOT, "docs", "quality.md")


def parse(name):
    """LAB lines of a data file as dicts (numbers converted), each with the
    command that printed it under 'cmd'."""
    path = os.path.join(DATA, name)
    if not os.path.exists(path):
        return []
    results, cmd = [], None
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("CMD "):
                cmd = line[4:]
            elif line.startswith("LAB "):
                results.append({"cmd": cmd, **parse_fields(line[4:])})
    return results


def commands(name):
    path = os.path.join(DATA, name)
    if not os.path.exists(path):
        return ["(no data: run bench/quality/run_all.sh)"]
    with open(path) as f:
        return ["build/" + line[4:].rstrip("\n") for line in f if line.startswith("CMD ")]


def g(x, digits=4):
    """A number for a table: significant digits, small p-values in e-notation."""
    if isinstance(x, str):
        return x
    if x == 0:
        return "0"
    if abs(x) < 1e-3 or abs(x) >= 1e7:
        return f"{x:.{digits - 1}e}"
    return f"{x:.{digits}g}"


def verdict(flag):
    return "pass" if flag else "**FAIL**"


def table(header, rows):
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    out += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(out)


def matrix_text(values, n, digits=4):
    rows = []
    for i in range(n):
        rows.append("[" + " ".join(f"{values[i * n + j]:.{digits}f}" for j in range(n)) + "]")
    return "\n".join(rows)


def matrix_of(d):
    return [float(v) for v in str(d["matrix"]).split(",")]


# ---------------------------------------------------------------- tables


def table_chi2_rounds():
    current = {d["rounds"]: d for d in parse("chi2_rounds.txt")}
    old = {d["rounds"]: d for d in parse("chi2_rounds_domain4.txt")}
    rows = []
    for r in sorted(set(current) | set(old)):
        row = [r]
        for d in (current.get(r), old.get(r)):
            row += [g(d["statistic"], 6), g(d["p_value"]), d["orders_seen"], verdict(d["pass"])] if d else ["", "", "", ""]
        rows.append(row)
    domain = next(iter(current.values()))["domain_bits"] if current else "?"
    return table(["rounds", f"2^{domain}: chi2 (119 dof)", "p", "orders", "alpha = 0.01",
                  "2^4: chi2", "p", "orders", "alpha = 0.01"], rows)


def table_chi2_deep():
    rows = []
    for d in parse("chi2_deep.txt"):
        if d["test"] == "chi2":
            route = "inverse" if d["cmd"] and "--domain-bits" in d["cmd"] else "shuffle_records"
            what = f"n = {d['n']}" + (f", records 0..{d['pattern_records'] - 1}" if d["pattern_records"] != d["n"] else "")
            rows.append([f"2^{d['domain_bits']}", d["rounds"], what, route, d["seed"], g(d["statistic"], 6),
                         g(d["p_value"]), verdict(d["pass"])])
    return table(["domain", "rounds", "test (chi2, 10^7 samples)", "route", "seed", "statistic (119 dof)", "p",
                  "alpha = 0.01"], rows)


def table_chi2_deeper():
    rows = []
    for d in parse("chi2_deeper.txt"):
        if d["test"] != "chi2":
            continue
        excess = d["statistic"] - d["dof"]
        # rms deviation of the K = k! order probabilities relative to 1/K:
        # E[statistic] - dof ~ S K sum_i (p_i - 1/K)^2, so rms / (1/K) =
        # sqrt((statistic - dof) / S). An estimate: the statistic has sd ~ sqrt(2 dof).
        # Only meaningful where the test rejects; elsewhere the excess is noise.
        rms = f"{100 * math.sqrt(excess / d['samples']):.2f}%" if not d["pass"] else "(not significant)"
        rows.append([f"2^{d['domain_bits']}", d["rounds"], d["samples"], g(d["statistic"], 6), g(d["p_value"]), rms,
                     verdict(d["pass"])])
    return table(["domain", "rounds", "samples", "chi2 (119 dof)", "p", "rms deviation / (1/120), estimated", "alpha = 0.01"],
                 rows)


def table_position_deep():
    rows = []
    for d in parse("chi2_deep.txt") + parse("chi2_deeper.txt"):
        if d["test"] == "position":
            route = "inverse" if d["cmd"] and "--domain-bits" in d["cmd"] else "shuffle_records"
            rows.append([d["n"], f"2^{d['domain_bits']}", route, d["rounds"], d["seed"], g(d["samples"], 2), g(d["bias"]),
                         f"{g(d['expected_bias'])} +- {g(d['bias_sd'], 2)}",
                         g(d["bias_z"], 3), g(d["p_value"]), g(d["worst_row_p_value"]), verdict(d["pass"])])
    return table(["n", "domain", "route", "rounds", "seed", "samples", "B(M_n)", "uniform B at this S", "z", "chi2 p",
                  "worst row p", "verdict"], rows)


def table_mmd():
    rows = []
    for d in parse("mmd.txt"):
        gen = d["generator"] + (f" {d['rounds']} rounds" if d["generator"] == "bijective" else "")
        rows.append([d["n"], gen, d["samples"], g(d["statistic"]), g(d["hoeffding_threshold"]), verdict(d["pass_hoeffding"]),
                     g(d["clt_threshold"]), g(d["z"], 3), verdict(d["pass_clt"]), g(d["identity_statistic"]),
                     verdict(d["pass_identity_clt"])])
    return table(["n", "generator", "m", "MMD^2 (paired)", "Hoeffding thr.", "", "CLT thr.", "z", "",
                  "T1 (first version)", "T1 CLT"], rows)


def table_mmd_rounds():
    by = {}
    for d in parse("mmd_rounds.txt"):
        by.setdefault(d["rounds"], {})[d["n"]] = d
    rows = []
    for r in sorted(by):
        row = [r]
        for n in (5, 100):
            d = by[r].get(n)
            row += [f"{g(d['statistic'])} (z {g(d['z'], 3)})", verdict(d["pass_clt"])] if d else ["", ""]
        rows.append(row)
    return table(["rounds", "n = 5: MMD^2", "CLT", "n = 100: MMD^2", "CLT"], rows)


def table_butterfly_bias():
    by = {}
    for d in parse("butterfly_exact.txt"):
        if d["test"] == "butterfly_bias":
            by.setdefault((d["variant"], d["n"]), {})[d["iterations"]] = d["bias"]
    rows = [[v, n] + [g(by[(v, n)].get(k, float("nan")), 4) for k in range(1, 7)] for (v, n) in sorted(by)]
    return table(["variant", "n"] + [f"B(M^{k})" for k in range(1, 7)], rows)


def table_butterfly_sampled():
    rows = []
    for d in parse("butterfly_sampled.txt"):
        if d["test"] == "position":
            rows.append([d["variant"], d["iterations"], d["n"], d["samples"], g(d["bias"]),
                         f"{g(d['expected_bias'])} +- {g(d['bias_sd'], 2)}", g(d["bias_z"], 3), g(d["p_value"]),
                         verdict(d["pass"])])
    return table(["variant", "passes", "n", "samples", "sampled B", "uniform B at this S", "z", "chi2 p", "verdict"], rows)


def table_butterfly_mmd():
    rows = []
    for d in parse("butterfly_sampled.txt"):
        if d["test"] == "mmd":
            rows.append([d["variant"], d["iterations"], d["n"], d["samples"], g(d["statistic"]), g(d["clt_threshold"]),
                         g(d["z"], 3), verdict(d["pass_clt"])])
    return table(["variant", "passes", "n", "m", "MMD^2", "CLT thr.", "z", "CLT"], rows)


def table_butterfly_shift():
    rows = []
    sweeps = {}
    for d in parse("butterfly_shift.txt"):
        if d["test"] == "butterfly_shift":
            sweeps.setdefault((d["variant"], d["n"]), {})[d["shift"]] = d["bias"]
        elif d["test"] == "butterfly_best_shift":
            key = (d["variant"], d["n"])
            worst = max(sweeps[key].items(), key=lambda kv: kv[1])
            rows.append([d["variant"], d["n"], d["iterations"], g(d["unshifted_bias"]), d["shift"], g(d["bias"]),
                         f"{100 * d['bias'] / d['unshifted_bias']:.2f}%", worst[0],
                         f"{worst[1] / d['unshifted_bias']:.2f}x"])
    return table(["variant", "n", "passes", "B, no shift", "best offset", "B there", "of unshifted", "worst offset",
                  "B there / unshifted"], rows)


def table_plan():
    rows = []
    for d in parse("plan.txt"):
        gen = f"{d['generator']} L={d['leaf_records']} F={d['fanout']}" if d["generator"] == "plan" else "bijective only"
        if d["test"] == "chi2":
            what = "all orders" if d["pattern_records"] == d["n"] else f"order of records 0, {d['stride']}, .., {(d['pattern_records'] - 1) * d['stride']}"
            rows.append(["chi2", gen, d["n"], d["samples"], what, f"chi2 {g(d['statistic'], 5)} ({d['dof']} dof)",
                         f"p {g(d['p_value'])}", verdict(d["pass"])])
        elif d["test"] == "mmd":
            rows.append(["mmd", gen, d["n"], d["samples"], "Mallows, lambda 5", f"MMD^2 {g(d['statistic'])} (CLT thr. {g(d['clt_threshold'])})",
                         f"z {g(d['z'], 3)}", verdict(d["pass_clt"])])
        elif d["test"] == "position":
            rows.append(["position", gen, d["n"], d["samples"], f"B {g(d['bias'])} vs uniform {g(d['expected_bias'])} +- {g(d['bias_sd'], 2)}",
                         f"z {g(d['bias_z'], 3)}; chi2 {g(d['chi2'], 7)} ({d['dof']} dof)", f"p {g(d['p_value'])}; worst row p {g(d['worst_row_p_value'])}",
                         verdict(d["pass"])])
    return table(["test", "generator", "n", "samples", "what", "statistic", "p / z", "verdict"], rows)


def table_cli():
    rows = []
    for d in parse("cli.txt"):
        how = f"L={d['leaf_records']} F={d['fanout']}, {d['record_size']}-byte records, -S {d['memory']}"
        if d["test"] == "chi2":
            rows.append(["chi2", how, d["n"], d["samples"], f"chi2 {g(d['statistic'], 5)} ({d['dof']} dof)", f"p {g(d['p_value'])}",
                         verdict(d["pass"])])
        elif d["test"] == "position":
            rows.append(["position", how, d["n"], d["samples"],
                         f"B {g(d['bias'])} vs uniform {g(d['expected_bias'])} +- {g(d['bias_sd'], 2)} (z {g(d['bias_z'], 3)})",
                         f"chi2 p {g(d['p_value'])}; worst row p {g(d['worst_row_p_value'])}", verdict(d["pass"])])
        elif d["test"] == "adjacency":
            rows.append(["adjacency", how, d["n"], d["samples"],
                         f"{d['successions']} / {d['reversals']} vs {g(d['expected'], 6)} +- {g(d['sd'], 3)}",
                         f"p {g(d['p_value'])}", verdict(d["pass"])])
    return table(["test", "extshuffle run", "n", "seeds", "statistic", "p", "verdict"], rows)


def table_adjacency():
    rows = []
    for d in parse("adjacency.txt"):
        gen = d["generator"]
        if gen == "bijective":
            gen += f" {d['rounds']} rounds"
        elif gen == "plan":
            gen += f" L={d['leaf_records']} F={d['fanout']}"
        elif gen == "butterfly":
            gen += f" {d['variant']}, {d['iterations']} pass"
        rows.append([gen, d["n"], d["samples"], d["successions"], d["reversals"], f"{g(d['expected'], 6)} +- {g(d['sd'], 3)}",
                     g(d["z_successions"], 3), g(d["z_reversals"], 3), g(d["p_value"]), verdict(d["pass"])])
    return table(["generator", "n", "samples", "successions", "reversals", "uniform", "z succ.", "z rev.", "p", "verdict"], rows)


def table_timings():
    last = {}
    path = os.path.join(DATA, "timings.txt")
    if os.path.exists(path):
        for line in open(path):
            m = re.match(r"SECTION (\S+) seconds=(\d+)", line)
            if m:
                last[m.group(1)] = int(m.group(2))
    rows = [[k, v] for k, v in last.items()]
    rows.append(["total", sum(last.values())])
    return table(["section of run_all.sh", "seconds"], rows)


TABLES = {name[len("table_"):]: fn for name, fn in globals().items() if name.startswith("table_")}


def butterfly_matrices():
    out = {}
    for d in parse("butterfly_exact.txt"):
        if d["test"] == "butterfly_matrix":
            out[(d["variant"], d["n"])] = matrix_of(d)
    return out


def values():
    v = {}
    m = butterfly_matrices()
    for (variant, n), values_ in m.items():
        v[f"matrix_{variant}_{n}"] = matrix_text(values_, n)
    for d in parse("chi2_rounds.txt"):
        v[f"chi2_rounds_{d['rounds']}"] = g(d["statistic"], 5)
    for d in parse("butterfly_shift.txt"):
        if d["test"] == "butterfly_shift" and (d["n"], d["shift"]) in ((304, 229), (400, 112), (304, 228)):
            v[f"shift_{d['n']}_{d['shift']}"] = g(d["bias"])
    return v


# ---------------------------------------------------------------- plots


def plot_chi2_rounds():
    rs = parse("chi2_rounds.txt")
    old = parse("chi2_rounds_domain4.txt")
    if not rs:
        return
    deep = [d for d in parse("chi2_deep.txt") if d["test"] == "chi2" and d["n"] == 5 and d["seed"] == 7]
    fig, ax = plt.subplots(figsize=(7.5, 4.4))
    ax.semilogy([d["rounds"] for d in rs], [d["statistic"] for d in rs], "o-",
                label=f"10^6 permutations, project's domain 2^{rs[0]['domain_bits']}")
    if old:
        ax.semilogy([d["rounds"] for d in old], [d["statistic"] for d in old], ".--", color="gray",
                    label="10^6 permutations, domain 2^4 (before 756127a)")
    for bits, marker in ((4, "s"), (5, "^"), (6, "v")):
        pts = [d for d in deep if d["domain_bits"] == bits and d["rounds"] in (20, 24, 28, 32)]
        if pts:
            ax.semilogy([d["rounds"] for d in pts], [d["statistic"] for d in pts], marker, mfc="none",
                        label=f"10^7 permutations, domain 2^{bits}")
    ax.axhline(rs[0]["critical_value"], color="red", ls="--", label="alpha = 0.01 threshold (157.8)")
    ax.axvline(24, color="gray", ls=":", lw=1)
    ax.set_xlabel("VariablePhilox rounds")
    ax.set_ylabel("chi-square statistic (119 dof)")
    ax.set_title("n = 5, all 120 orders (Mitchell et al. Fig. 6)")
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(os.path.join(PLOTS, "chi2_rounds.png"), dpi=110)
    plt.close(fig)


def plot_mmd_rounds():
    rs = parse("mmd_rounds.txt")
    if not rs:
        return
    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    for ax, n in zip(axes, (5, 100)):
        pts = [d for d in rs if d["n"] == n]
        ax.semilogy([d["rounds"] for d in pts], [max(abs(d["statistic"]), 1e-9) for d in pts], "o-", label="|MMD^2| (paired)")
        ax.axhline(pts[0]["clt_threshold"], color="red", ls="--", label="CLT threshold, alpha 0.01")
        ax.axhline(pts[0]["hoeffding_threshold"], color="orange", ls="-.", label="Hoeffding threshold, alpha 0.01")
        ax.set_title(f"n = {n}, m = {pts[0]['samples']}")
        ax.set_xlabel("VariablePhilox rounds")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    axes[0].set_ylabel("|MMD^2|")
    fig.tight_layout()
    fig.savefig(os.path.join(PLOTS, "mmd_rounds.png"), dpi=110)
    plt.close(fig)


def plot_butterfly_matrices():
    m = butterfly_matrices()
    keys = [k for k in (("padded", 3), ("padded", 5), ("omitted", 3), ("omitted", 5)) if k in m]
    if not keys:
        return
    fig, axes = plt.subplots(1, len(keys), figsize=(3.4 * len(keys), 3.6), constrained_layout=True)
    for index, (ax, (variant, n)) in enumerate(zip(axes, keys)):
        values_ = m[(variant, n)]
        grid = [[values_[i * n + j] for j in range(n)] for i in range(n)]
        # Colour = M(i, j) * n: 1 (white) is uniform, per panel comparable across n.
        im = ax.imshow([[v * n for v in row] for row in grid], cmap="RdBu_r", vmin=0, vmax=2)
        for i in range(n):
            for j in range(n):
                ax.text(j, i, f"{grid[i][j]:.3f}", ha="center", va="center", fontsize=7)
        ax.set_title(f"{variant}, n = {n}")
        ax.set_xlabel("record j")
        if index == 0:
            ax.set_ylabel("position i")
        ax.set_xticks(range(n))
        ax.set_yticks(range(n))
    fig.colorbar(im, ax=axes, shrink=0.8, label="n M(i, j)  (1 = uniform)")
    fig.savefig(os.path.join(PLOTS, "butterfly_matrices.png"), dpi=110)
    plt.close(fig)


def plot_butterfly_bias_n():
    rs = parse("butterfly_bias_n.txt")
    if not rs:
        return
    fig, ax = plt.subplots(figsize=(8, 4.2))
    for k in range(1, 7):
        pts = [d for d in rs if d["iterations"] == k and d["bias"] > 0]
        ax.semilogy([d["n"] for d in pts], [d["bias"] for d in pts], lw=0.8, label=f"k = {k}")
    ax.set_xlabel("n")
    ax.set_ylabel("B(M_n^k)")
    ax.set_title("Butterfly with omitted exchanges, k passes (Waechter et al. Fig. 3); B = 0 at n = 2^m")
    ax.legend(fontsize=8, ncol=3)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(os.path.join(PLOTS, "butterfly_bias_n.png"), dpi=110)
    plt.close(fig)


def plot_butterfly_shift():
    rs = [d for d in parse("butterfly_shift.txt") if d["test"] == "butterfly_shift" and d["n"] in (304, 400)]
    if not rs:
        return
    fig, ax = plt.subplots(figsize=(8, 4))
    for n in (304, 400):
        pts = [d for d in rs if d["n"] == n]
        ax.semilogy([d["shift"] for d in pts], [d["bias"] for d in pts], lw=0.9, label=f"n = {n}")
    ax.set_xlabel("shift offset l")
    ax.set_ylabel("B((S_l M_n)^3)")
    ax.set_title("Shifting between 3 passes, omitted exchanges (Waechter et al. Fig. 5)")
    ax.legend()
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(os.path.join(PLOTS, "butterfly_shift.png"), dpi=110)
    plt.close(fig)


def plot_plan_position():
    path = os.path.join(DATA, "plan_position_1000_histogram.txt")
    rs = [d for d in parse("plan.txt") if d["test"] == "position" and d["generator"] == "plan"]
    if not os.path.exists(path) or not rs:
        return
    samples, n = rs[0]["samples"], rs[0]["n"]
    # Cell counts ("count cells" lines, made by run_all.sh from the matrix)
    # against the exact law of a count under uniformity, Binomial(S, 1/n),
    # scaled to the n^2 cells.
    histogram = {}
    with open(path) as f:
        for line in f:
            k, cells = line.split()
            histogram[int(k)] = int(cells)
    p = 1.0 / n
    ks = list(range(0, max(histogram) + 6))

    def pmf(k):
        return math.exp(math.lgamma(samples + 1) - math.lgamma(k + 1) - math.lgamma(samples - k + 1) + k * math.log(p) +
                        (samples - k) * math.log1p(-p))

    fig, ax = plt.subplots(figsize=(7, 4))
    ax.bar(ks, [histogram.get(k, 0) for k in ks], width=0.8, alpha=0.7, label=f"cells of M_{n} with that count")
    ax.plot(ks, [n * n * pmf(k) for k in ks], "r.-", lw=1, label=f"n^2 x Binomial({samples}, 1/{n}) pmf")
    ax.set_yscale("log")
    ax.set_ylim(0.3, 2e5)
    ax.set_xlabel(f"shuffles (of {samples}) that put record j at position i")
    ax.set_ylabel("cells")
    ax.set_title(f"Whole plan, n = {n}, L = 16, F = 4 (4 levels)")
    ax.legend()
    fig.tight_layout()
    fig.savefig(os.path.join(PLOTS, "plan_position_1000.png"), dpi=110)
    plt.close(fig)


# ---------------------------------------------------------------- main


def render():
    with open(TEMPLATE) as f:
        template = f.read()
    vals = values()
    out = []
    for line in template.split("\n"):
        m = re.fullmatch(r"@@TABLE (\w+)@@", line.strip())
        if m:
            out.append(TABLES[m.group(1)]())
            continue
        m = re.fullmatch(r"@@COMMANDS (\S+)@@", line.strip())
        if m:
            cmds = commands(m.group(1))
            out.append("<details><summary>Commands (" + str(len(cmds)) + ")</summary>\n\n```\n" + "\n".join(cmds) +
                       "\n```\n</details>")
            continue
        line = re.sub(r"@@VALUE (\w+)@@", lambda mm: vals.get(mm.group(1), "(no data)"), line)
        out.append(line)
    with open(OUTPUT, "w") as f:
        f.write("\n".join(out))


def main():
    os.makedirs(PLOTS, exist_ok=True)
    for plot in (plot_chi2_rounds, plot_mmd_rounds, plot_butterfly_matrices, plot_butterfly_bias_n, plot_butterfly_shift,
                 plot_plan_position):
        plot()
    render()
    print(f"wrote {os.path.relpath(OUTPUT, ROOT)} and {os.path.relpath(PLOTS, ROOT)}/*.png", file=sys.stderr)


if __name__ == "__main__":
    main()
