#!/usr/bin/python3
"""Time FAISS IndexFlatIP, the peer of r2med's exact float32 search.

The data has the shape of vector.BenchmarkFlatBatch (docs/BENCHMARKS.md):
N unit-normalized rows of uniform random components, cosine = inner
product of normalized vectors, top-k of 1, 100 and 1,000 queries, on 1 and
2 threads. Speed does not depend on the values, only on the shapes.

FAISS computes batches with BLAS sgemm, and Debian's OpenBLAS starts its
own threads besides FAISS's OpenMP ones, so each setting runs in its own
process with OMP_NUM_THREADS and OPENBLAS_NUM_THREADS set: for 1 thread
both are 1 (one core, as r2med's Workers: 1); for more, the three ways of
spending them (OpenMP × BLAS = t×t, t×1, 1×t) are all timed, so that
FAISS's best can be quoted.

    apt-get install python3-faiss        # Debian: FAISS 1.7.3 over OpenBLAS
    /usr/bin/python3 bench/faiss/flat_ip.py [--n 100000] [--dim 768] [--reps 5]

With --compare DIR it instead searches the rows and queries that
bench/faiss/topk.go wrote (the same float32 bits r2med searched) and
compares FAISS's top-k with r2med's: identical ranked lists, identical
sets, and for every difference the score gap that explains it.

    go run bench/faiss/topk.go --out DIR && /usr/bin/python3 bench/faiss/flat_ip.py --compare DIR
"""

import argparse
import os
import statistics
import subprocess
import sys
import time


def rows(rng, n, dim):
    import numpy as np

    x = rng.random((n, dim), dtype=np.float32) - np.float32(0.5)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    return x


def compare(d):
    import json

    import faiss
    import numpy as np

    meta = json.load(open(os.path.join(d, "meta.json")))
    n, dim, nq, k = meta["n"], meta["dim"], meta["queries"], meta["k"]
    xb = np.fromfile(os.path.join(d, "rows.f32"), dtype="<f4").reshape(n, dim)
    xq = np.fromfile(os.path.join(d, "queries.f32"), dtype="<f4").reshape(nq, dim)
    ri = np.fromfile(os.path.join(d, "r2med.i32"), dtype="<i4").reshape(nq, k)
    rs = np.fromfile(os.path.join(d, "r2med.f32"), dtype="<f4").reshape(nq, k)
    index = faiss.IndexFlatIP(dim)
    index.add(xb)
    fs, fi = index.search(xq, k)
    same_list = same_set = 0
    worst_gap = 0.0  # the largest score gap between rows the two put in different places
    max_score_diff = float(np.max(np.abs(fs - rs)))
    for q in range(nq):
        if np.array_equal(ri[q], fi[q]):
            same_list += 1
            same_set += 1
            continue
        if set(ri[q]) == set(fi[q]):
            same_set += 1
        for r in range(k):
            if ri[q, r] != fi[q, r]:
                # exact (float64) scores of the two rows disagreeing at rank r
                a = float(np.dot(xq[q].astype(np.float64), xb[ri[q, r]].astype(np.float64)))
                b = float(np.dot(xq[q].astype(np.float64), xb[fi[q, r]].astype(np.float64)))
                worst_gap = max(worst_gap, abs(a - b))
    print(f"faiss {faiss.__version__} vs r2med: {nq} queries over {n} x {dim}, top {k}")
    print(f"identical ranked lists: {same_list}/{nq}; identical sets: {same_set}/{nq}")
    print(f"largest |faiss score - r2med score| at the same rank: {max_score_diff:.3g}")
    print(f"largest exact (float64) score gap between rows ranked differently: {worst_gap:.3g}")


def serve(a):
    """Search on demand, so that pair.go can alternate FAISS with r2med
    search by search in two warm processes (threads as the environment's
    OMP_NUM_THREADS and OPENBLAS_NUM_THREADS set them)."""
    import faiss
    import numpy as np

    rng = np.random.default_rng(99)
    index = faiss.IndexFlatIP(a.dim)
    index.add(rows(rng, a.n, a.dim))
    xq = rows(rng, max(int(q) for q in a.queries.split(",")), a.dim)
    print(f"faiss {faiss.__version__} ready", flush=True)
    for line in sys.stdin:
        q = np.ascontiguousarray(xq[:int(line)])
        t0 = time.perf_counter()
        index.search(q, a.k)
        print(f"{time.perf_counter() - t0:.6f}", flush=True)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--n", type=int, default=100_000)
    p.add_argument("--dim", type=int, default=768)
    p.add_argument("--k", type=int, default=100)
    p.add_argument("--queries", default="1,100,1000")
    p.add_argument("--threads", default="1,2")
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--compare", metavar="DIR", help="compare with r2med's top-k written by topk.go")
    p.add_argument("--serve", action="store_true",
                   help="for bench/faiss/pair.go: read query counts from stdin, one per line, "
                        "search that many queries and print the seconds taken")
    a = p.parse_args()
    if a.compare:
        compare(a.compare)
        return
    if a.serve:
        serve(a)
        return
    threads = [int(x) for x in a.threads.split(",")]
    if len(threads) > 1 or "R2MED_FAISS_CHILD" not in os.environ:
        for t in threads:
            for omp, blas in sorted({(t, t), (t, 1), (1, t)}, reverse=True):
                env = dict(os.environ, OMP_NUM_THREADS=str(omp), OPENBLAS_NUM_THREADS=str(blas), R2MED_FAISS_CHILD="1")
                args = [sys.executable, __file__, "--n", str(a.n), "--dim", str(a.dim), "--k", str(a.k),
                        "--queries", a.queries, "--threads", str(t), "--reps", str(a.reps)]
                subprocess.run(args, env=env, check=True)
        return
    import faiss
    import numpy as np

    rng = np.random.default_rng(99)
    index = faiss.IndexFlatIP(a.dim)
    index.add(rows(rng, a.n, a.dim))
    xq = rows(rng, max(int(q) for q in a.queries.split(",")), a.dim)
    print(f"faiss {faiss.__version__}: IndexFlatIP {a.n} x {a.dim}, k={a.k}, "
          f"OMP_NUM_THREADS={os.environ['OMP_NUM_THREADS']} OPENBLAS_NUM_THREADS={os.environ['OPENBLAS_NUM_THREADS']}")
    for t in threads:
        for nq in (int(x) for x in a.queries.split(",")):
            q = np.ascontiguousarray(xq[:nq])
            index.search(q, a.k)  # warm-up
            times = []
            for _ in range(a.reps):
                t0 = time.perf_counter()
                index.search(q, a.k)
                times.append(time.perf_counter() - t0)
            med = statistics.median(times)
            print(f"threads={t} queries={nq}: min {min(times) * 1e3:.1f} ms median {med * 1e3:.1f} ms "
                  f"({nq / med:.0f} queries/s, {a.n * a.dim * 4 * nq / med / 1e9:.1f} GB/s logical)")


if __name__ == "__main__":
    main()
