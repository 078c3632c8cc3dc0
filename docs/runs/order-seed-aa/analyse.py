#!/usr/bin/env python3
"""The figures of docs/findings-over-runs.md#one-order-of-probes, from the runs beside this file:
`python3 analyse.py`. Standard library only. Each value is log(inside ms per 1,000 rows) of one
measured probe (one per point and session), or of literal ÷ bound and json ÷ bound within a
session; a run's value is the mean of its sessions'."""
import csv, glob, math, os, re, statistics as st
from collections import defaultdict

HERE = os.path.dirname(os.path.abspath(__file__))
# Slowed by a build beside them (12:20-12:35 UTC): 3 to 8 minutes where the others took 1.
DISTURBED = {"20261207T122026Z-local", "20261207T122343Z-local", "20261207T123141Z-local"}


def order_seed(run):
    text = open(os.path.join(run, "run.toml")).read()
    return int(re.search(r"^order_seed = (\d+)", text, re.M).group(1))


def values(run):
    by, out = {}, defaultdict(dict)
    for r in csv.DictReader(open(os.path.join(run, "results.csv"))):
        if r["warmup"] != "true" and r["outcome"] == "ok":
            by[(r["strategy"], int(r["columns"]), int(r["session"]))] = (
                float(r["inside_ms"]) / int(r["rows"]) * 1000
            )
    for (s, c, k), v in by.items():
        out[(s, c)][k] = math.log(v)
        for top in ("literal", "json"):
            if s == top and ("bound", c, k) in by:
                out[(f"{top}/bound", c)][k] = math.log(v / by[("bound", c, k)])
    return out


def betainc(a, b, x):
    def cf(a, b, x):
        c, d = 1.0, 1 / (1 - (a + b) * x / (a + 1))
        h = d
        for m in range(1, 300):
            for aa in (m * (b - m) * x / ((a - 1 + 2 * m) * (a + 2 * m)),
                       -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 1 + 2 * m))):
                d = 1 / (1 + aa * d)
                c = 1 + aa / c
                h *= d * c
        return h
    lb = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log(1 - x)
    if x < (a + 1) / (a + b + 2):
        return math.exp(lb) * cf(a, b, x) / a
    return 1 - math.exp(lb) * cf(b, a, 1 - x) / b


def t975(df):
    lo, hi = 0.0, 60.0
    for _ in range(100):
        m = (lo + hi) / 2
        if 1 - 0.5 * betainc(df / 2, 0.5, df / (df + m * m)) < 0.975:
            lo = m
        else:
            hi = m
    return lo


def two_way(y):
    """Run × session, one value a cell: (MS_session, MS_residual)."""
    n, k = len(y), len(y[0])
    g = sum(map(sum, y)) / (n * k)
    rm = [sum(row) / k for row in y]
    sm = [sum(y[i][j] for i in range(n)) / n for j in range(k)]
    ms_s = n * sum((m - g) ** 2 for m in sm) / (k - 1)
    ms_e = sum((y[i][j] - rm[i] - sm[j] + g) ** 2 for i in range(n) for j in range(k)) / ((n - 1) * (k - 1))
    return ms_s, ms_e


runs = sorted(r for r in glob.glob(os.path.join(HERE, "order", "2*")) if os.path.basename(r) not in DISTURBED)
data = {r: values(r) for r in runs}
shared = [r for r in runs if order_seed(r) == 1]
own = [r for r in runs if order_seed(r) != 1]
print(f"{len(shared)} runs of order seed 1, {len(own)} of their own; {len(DISTURBED)} left out")
print(f"{'point':18} {'sd shared':>9} {'sd own':>7} {'own/shared':>10} {'seed 1 / own':>12} {'t':>6}  interval missed")
missed = [0, 0]
spread = []
for pt in sorted(data[runs[0]]):
    ms = [st.mean(data[r][pt].values()) for r in shared]
    mo = [st.mean(data[r][pt].values()) for r in own]
    sd_s, sd_o = st.stdev(ms), st.stdev(mo)
    spread.append(sd_o / sd_s)
    d = st.mean(ms) - st.mean(mo)
    t = d / math.sqrt(sd_s ** 2 / len(ms) + sd_o ** 2 / len(mo))
    # The shared runs judged alone: t over them, and with the places' term.
    sessions = sorted(set.intersection(*[set(data[r][pt]) for r in shared]))
    R, S = len(shared), len(sessions)
    ms_s, ms_e = two_way([[data[r][pt][s] for s in sessions] for r in shared])
    var_s = max(0.0, (ms_s - ms_e) / R)
    runs_term = sd_s ** 2 / R
    V = runs_term + var_s / S
    if var_s > 0:
        part = runs_term ** 2 / (R - 1) + (ms_s / R / S) ** 2 / (S - 1) + (ms_e / R / S) ** 2 / ((R - 1) * (S - 1))
        df = min(max(V * V / part, 1.0), R - 1 + S - 1)
    else:
        df = R - 1
    naive = abs(d) > t975(R - 1) * math.sqrt(runs_term)
    crossed = abs(d) > t975(df) * math.sqrt(V)
    missed[0] += naive
    missed[1] += crossed
    mark = " ".join(m for m, hit in (("t over runs", naive), ("with the term", crossed)) if hit)
    print(f"{pt[0] + ' ' + str(pt[1]):18} {100 * sd_s:8.1f}% {100 * sd_o:6.1f}% {sd_o / sd_s:10.2f} {math.exp(d):12.3f} {t:6.2f}  {mark}")
print(f"own ÷ shared spread: median {st.median(spread):.2f}, most {max(spread):.2f}")
print(f"the own orders' mean outside the shared runs' 95% interval: t over runs {missed[0]} of {len(spread)}, with the places' term {missed[1]}")

# The environment's size (bytes of one more variable), 2 runs each, one order seed.
pads = {row["run"]: int(row["environment_bytes"]) for row in csv.DictReader(open(os.path.join(HERE, "environment", "padding.csv")))}
env = {r: values(os.path.join(HERE, "environment", r)) for r in pads}
print("\nenvironment size: σ of the size's effect beyond the runs' spread (nested ANOVA)")
for pt in sorted(next(iter(env.values()))):
    groups = defaultdict(list)
    for r, p in pads.items():
        groups[p].append(st.mean(env[r][pt].values()))
    means = [m for g in groups.values() for m in g]
    within = sum((m - st.mean(g)) ** 2 for g in groups.values() for m in g) / (len(means) - len(groups))
    between = 2 * sum((st.mean(g) - st.mean(means)) ** 2 for g in groups.values()) / (len(groups) - 1)
    print(f"{pt[0] + ' ' + str(pt[1]):18} {100 * math.sqrt(max(0.0, (between - within) / 2)):5.1f}%")
