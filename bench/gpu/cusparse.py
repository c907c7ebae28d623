"""cuSPARSE baseline through CuPy for bench/gpu/run.sh.

Times y = A x (SpMV) and Y = A B (SpMM, B as each job gives it: 16, 32 or
128 columns) in float32 with cupyx.scipy.sparse (cuSPARSE) on the matrices
and inputs of the dype jobs (Matrix Market files, or the NumPy arrays of the
generated matrices)
(median of 20 runs after 3 warm-ups, CUDA events), reads the dype_check CSVs
for the same ops, and prints dype's best variant and the variant dype picks
for the input (picks.txt) against cuSPARSE with the geometric means of the
ratios; then, for every job and op, the pick beside the fastest variant.
Writes cusparse.json into OUT.

    python3 bench/gpu/cusparse.py WORK OUT
"""
import csv
import json
import math
import os
import sys

import cupy as cp
import cupyx.scipy.sparse as cps


def read_mtx(path):
    """Matrix Market coordinate or array, general or symmetric, as dype reads it (float64 host arrays)."""
    with open(path) as f:
        head = f.readline().split()
        fmt, field, sym = head[2].lower(), head[3].lower(), head[4].lower()
        line = f.readline()
        while line.startswith('%') or not line.strip():
            line = f.readline()
        dims = [int(t) for t in line.split()]
        toks = f.read().split()
    if fmt == 'array':
        rows, cols = dims[0], dims[1]
        vals = [float(t) for t in toks]
        return ('dense', rows, cols, [[vals[j * rows + i] for j in range(cols)] for i in range(rows)])
    rows, cols, nnz = dims
    step = 2 if field == 'pattern' else 3
    r, c, v = [], [], []
    for k in range(nnz):
        i, j = int(toks[k * step]) - 1, int(toks[k * step + 1]) - 1
        x = 1.0 if step == 2 else float(toks[k * step + 2])
        r.append(i); c.append(j); v.append(x)
        if sym != 'general' and i != j:
            r.append(j); c.append(i); v.append(-x if sym == 'skew-symmetric' else x)
    return ('coo', rows, cols, (r, c, v))


def read_input(path):
    """A job's input as read_mtx gives it: NumPy arrays (dense .npy, sparse .csr folders) for generated matrices."""
    import numpy as np
    if path.endswith('.npy'):
        a = np.load(path)
        return ('dense', a.shape[0], a.shape[1] if a.ndim == 2 else 1, a if a.ndim == 2 else a.reshape(-1, 1))
    if path.rstrip('/').endswith('.csr'):
        d = path.rstrip('/')
        ptr, idx, val = (np.load(os.path.join(d, f)) for f in ('rowPtr.npy', 'colIdx.npy', 'vals.npy'))
        cols = int(open(os.path.join(d, 'cols')).read())
        return ('csr', len(ptr) - 1, cols, (ptr, idx, val))
    return read_mtx(path)


