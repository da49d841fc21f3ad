"""Runs HAKARI-Bench's own metric code over inputs.json and prints what it returns.

This driver is r2med's; the functions it calls are HAKARI-Bench's, loaded from
the checkout named on the command line (see README.md):

    python3.12 drive.py HAKARI_CHECKOUT inputs.json > outputs.json

For every case it prints compute_ir_metrics's result (the means) and, per
query, the values _ranking_cutoff_values records for it (the per-query
values compute_ir_metrics adds up). Floats go through json, which writes
repr(): the shortest text that reads back as the same float.
"""

import importlib.util
import json
import sys


def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def positives(graded):
    # HAKARI's Nano qrels hold positives only (the builder drops grade 0
    # rows) and load_ir_dataset counts every row it reads as relevant: a
    # positive is a document judged above 0.
    return {doc for doc, grade in graded.items() if grade > 0}


def main():
    checkout, inputs = sys.argv[1], sys.argv[2]
    metrics = load(checkout + "/hakari_bench/metrics.py", "hakari_metrics")
    cases = json.load(open(inputs))["cases"]
    out = {}
    for case in cases:
        rankings = {q["id"]: [h[0] for h in q["hits"]] for q in case["queries"]}
        qrels = {qid: positives(g) for qid, g in case["qrels"].items()}
        names = case["measures"]
        means = metrics.compute_ir_metrics(
            rankings=rankings, qrels=qrels, evaluator_name="E", score_name="s", metric_names=names
        )
        groups = metrics._requested_metric_groups(names)
        cutoffs = sorted({k for ks in groups.values() for k in ks})
        per_query = {}
        for qid, ranking in rankings.items():
            relevant = qrels.get(qid, set())
            values = metrics._ranking_cutoff_values(
                ranking=ranking,
                relevant_docs=relevant,
                relevant_count=len(relevant),
                max_cutoff=cutoffs[-1],
                requested_cutoffs=cutoffs,
                ideal_dcg_cache={},
            )
            per_query[qid] = {
                m: values[m.split("@")[0]][int(m.split("@")[1])] for m in metrics.normalize_ir_metric_names(names)
            }
        out[case["name"]] = {
            "means": {k.removeprefix("E_s_"): v for k, v in means.items()},
            "per_query": per_query,
        }
    json.dump(out, sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write("\n")


main()
