"""Matrices for the GPU benchmark generated on the GPU machine from a seed (bench/gpu/run.sh).

Too large to carry there (10^7 entries and more), they are made where they
run, by the same rules as bench/gpu/generated.ts, which prepare.ts uses to
plan them here (dype's picks): the same rows and columns, entry for entry
(test/cuda/bench-generated.test.ts holds the two equal). Random numbers come
from a counter hash (lowbias32 of index x golden ratio + hashed seed, all in
32-bit arithmetic), so both sides draw the same stream without sharing state.

- stencil3d N: the 7-point Laplacian pattern of an N x N x N grid (row
  x + N (y + N z) holds its neighbours along each axis and itself), values
  uniform in [-1, 1): a regular 3-D stencil.
- rmat S E H1,H2,...: R-MAT (a, b, c = 0.57, 0.19, 0.19) over 2^S rows and
  columns, E edges, plus hub rows with H1, H2, ... column draws each
  (duplicates merged): a power-law graph with 10^5-10^6-entry hubs.

For each spec line of WORK/generated.txt (name, kind, parameters, seed,
dense widths) it writes under WORK/gen/: NAME.csr/ (rowPtr.npy, colIdx.npy
int32, vals.npy float32 and cols, the column count: what dype_check reads as
a sparse input), the dense
inputs NAME-x.npy (SpMV) and NAME-B<K>.npy (float32, row-major, uniform in
[-1, 1)), and the float64 references NAME-y.npy and NAME-Y<K>.npy (scipy,
from the float32 inputs).

    python3 bench/gpu/generate.py WORK
"""
import os
import sys
import time

import numpy as np

M32 = np.uint64(0xFFFFFFFF)
GOLDEN = np.uint64(0x9E3779B9)


def h32(x):
    """lowbias32 of uint32 values (wrapping 32-bit arithmetic)."""
    x = x.astype(np.uint32)
    x ^= x >> np.uint32(16)
    x *= np.uint32(0x7FEB352D)
    x ^= x >> np.uint32(15)
    x *= np.uint32(0x846CA68B)
    x ^= x >> np.uint32(16)
    return x


def draws(seed, start, count):
    """count uint32 draws of stream `seed` from index start: h32(i * golden + h32(seed))."""
    base = np.uint64(int(h32(np.array([seed], dtype=np.uint64))[0]))
    i = np.arange(start, start + count, dtype=np.uint64)
    return h32((i * GOLDEN + base) & M32)


def uniform(seed, count):
    """count floats in [0, 1) (the draw over 2^32, in float64)."""
    return draws(seed, 0, count).astype(np.float64) / 4294967296.0


def stencil3d(n):
    rows = n ** 3
    r = np.arange(rows, dtype=np.int64)
    x, y, z = r % n, (r // n) % n, r // (n * n)
    parts = []
    # Neighbours in column order: -N^2, -N, -1, itself, +1, +N, +N^2.
    for off, ok in ((-n * n, z > 0), (-n, y > 0), (-1, x > 0), (0, None), (1, x < n - 1), (n, y < n - 1), (n * n, z < n - 1)):
        sel = r if ok is None else r[ok]
        parts.append((sel << np.int64(32)) + (sel + off))
    keys = np.sort(np.concatenate(parts))
    return rows, rows, keys >> np.int64(32), keys & np.int64(0xFFFFFFFF)


def rmat(scale, edges, hubs, seed):
    n = 1 << scale
    row = np.zeros(edges, dtype=np.int64)
    col = np.zeros(edges, dtype=np.int64)
    e = np.arange(edges, dtype=np.uint64)
    base = np.uint64(int(h32(np.array([seed * 8 + 1], dtype=np.uint64))[0]))
    for level in range(scale):
        u = h32(((e * np.uint64(scale) + np.uint64(level)) * GOLDEN + base) & M32).astype(np.float64) / 4294967296.0
        rb = (u >= 0.57 + 0.19).astype(np.int64)
        cb = (((u >= 0.57) & (u < 0.57 + 0.19)) | (u >= 0.57 + 0.19 + 0.19)).astype(np.int64)
        row = row * 2 + rb
        col = col * 2 + cb
    hub_rows = draws(seed * 8 + 2, 0, len(hubs)).astype(np.int64) % n
    start = 0
    for j, count in enumerate(hubs):
        cols = draws(seed * 8 + 3, start, count).astype(np.int64) % n
        start += count
        row = np.concatenate([row, np.full(count, hub_rows[j], dtype=np.int64)])
        col = np.concatenate([col, cols])
    keys = np.unique((row << np.int64(scale)) | col)
    return n, n, keys >> np.int64(scale), keys & np.int64(n - 1)


def build(kind, params, seed):
    if kind == 'stencil3d':
        rows, cols, r, c = stencil3d(int(params[0]))
    elif kind == 'rmat':
        rows, cols, r, c = rmat(int(params[0]), int(params[1]), [int(h) for h in params[2].split(',')], seed)
    else:
        raise SystemExit(f'generate.py: unknown kind {kind!r}; expected stencil3d or rmat')
    row_ptr = np.zeros(rows + 1, dtype=np.int64)
    np.add.at(row_ptr, r + 1, 1)
    row_ptr = np.cumsum(row_ptr)
    if row_ptr[-1] >= 2 ** 31:
        raise SystemExit('generate.py: more than 2^31 - 1 entries')
    vals = (uniform(seed * 8 + 4, len(c)) * 2 - 1).astype(np.float32)
    return rows, cols, row_ptr.astype(np.int32), c.astype(np.int32), vals


def main():
    work = sys.argv[1]
    spec = os.path.join(work, 'generated.txt')
    out = os.path.join(work, 'gen')
    os.makedirs(out, exist_ok=True)
    import scipy.sparse as sp

    for line in open(spec):
        if not line.strip():
            continue
        name, kind, params, seed, widths = line.split()
        t0 = time.time()
        rows, cols, row_ptr, col_idx, vals = build(kind, params.split(':'), int(seed))
        csr = os.path.join(out, f'{name}.csr')
        os.makedirs(csr, exist_ok=True)
        np.save(os.path.join(csr, 'rowPtr.npy'), row_ptr)
        np.save(os.path.join(csr, 'colIdx.npy'), col_idx)
        np.save(os.path.join(csr, 'vals.npy'), vals)
        with open(os.path.join(csr, 'cols'), 'w') as f:
            f.write(f'{cols}\n')
        A = sp.csr_matrix((vals.astype(np.float64), col_idx, row_ptr), shape=(rows, cols))
        for k in [1] + [int(w) for w in widths.split(',')]:
            B = (uniform(int(seed) * 8 + 5 + k, cols * k) * 2 - 1).astype(np.float32).reshape(cols, k)
            tag = 'x' if k == 1 else f'B{k}'
            np.save(os.path.join(out, f'{name}-{tag}.npy'), B if k > 1 else B.reshape(-1))
            Y = A @ B.astype(np.float64)
            np.save(os.path.join(out, f'{name}-{"y" if k == 1 else f"Y{k}"}.npy'), Y if k > 1 else Y.reshape(-1))
        print(f'{name}: {kind} {params}, {rows} x {cols}, {len(col_idx)} entries, longest row {int(np.diff(row_ptr).max())} ({time.time() - t0:.1f} s)')


if __name__ == '__main__':
    main()
