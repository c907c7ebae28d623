/**
 * `dype run` on a convergence loop: `--json` says how many trips ran, whether
 * the loop converged or hit its maximum, and the planner's prior; the
 * partition is costed at the trips observed (runtime/plan/bind.ts).
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { expectedTrips } from '../../runtime/plan/bind.js';
import type { SparseFeatures } from '../../runtime/plan/types.js';
import { example, REPO_ROOT, runCli } from '../helpers/cli.js';

const M = join(REPO_ROOT, '..', 'shared', 'data', 'matrices');
const HAVE_DATA = existsSync(M);
const pagerank = (backend: string): string[] => [
  'run',
  example('pagerank.dy'),
  '--input',
  `A=${join(M, 'cage8.mtx')}`,
  '--input',
  'r0=@const:0.000985',
  '--param',
  'd=0.85',
  '--backend',
  backend,
  '--json',
];

describe.skipIf(!HAVE_DATA)('dype run reports the trips of a convergence loop', () => {
  it('--json: trips, converged, stop, max_trips and the prior (reference backend)', () => {
    const r = runCli(pagerank('reference'));
    expect(r.status, r.stderr).toBe(0);
    const j = JSON.parse(r.stdout) as { backend: string; repeats: Record<string, unknown>[] };
    expect(j.backend).toBe('reference');
    expect(j.repeats).toEqual([
      {
        id: 'op1',
        until: 'r within 0.000001',
        max_trips: 1000,
        runs: 1,
        trips: 52,
        converged: true,
        stop: 'converged',
        estimated_trips: 32,
      },
    ]);
  });
  it('a loop that hits its maximum says so, in --json and in the text', () => {
    const dir = mkdtempSync(join(tmpdir(), 'dype-repeats-'));
    try {
      const file = join(dir, 'pr5.dy');
      writeFileSync(file, readFileSync(example('pagerank.dy'), 'utf8').replace('repeat 1000', 'repeat 5'));
      const args = pagerank('reference').map((a) => (a === example('pagerank.dy') ? file : a));
      const j = JSON.parse(runCli(args).stdout) as { repeats: Record<string, unknown>[] };
      expect(j.repeats[0]).toMatchObject({ trips: 5, converged: false, stop: 'max_trips', max_trips: 5 });
      const text = runCli(args.filter((a) => a !== '--json'));
      expect(text.stdout).toContain(
        'repeat op1 until r within 0.000001: 5 trip(s), did not converge: hit the maximum of 5 trips in 1 run(s) (reference backend)',
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('the planner costs a convergence loop at its prior until trips are observed', () => {
  const f = (rows: number): ReadonlyMap<string, SparseFeatures> => new Map([['A', { rows } as SparseFeatures]]);
  it('sqrt of the largest row count, within [1, max]', () => {
    expect(expectedTrips(1000, f(1015))).toBe(32);
    expect(expectedTrips(10, f(1015))).toBe(10);
    expect(expectedTrips(1000, new Map())).toBe(1);
  });
});
