"""Runs HAKARI-Bench's candidate-list functions over candidates_inputs.json.

r2med's driver (see README.md):

    python3.12 drive_candidates.py HAKARI_CHECKOUT candidates_inputs.json > candidates_outputs.json

The functions live in modules that import torch, datasets, scipy and
sentence_transformers at the top, which are not installed here (and no
package index is reachable). They themselves need only the standard library,
so this driver parses each file with ast, takes the named top-level
functions and constants as they are written there, and executes just those:

- scripts/build_reranking_hybrid_nano_dataset.py: rrf_hybrid_rankings,
  add_safeguard_tail, stable_random_choice (and HARRIER_CONFIG_NAME), which
  build a Nano set's reranking_hybrid lists with the rank-101 safeguard;
- hakari_bench/evaluation.py: _shuffle_reranker_candidate_ids (and
  RERANKER_CANDIDATE_ORDER_SEED), the order a reranker is given its
  candidates in, and candidate_safeguard_metadata with _deduped_candidate_ids
  (and RERANKING_HYBRID_RRF_TOP_K), which names each list's safeguard.
"""

import ast
import hashlib
import json
import random
import sys
from typing import Any


def take(path, names):
    tree = ast.parse(open(path).read(), path)
    body = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name in names:
            body.append(node)
        elif isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id in names for t in node.targets):
            body.append(node)
    found = {n.name if isinstance(n, ast.FunctionDef) else n.targets[0].id for n in body}
    if found != set(names):
        sys.exit(f"{path}: missing {set(names) - found}")
    namespace = {"random": random, "hashlib": hashlib, "Any": Any}
    exec(compile(ast.Module(body=body, type_ignores=[]), path, "exec"), namespace)
    return namespace


def main():
    checkout, inputs = sys.argv[1], sys.argv[2]
    build = take(
        checkout + "/scripts/build_reranking_hybrid_nano_dataset.py",
        ["rrf_hybrid_rankings", "add_safeguard_tail", "stable_random_choice", "HARRIER_CONFIG_NAME"],
    )
    ev = take(
        checkout + "/hakari_bench/evaluation.py",
        [
            "_shuffle_reranker_candidate_ids",
            "RERANKER_CANDIDATE_ORDER_SEED",
            "candidate_safeguard_metadata",
            "_deduped_candidate_ids",
            "RERANKING_HYBRID_RRF_TOP_K",
        ],
    )
    cases = json.load(open(inputs))
    out = {"hybrid": {}, "order": []}
    for c in cases["hybrid"]:
        rankings, meta = build["rrf_hybrid_rankings"](
            query_ids=c["query_ids"],
            corpus_ids=c["corpus_ids"],
            qrels={q: set(d) for q, d in c["qrels"].items()},
            bm25_rankings=c["bm25"],
            dense_rankings=c["dense"],
            top_k=c["top_k"],
            rrf_k=c["rrf_k"],
            seed=c["seed"],
            split=c["split"],
        )
        # The safeguard evaluation names in those lists.
        named = ev["candidate_safeguard_metadata"](candidates=rankings, qrels={q: set(d) for q, d in c["qrels"].items()})
        out["hybrid"][c["name"]] = {
            "rankings": rankings,
            "safeguards": {a["query_id"]: a["corpus_id"] for a in meta["additions"]},
            "safeguard_corpus_ids_by_query": named["safeguard_corpus_ids_by_query"],
        }
    for c in cases["order"]:
        out["order"].append(ev["_shuffle_reranker_candidate_ids"](query_id=c["query_id"], candidate_ids=c["candidate_ids"]))
    json.dump(out, sys.stdout, indent=1, sort_keys=True, ensure_ascii=False)
    sys.stdout.write("\n")


main()
