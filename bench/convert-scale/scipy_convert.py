"""COO -> CSR in scipy for bench/convert-scale.ts: reads raw int32 row and column
indices and float64 values, times coo_matrix(...).tocsr() (which sorts each
row's columns) over RUNS runs, prints the median in ms as JSON."""
import json
import sys
import time

import numpy as np
from scipy.sparse import coo_matrix

path, n_rows, n_cols, runs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
raw = np.fromfile(path, dtype=np.uint8)
nnz = raw.size // 16
rows = raw[: 4 * nnz].view(np.int32)
cols = raw[4 * nnz : 8 * nnz].view(np.int32)
vals = raw[8 * nnz :].view(np.float64)
times = []
for _ in range(runs):
    t = time.perf_counter()
    m = coo_matrix((vals, (rows, cols)), shape=(n_rows, n_cols)).tocsr()
    times.append((time.perf_counter() - t) * 1e3)
    assert m.has_sorted_indices and m.nnz == nnz
times.sort()
print(json.dumps({"median_ms": times[len(times) // 2], "min_ms": times[0]}))
