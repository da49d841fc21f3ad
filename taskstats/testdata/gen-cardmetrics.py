# Generates cardmetrics.json (run from this directory: python3
# gen-cardmetrics.py): random candidate lists and qrels, with the task-card
# metrics computed the way HAKARI-Bench's
# scripts/update_benchmark_task_candidate_metadata.py does on CPython >= 3.12,
# whose sum() is Neumaier-compensated (emulated here, so any Python 3 gives
# the same file). The seed is one where Go's math.Log2 or a plain sum would
# change every case's nDCG@10 in its last bits, which the script checks.
import json, math, random

def pysum(xs):
    s = 0.0; c = 0.0
    for x in xs:
        t = s + x
        if abs(s) >= abs(x): c += (s - t) + x
        else: c += (x - t) + s
        s = t
    return s + c if c and math.isfinite(c) else s

def ndcg10(cands, pos, log2, plain_idcg=False):
    if not pos: return 0.0
    dcg = 0.0
    for i, c in enumerate(cands[:10], start=1):
        if c in pos: dcg += 1.0 / log2(i + 1)
    terms = [1.0 / log2(i + 1) for i in range(1, min(len(pos), 10) + 1)]
    idcg = sum(terms) if plain_idcg else pysum(terms)
    return dcg / idcg if idcg else 0.0

def metrics(lists, qrels, top_k, safeguard, log2=math.log2, plain=False):
    qids = sorted(qrels)
    nd, hits, counts = [], [], []
    cov = rel = withc = rows = sg = 0
    for q in qids:
        pos = qrels[q]; c = lists.get(q, [])
        if c: withc += 1
        counts.append(len(c))
        nd.append(ndcg10(c, pos, log2, plain))
        hits.append(1.0 if any(x in pos for x in c[:10]) else 0.0)
        cut = c[:100]
        if safeguard and len(c) == top_k + 1:
            cut = c[:min(100, top_k)]
        cov += len(set(cut) & pos); rel += len(pos)
        if safeguard and len(c) == top_k + 1:
            rows += 1
            if c[top_k] in pos and not any(x in pos for x in c[:top_k]): sg += 1
    s = sum if plain else pysum
    out = dict(ndcg_at_10=s(nd) / len(qids), hit_at_10=s(hits) / len(qids),
               recall_at_100=cov / rel, candidate_count_min=min(counts), candidate_count_max=max(counts),
               candidate_count_mean=sum(counts) / len(counts), query_count=len(qids),
               query_coverage=withc / len(qids), relevant_coverage_at_100=cov / rel)
    if safeguard: out.update(safeguard_positive_rows=sg, rows_with_101_candidates=rows)
    return out

import sys
rng = random.Random(int(sys.argv[1]) if len(sys.argv) > 1 else 11)
docs = [f"d{i:03d}" for i in range(400)]
cases = []
for name, top_k, safeguard, nq in [("bm25", 50, False, 150), ("reranking_hybrid", 100, True, 150), ("short_hybrid", 5, True, 60)]:
    qrels, lists = {}, {}
    for q in range(nq):
        qid = f"q{q}"
        qrels[qid] = set(rng.sample(docs, rng.choice([1, 1, 2, 3, 4, 7, 12, 19])))
        r = rng.random()
        if r < 0.05: continue                      # no list
        if r < 0.08: lists[qid] = []; continue     # empty list
        n = top_k if rng.random() < 0.9 else rng.randrange(1, top_k)
        pool = sorted(qrels[qid]) + rng.sample(docs, 120)
        lst = []
        while len(lst) < n:
            d = rng.choice(pool) if rng.random() < 0.15 else rng.choice(docs)
            if d not in lst or rng.random() < 0.03: lst.append(d)  # a few repeats
        if safeguard and not any(d in qrels[qid] for d in lst[:top_k]) and rng.random() < 0.7:
            lst.append(sorted(qrels[qid])[0])
        lists[qid] = lst
    m = metrics(lists, qrels, top_k, safeguard)
    alt_log2 = lambda n: {3: 1.5849625007211563, 9: 3.1699250014423126}.get(n, math.log2(n))
    m_log = metrics(lists, qrels, top_k, safeguard, log2=alt_log2)
    m_plain = metrics(lists, qrels, top_k, safeguard, plain=True)
    print(name, "go-log2 differs:", m_log["ndcg_at_10"] != m["ndcg_at_10"], "plain-sum differs:", m_plain["ndcg_at_10"] != m["ndcg_at_10"])
    cases.append(dict(name=name, top_k=top_k, safeguard=safeguard,
                      qrels={q: sorted(p) for q, p in qrels.items()}, lists=lists, want=m))
with open("cardmetrics.json", "w") as f:
    json.dump(cases, f, indent=None, separators=(",", ":"))
    f.write("\n")
