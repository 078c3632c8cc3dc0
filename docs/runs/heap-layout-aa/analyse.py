"""Bare SQLite's run-level slow state before and after fixing glibc's malloc thresholds.

Reads sessions.csv (one row per run, point and session: the mean inside time per 1,000 rows of
the session's repeats, and the run's minor page faults) and prints, per build and point, the
spread of the runs' means, F (the variance of the runs' means over what their sessions allow),
the runs in the slow state and their page faults. Standard library only: python3 analyse.py
"""
import csv
import collections
import statistics as st

rows = list(csv.DictReader(open('sessions.csv')))
runs = collections.defaultdict(lambda: collections.defaultdict(list))
faults = {}
for r in rows:
    key = (r['build'], r['batch'], int(r['run']))
    runs[key][(r['strategy'], int(r['columns']))].append(float(r['ms_per_1000_rows']))
    faults[key] = int(r['minor_faults'])

for build in ['before', 'after']:
    keys = sorted(k for k in runs if k[0] == build)
    print(f'== {build}: {len(keys)} runs')
    for point in sorted({p for k in keys for p in runs[k]}):
        means = [st.mean(runs[k][point]) for k in keys]
        within = st.mean(st.variance(runs[k][point]) / len(runs[k][point]) for k in keys)
        m = st.median(means)
        print(f'  {point[0]:>12} {point[1]:>3} cols: median {m:7.3f} ms, runs sd '
              f'{st.stdev(means) / st.mean(means) * 100:5.1f}%, F {st.variance(means) / within:6.2f}, '
              f'max/median {max(means) / m:4.2f}')
    json1 = {k: st.mean(runs[k][('json', 1)]) for k in keys}
    median = st.median(json1.values())
    slow = [k for k in keys if json1[k] > 1.3 * median]
    print(f'  json at 1 column 1.3x its median or slower: {len(slow)} of {len(keys)} runs, '
          f'faults {sorted(faults[k] for k in slow)}')
    print(f'  faults of the others: {min(faults[k] for k in keys if k not in slow)}'
          f'-{max(faults[k] for k in keys if k not in slow)}')
