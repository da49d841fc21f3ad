#!/usr/bin/python3
"""Time FAISS IndexFlatIP, the peer of r2med's exact float32 search.

The data has the shape of vector.BenchmarkFlatBatch (docs/BENCHMARKS.md):
N unit-normalized rows of uniform random components, cosine = inner
product of normalized vectors, top-k of 1, 100 and 1,000 queries, on 1 and
2 threads. Speed does not depend on the values, only on the shapes.

    apt-get install python3-faiss        # Debian: FAISS 1.7.3 over OpenBLAS
    /usr/bin/python3 bench/faiss/flat_ip.py [--n 100000] [--dim 768] [--reps 5]
"""

import argparse
import statistics
import time

import faiss
import numpy as np


def rows(rng, n, dim):
    x = rng.random((n, dim), dtype=np.float32) - np.float32(0.5)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    return x


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--n", type=int, default=100_000)
    p.add_argument("--dim", type=int, default=768)
    p.add_argument("--k", type=int, default=100)
    p.add_argument("--queries", default="1,100,1000")
    p.add_argument("--threads", default="1,2")
    p.add_argument("--reps", type=int, default=5)
    a = p.parse_args()

    rng = np.random.default_rng(99)
    index = faiss.IndexFlatIP(a.dim)
    index.add(rows(rng, a.n, a.dim))
    xq = rows(rng, max(int(q) for q in a.queries.split(",")), a.dim)
    print(f"faiss {faiss.__version__}: IndexFlatIP {a.n} x {a.dim}, k={a.k}")
    for t in (int(x) for x in a.threads.split(",")):
        faiss.omp_set_num_threads(t)
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
