"""The report of bench/gpu/run.sh: cuSPARSE against dype on the same jobs.

Reads the CSVs run.sh wrote into OUT/csv: dype_check's (every variant of
every op of a job) and cusparse_bench's (cuSPARSE's CSR algorithms on the
SpMV and SpMM jobs, timed in the same way: CUDA events around each call, the
median of 20 after 3 warm-ups, descriptors, buffer and preprocessing made
once). Prints, per SpMV and SpMM job, cuSPARSE's fastest algorithm against
dype's fastest variant and against the variant dype picks for the input
(picks.txt), with the geometric means of the ratios; then, for every job and
op, the pick beside the fastest variant. Writes cusparse.json into OUT. A
SpMV or SpMM job without a cuSPARSE CSV, or whose every algorithm failed its
check, is an error (exit 1).

    python3 bench/gpu/cusparse.py WORK OUT
"""
import csv
import json
import math
import os
import sys


def cusparse_rows(out, ex, matrix):
    """cusparse_bench's rows of one job that passed their check."""
    path = os.path.join(out, 'csv', f'cusparse-{ex}-{matrix}.csv')
    if not os.path.exists(path):
        return None
    return [r for r in csv.DictReader(open(path)) if r['check'] != 'MISMATCH']


def dype_rows(out, ex, matrix):
    """The dype_check CSV rows of one job that passed their check (no whole-program row, and no
    re-timing of a variant under other conditions, such as adaptive-rows:longest-unknown)."""
    path = os.path.join(out, 'csv', f'{ex}-{matrix}.csv')
    if not os.path.exists(path):
        return []
    return [r for r in csv.DictReader(open(path))
            if r['op'] != 'program' and r['check'] != 'MISMATCH' and ':' not in r['variant']]


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
    results, missing = [], []
    for job in jobs:
        ex, matrix = job[0], job[1]
        if ex not in ('spmv', 'spmm'):
            continue
        algs = cusparse_rows(out, ex, matrix)
        if not algs:
            missing.append(f'{ex} {matrix}')
            continue
        fastest = min(algs, key=lambda r: float(r['median_ms']))
        ms = float(fastest['median_ms'])
        entry = {'op': ex, 'matrix': matrix, 'cusparse_alg': fastest['variant'], 'cusparse_ms': ms,
                 'cusparse_algs': {r['variant']: float(r['median_ms']) for r in algs}}
        rows = dype_rows(out, ex, matrix)
        best = min(rows, key=lambda r: float(r['median_ms'])) if rows else None
        if best:
            entry.update({'dype_variant': best['variant'], 'dype_ms': float(best['median_ms']), 'speedup': ms / float(best['median_ms'])})
            pick = picks.get((ex, matrix, best['op']))
            mine = next((r for r in rows if r['variant'] == pick), None)
            if mine:
                entry.update({'dype_pick': pick, 'dype_pick_ms': float(mine['median_ms']), 'pick_speedup': ms / float(mine['median_ms'])})
        results.append(entry)
    print(f"{'op':5} {'job':22} {'cuSPARSE':9} {'ms':>9} {'dype best':16} {'ms':>9} {'speedup':>8} {'dype pick':16} {'ms':>9} {'speedup':>8}")
    for e in results:
        print(f"{e['op']:5} {e['matrix']:22} {e['cusparse_alg']:9} {e['cusparse_ms']:9.4f} {e.get('dype_variant', '-'):16} {e.get('dype_ms', float('nan')):9.4f} "
              f"{e.get('speedup', float('nan')):8.2f} {e.get('dype_pick', '-'):16} {e.get('dype_pick_ms', float('nan')):9.4f} {e.get('pick_speedup', float('nan')):8.2f}")
    for key, what in (('speedup', 'best variant'), ('pick_speedup', 'pick')):
        ratios = [e[key] for e in results if key in e]
        if ratios:
            print(f'geomean speedup of dype\'s {what} over cuSPARSE (its fastest algorithm): {math.exp(sum(math.log(x) for x in ratios) / len(ratios)):.2f}x over {len(ratios)} jobs')
    picked = pick_report(jobs, picks, out)
    json.dump({'cusparse': results, 'picks': picked}, open(os.path.join(out, 'cusparse.json'), 'w'), indent=2)
    if missing:
        print('no cuSPARSE timing (cusparse_bench failed or did not run) for: ' + ', '.join(missing), file=sys.stderr)
        sys.exit(1)


if __name__ == '__main__':
    main()
