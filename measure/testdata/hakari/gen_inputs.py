"""Writes inputs.json: hand-made edge cases and one seeded random case.

r2med's own script (python3 gen_inputs.py > inputs.json); it calls nothing of
HAKARI-Bench's. Each query lists its hits in ranking order as [doc, score];
HAKARI-Bench's metrics see only the order, r2med gets the scores too, which
here tie or contradict the order on purpose.
"""

import json
import random


def hits(docs, scores=None):
    if scores is None:
        scores = [float(len(docs) - i) for i in range(len(docs))]
    return [[d, s] for d, s in zip(docs, scores)]


EDGE = "acc@1 hit@2 precision@5 recall@5 recall@10 mrr@1 mrr@5 ndcg@2 ndcg@5 map@2 map@5 precision@1000 recall@1000 mrr@1000 ndcg@1000 map@1000".split()

edges = {
    "name": "edges",
    "measures": EDGE,
    # Not in id order: HAKARI-Bench sums the means in this order.
    "queries": [
        # Scores contradict the order; a listed twice; c judged 0.
        {"id": "h1", "hits": hits(["x", "a", "a", "c", "b", "y", "d"], [9, 1, 1, 5, 0, 3, 0])},
        # Every score equal, ids out of byte order.
        {"id": "tie", "hits": hits(["z", "b", "a", "y", "c"], [1.0] * 5)},
        {"id": "nopos_judged", "hits": hits(["a", "b"])},
        {"id": "nopos_unjudged", "hits": hits(["a", "b"])},
        {"id": "empty", "hits": []},
        # 12 positives, 3 retrieved: the ideal is longer than the list.
        {"id": "short", "hits": hits(["p3", "n", "p1"])},
        # One positive listed three times: gains and precisions add up past 1.
        {"id": "dup", "hits": hits(["a", "a", "a", "n"], [2.0, 2.0, 2.0, 1.0])},
        # A positive at rank 6 only, and one at rank 1000's far side.
        {"id": "late", "hits": hits(["n%d" % i for i in range(5)] + ["a"] + ["m%d" % i for i in range(1200)] + ["b"])},
        {"id": "A10", "hits": hits(["q", "r", "s"])},
        {"id": "9", "hits": hits(["s", "q"])},
    ],
    "qrels": {
        "h1": {"a": 1, "b": 2, "c": 0, "d": 1},
        "tie": {"a": 1, "z": 3},
        "nopos_judged": {"a": 0},
        "empty": {"a": 1},
        "short": {"p%d" % i: 1 for i in range(12)},
        "dup": {"a": 1},
        "late": {"a": 1, "b": 1},
        "A10": {"s": 1},
        "9": {"q": 2, "s": 1},
        "absent": {"a": 1},
    },
}

# NanoR2MED's reranking_hybrid lists: the RRF top 100, and for a query whose
# top 100 hold no positive, a positive at rank 101.
top = ["c%03d" % i for i in range(100)]
safeguard = {
    "name": "safeguard",
    "measures": ["ndcg@10", "acc@100", "recall@100", "mrr@100", "map@100", "ndcg@100", "acc@101", "recall@101", "mrr@101", "ndcg@101", "map@101"],
    "queries": [
        {"id": "kept_at_101", "hits": hits(top + ["pos"])},
        {"id": "lifted_to_3", "hits": hits(top[:2] + ["pos"] + top[2:])},
        {"id": "dropped", "hits": hits(top)},
        {"id": "in_top", "hits": hits(top[:49] + ["pos2"] + top[49:99] + ["pos"])},
    ],
    "qrels": {
        "kept_at_101": {"pos": 1},
        "lifted_to_3": {"pos": 1},
        "dropped": {"pos": 1},
        "in_top": {"pos": 1, "pos2": 1},
    },
}

rng = random.Random(20261127)
queries, qrels = [], {}
pool = ["d%d" % i for i in range(400)]
for i in range(200):
    qid = "r%d" % rng.randrange(10**6)
    while any(q["id"] == qid for q in queries):
        qid = "r%d" % rng.randrange(10**6)
    docs = rng.sample(pool, rng.randrange(0, 130))
    if docs and rng.random() < 0.2:
        j = rng.randrange(len(docs))
        docs.insert(rng.randrange(len(docs) + 1), docs[j])
    scores = [round(rng.random(), 1) for _ in docs]  # ties, not in list order
    queries.append({"id": qid, "hits": hits(docs, scores)})
    judged = rng.sample(pool[:150], rng.randrange(0, 15))
    if judged or rng.random() < 0.5:
        qrels[qid] = {d: rng.choice([0, 1, 1, 2]) for d in judged}
rand = {
    "name": "random",
    "measures": ["acc@1", "acc@100", "precision@10", "recall@10", "recall@100", "mrr@10", "ndcg@10", "ndcg@100", "map@10", "map@100"],
    "queries": queries,
    "qrels": qrels,
}

json.dump({"cases": [edges, safeguard, rand]}, __import__("sys").stdout, separators=(",", ":"))
print()
