"""scipy baseline for bench/cpu-kernels.ts: the same CSR matrix and operands
as kernels.c; prints one JSON line per kernel with the median of the runs."""
import json
import sys
import time

import numpy as np
import scipy.sparse as sp


def main(path: str, runs: int) -> None:
    with open(path, "rb") as f:
        rows, cols, nnz = np.frombuffer(f.read(12), dtype=np.int32)
        rp = np.frombuffer(f.read(4 * (rows + 1)), dtype=np.int32)
        ci = np.frombuffer(f.read(4 * nnz), dtype=np.int32)
        vals = np.frombuffer(f.read(8 * nnz), dtype=np.float64)
    j = np.arange(cols)
    x64 = 1.0 + (j % 7) * 0.25
    B = (((j[:, None] + np.arange(32)[None, :]) % 5) * 0.5).astype(np.float32)
    cases = [
        ("spmv_f32", sp.csr_matrix((vals.astype(np.float32), ci, rp), shape=(rows, cols)), x64.astype(np.float32)),
        ("spmv_f64", sp.csr_matrix((vals, ci, rp), shape=(rows, cols)), x64),
        ("spmm32_f32", sp.csr_matrix((vals.astype(np.float32), ci, rp), shape=(rows, cols)), B),
    ]
    for name, A, X in cases:
        A @ X
        ts = []
        for _ in range(runs):
            t0 = time.perf_counter()
            A @ X
            ts.append((time.perf_counter() - t0) * 1e3)
        print(json.dumps({"kernel": name, "median_ms": float(np.median(ts))}))


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