def time_gpu(fn, reps=20, warmup=3):
    for _ in range(warmup):
        fn()
    cp.cuda.Device().synchronize()
    a, b = cp.cuda.Event(), cp.cuda.Event()
    ms = []
    for _ in range(reps):
        a.record()
        fn()
        b.record()
        b.synchronize()
        ms.append(cp.cuda.get_elapsed_time(a, b))
    ms.sort()
    return ms[len(ms) // 2] if len(ms) % 2 else 0.5 * (ms[len(ms) // 2 - 1] + ms[len(ms) // 2])


def dype_best(out, ex, matrix):
    path = os.path.join(out, 'csv', f'{ex}-{matrix}.csv')
    if not os.path.exists(path):
        return None
    rows = [r for r in csv.DictReader(open(path)) if r['op'] != 'program' and r['check'] != 'MISMATCH']
    return min(rows, key=lambda r: float(r['median_ms'])) if rows else None


def dype_rows(out, ex, matrix):
    """The dype_check CSV rows of one job that passed their check (no whole-program row)."""
    path = os.path.join(out, 'csv', f'{ex}-{matrix}.csv')
    if not os.path.exists(path):
        return []
    return [r for r in csv.DictReader(open(path)) if r['op'] != 'program' and r['check'] != 'MISMATCH']


def read_picks(work):
    """(example, job, op) -> the variant dype picks on the GPU for that input (prepare.ts's picks.txt)."""
    picks = {}
    for line in open(os.path.join(work, 'picks.txt')):
        if line.strip():
            ex, job, op, variant = line.split()
            picks[(ex, job, op)] = variant
    return picks


def pick_report(jobs, picks, out):
    """Per job and op: dype's pick beside the fastest variant measured; returns the entries."""
    entries = []
    for job in jobs:
        ex, matrix = job[0], job[1]
        by_op = {}
        for r in dype_rows(out, ex, matrix):
            by_op.setdefault(r['op'], []).append(r)
        for op, rows in sorted(by_op.items()):
            best = min(rows, key=lambda r: float(r['median_ms']))
            variant = picks.get((ex, matrix, op))
            mine = next((r for r in rows if r['variant'] == variant), None)
            entries.append({'example': ex, 'job': matrix, 'op': op, 'pick': variant,
                            'pick_ms': float(mine['median_ms']) if mine else None,
                            'best': best['variant'], 'best_ms': float(best['median_ms'])})
    print(f"\n{'example':9} {'job':22} {'op':4} {'dype picks':16} {'ms':>9} {'fastest':16} {'ms':>9} {'pick/fastest':>12}")
    for e in entries:
        ratio = e['pick_ms'] / e['best_ms'] if e['pick_ms'] else float('nan')
        print(f"{e['example']:9} {e['job']:22} {e['op']:4} {e['pick'] or '-':16} {e['pick_ms'] or float('nan'):9.4f} {e['best']:16} {e['best_ms']:9.4f} {ratio:12.2f}")
    ratios = [e['pick_ms'] / e['best_ms'] for e in entries if e['pick_ms']]
    if ratios:
        print(f'dype\'s pick is the fastest variant in {sum(1 for e in entries if e["pick"] == e["best"])} of {len(entries)} ops; '
              f'geomean pick/fastest {math.exp(sum(math.log(x) for x in ratios) / len(ratios)):.2f}x')
    return entries


def main():
    work, out = sys.argv[1], sys.argv[2]
    jobs = [line.split() for line in open(os.path.join(work, 'jobs.txt')) if line.strip()]
    picks = read_picks(work)
    results = []
    for job in jobs:
        ex, matrix, args = job[0], job[1], job[2:]
        if ex not in ('spmv', 'spmm'):
            continue
        files = dict(a.split('=', 1) for a in args[1::2] if '=' in a and not a.startswith('--'))
        inputs = {k: os.path.join(work, v) for k, v in files.items()}
        kind, rows, cols, parts = read_input(inputs['A'])
        if kind == 'csr':
            ptr, idx, val = parts
            A = cps.csr_matrix((cp.asarray(val, dtype=cp.float32), cp.asarray(idx), cp.asarray(ptr)), shape=(rows, cols))
        else:
            r, c, v = parts
            A = cps.coo_matrix((cp.asarray(v, dtype=cp.float32), (cp.asarray(r), cp.asarray(c))), shape=(rows, cols)).tocsr()
            A.sum_duplicates()
        dense = read_input(inputs['x' if ex == 'spmv' else 'B'])[3]
        X = cp.asarray(dense, dtype=cp.float32)
        if ex == 'spmv':
            X = X.reshape(-1)
        ms = time_gpu(lambda: A @ X)
        best = dype_best(out, ex, matrix)
        entry = {'op': ex, 'matrix': matrix, 'rows': rows, 'nnz': int(A.nnz), 'cusparse_ms': ms}
        if best:
            entry.update({'dype_variant': best['variant'], 'dype_ms': float(best['median_ms']), 'speedup': ms / float(best['median_ms'])})
            pick = picks.get((ex, matrix, best['op']))
            mine = next((r for r in dype_rows(out, ex, matrix) if r['variant'] == pick), None)
            if mine:
                entry.update({'dype_pick': pick, 'dype_pick_ms': float(mine['median_ms']), 'pick_speedup': ms / float(mine['median_ms'])})
        results.append(entry)
    print(f"{'op':5} {'matrix':22} {'nnz':>8} {'cuSPARSE ms':>12} {'dype best ms':>12} {'variant':16} {'speedup':>8} {'dype pick ms':>12} {'speedup':>8}")
    for e in results:
        print(f"{e['op']:5} {e['matrix']:22} {e['nnz']:8d} {e['cusparse_ms']:12.4f} {e.get('dype_ms', float('nan')):12.4f} {e.get('dype_variant', '-'):16} {e.get('speedup', float('nan')):8.2f} {e.get('dype_pick_ms', float('nan')):12.4f} {e.get('pick_speedup', float('nan')):8.2f}")
    for key, what in (('speedup', 'best variant'), ('pick_speedup', 'pick')):
        ratios = [e[key] for e in results if key in e]
        if ratios:
            print(f'geomean speedup of dype\'s {what} over cuSPARSE: {math.exp(sum(math.log(x) for x in ratios) / len(ratios)):.2f}x over {len(ratios)} runs')
    picked = pick_report(jobs, picks, out)
    json.dump({'cusparse': results, 'picks': picked}, open(os.path.join(out, 'cusparse.json'), 'w'), indent=2)


if __name__ == '__main__':
    main()
