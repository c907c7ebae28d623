"""numpy/scipy baseline for bench/cpu-examples.ts: the examples' kernels
(gcn, attention, pagerank, sssp) written as a user of numpy and scipy would,
on the same CSR matrix and the same operands (the formulas below and in
cpu-examples.ts agree), in float32. Prints one JSON line per kernel (median
ms of the runs, trips of the repeat loops) and writes each result as raw
float32 to OUT/<kernel>.f32 for the bench to compare against dype's."""
import json
import os
import sys
import time

import numpy as np
import scipy.sparse as sp

F = np.float32


def operand(rows: int, cols: int, salt: int) -> np.ndarray:
    """((i * 131 + j * 7 + salt) % 17) / 8 - 1, as cpu-examples.ts `operand`."""
    i = np.arange(rows, dtype=np.int64)[:, None]
    j = np.arange(cols, dtype=np.int64)[None, :]
    return (((i * 131 + j * 7 + salt) % 17) / 8 - 1).astype(F)


def timed(fn, runs: int):
    fn()
    ts = []
    out = None
    for _ in range(runs):
        t0 = time.perf_counter()
        out = fn()
        ts.append((time.perf_counter() - t0) * 1e3)
    return float(np.median(ts)), out


def main(path: str, runs: int, out_dir: str, dims: dict) -> None:
    with open(path, "rb") as f:
        rows, cols, nnz = np.frombuffer(f.read(12), dtype=np.int32)
        rp = np.frombuffer(f.read(4 * (rows + 1)), dtype=np.int32)
        ci = np.frombuffer(f.read(4 * nnz), dtype=np.int32)
        vals = np.frombuffer(f.read(8 * nnz), dtype=np.float64)
    n = int(rows)
    A = sp.csr_matrix((vals.astype(F), ci, rp), shape=(rows, cols))
    row_of = np.repeat(np.arange(n, dtype=np.int64), np.diff(rp))
    results = {}

    f_, h, c = dims["f"], dims["h"], dims["c"]
    X, W1, W2 = operand(n, f_, 1), operand(f_, h, 2), operand(h, c, 3)

    def gcn():
        T1 = X @ W1
        H1 = np.maximum(A @ T1, F(0))
        return A @ (H1 @ W2)

    d = dims["d"]
    Q, K, V = operand(n, d, 4), operand(n, d, 5), operand(n, d, 6)

    def attention():
        S = np.einsum("ij,ij->i", Q[row_of], K[ci]).astype(F) * A.data
        m = np.full(n, -np.inf, dtype=F)
        nz = rp[1:] > rp[:-1]
        m[nz] = np.maximum.reduceat(S, rp[:-1][nz])
        E = sp.csr_matrix((np.exp(S - m[row_of]).astype(F), ci, rp), shape=(rows, cols))
        s = np.asarray(E.sum(axis=1), dtype=F).ravel()
        with np.errstate(invalid="ignore", divide="ignore"):
            return (E @ V) / s[:, None]

    # Column-stochastic: each stored entry of column j is 1 / (entries of column j).
    counts = np.bincount(ci, minlength=cols).astype(F)
    P = sp.csr_matrix((F(1) / counts[ci], ci, rp), shape=(rows, cols))
    damp = F(0.85)
    trips = {}

    def pagerank():
        r = np.full(n, F(1) / F(n), dtype=F)
        base = (F(1) - damp) / F(n)
        for t in range(1000):
            nr = base + damp * (P @ r)
            change = np.abs(nr - r).sum(dtype=np.float64)
            r = nr
            if change <= 1e-6:
                trips["pagerank"] = t + 1
                return r
        trips["pagerank"] = 1000
        return r

    # Edge weights 1 + (i + j) % 7; distances from vertex 0.
    w = (1 + (row_of + ci) % 7).astype(F)
    starts = rp[:-1][rp[1:] > rp[:-1]]
    nonempty = rp[1:] > rp[:-1]

    def sssp():
        dist = np.full(n, np.inf, dtype=F)
        dist[0] = 0
        for t in range(100000):
            best = np.full(n, np.inf, dtype=F)
            best[nonempty] = np.minimum.reduceat(w + dist[ci], starts)
            nd = np.minimum(dist, best)
            if np.array_equal(nd, dist):
                trips["sssp"] = t + 1
                return nd
            dist = nd
        trips["sssp"] = 100000
        return dist

    for name, fn in (("gcn", gcn), ("attention", attention), ("pagerank", pagerank), ("sssp", sssp)):
        ms, out = timed(fn, runs)
        np.ascontiguousarray(out, dtype=F).tofile(os.path.join(out_dir, f"{name}.f32"))
        print(json.dumps({"kernel": name, "median_ms": ms, "trips": trips.get(name)}))


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), sys.argv[3], json.loads(sys.argv[4]))
