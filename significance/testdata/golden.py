#!/usr/bin/python3
"""Golden values for significance's tests, computed with SciPy.

Run with Debian's python3 (apt-get install python3-scipy):
    /usr/bin/python3 significance/testdata/golden.py > significance/testdata/golden.json

ttest_rel gives the paired t-test; permutation_test with
permutation_type="samples" and n_resamples=inf enumerates every within-pair
swap, the exact two-sided randomization test.
"""
import json
import math
import random

import numpy as np
import scipy
from scipy import stats

random.seed(20250101)
cases = []


def add(name, a, b):
    a = [float(x) for x in a]
    b = [float(x) for x in b]
    t = stats.ttest_rel(b, a)
    perm = stats.permutation_test(
        (b, a),
        lambda x, y, axis: np.mean(x - y, axis=axis),
        permutation_type="samples",
        alternative="two-sided",
        n_resamples=np.inf,
        vectorized=True,
    )
    d = np.array(b) - np.array(a)
    cases.append({
        "name": name,
        "a": a,
        "b": b,
        "t": None if math.isnan(t.statistic) else float(t.statistic),
        "ttest_p": None if math.isnan(t.pvalue) else float(t.pvalue),
        "randomization_p": float(perm.pvalue),
        "cohen_d": float(np.mean(d) / np.std(d, ddof=1)),
    })


# nDCG-like values in [0, 1], a few ties and zero differences.
for n in (5, 8, 12, 16):
    a = [round(random.random(), 4) for _ in range(n)]
    b = [round(min(1, max(0, x + random.gauss(0.08, 0.15))), 4) for x in a]
    b[0] = a[0]  # one tie
    add("random-%d" % n, a, b)
add("clear-win", [0.1, 0.2, 0.15, 0.3, 0.05, 0.12, 0.2, 0.1], [0.5, 0.65, 0.5, 0.75, 0.4, 0.55, 0.6, 0.52])
add("mixed", [0.5, 0.4, 0.9, 0.1, 0.3, 0.0], [0.6, 0.3, 0.9, 0.4, 0.2, 0.1])
add("small", [0.0, 1.0, 0.5], [1.0, 1.0, 0.0])

print(json.dumps({"scipy": scipy.__version__, "cases": cases}, indent=1))
