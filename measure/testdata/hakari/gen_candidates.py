"""Writes candidates_inputs.json (python3 gen_candidates.py > candidates_inputs.json).

r2med's own script; it calls nothing of HAKARI-Bench's. Each hybrid case is a
Nano split: its corpus, queries in order, positives, and the bm25 and dense
lists (every listed document is in the corpus, each once per list).
"""

import json
import random

SEED, TOP_K, RRF_K = 20260524, 100, 100


def did(i):
    return "d%03d" % i


def case(name, split, corpus, queries, qrels, bm25, dense):
    return {"name": name, "split": split, "seed": SEED, "top_k": TOP_K, "rrf_k": RRF_K,
            "corpus_ids": corpus, "query_ids": queries, "qrels": qrels, "bm25": bm25, "dense": dense}


hybrid = []

# nano's own hybridSet: reversed lists that tie at the top, positives beyond
# the top 100 (safeguards), a query with no dense list.
up = [did(i) for i in range(120)]
hybrid.append(case(
    "nano_test", "NanoTest", up, ["q1", "q2", "q3", "q4"],
    {"q1": ["d000"], "q2": ["d117", "d105", "d110"], "q3": [did(i) for i in range(100, 105)], "q4": ["d050"]},
    {"q1": up, "q2": up, "q3": up, "q4": up},
    {"q1": up[::-1], "q2": up, "q3": up},
))

# Five documents: a fused list shorter than 100, the safeguard after it.
hybrid.append(case(
    "small", "NanoTest", ["a", "b", "c", "d", "e"], ["q3"], {"q3": ["e"]},
    {"q3": ["a", "b"]}, {"q3": ["c", "a"]},
))

# Seeded random splits: 260 documents (some ids non-ASCII), 40 queries with
# overlapping lists of 0 to 200, equal RRF sums and equal best ranks, and
# positives often only past the top 100.
rng = random.Random(7)
corpus = [did(i) for i in range(250)] + ["é%d" % i for i in range(5)] + ["文%d" % i for i in range(5)]
queries, qrels, bm25, dense = [], {}, {}, {}
for i in range(40):
    q = "Q%d" % rng.randrange(1000) if i % 7 else "问%d" % i
    while q in queries:
        q += "x"
    queries.append(q)
    a = rng.sample(corpus, rng.randrange(0, 201))
    b = rng.sample(corpus, rng.randrange(0, 201)) if rng.random() < 0.9 else []
    if i % 5 == 0:  # mirrored ranks: equal sums, equal best ranks
        b = a[::-1]
    bm25[q], dense[q] = a, b
    tail = [d for d in corpus if d not in a[:60] and d not in b[:60]]
    if rng.random() < 0.85:
        qrels[q] = rng.sample(tail, rng.randrange(1, 6)) if rng.random() < 0.6 else rng.sample(corpus, rng.randrange(1, 6))
hybrid.append(case("random", "NanoR2MEDBiology", corpus, queries, qrels, bm25, dense))

order = [
    {"query_id": "q1", "candidate_ids": [did(i) for i in range(10)]},
    {"query_id": "573", "candidate_ids": [did(i) for i in range(100)] + ["d007"]},  # a duplicate: input position breaks the tie
    {"query_id": "ü-query", "candidate_ids": ["ä", "b", "文書", "", "B"]},
    {"query_id": "", "candidate_ids": ["x"]},
    {"query_id": "empty", "candidate_ids": []},
]

json.dump({"hybrid": hybrid, "order": order}, __import__("sys").stdout, ensure_ascii=False, separators=(",", ":"))
print()
