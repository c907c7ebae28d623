/**
 * A project runs stages only on the device kinds its targets serve (wasm the
 * CPU, cuda the GPU, hls the FPGA): `dype compile --targets wasm,runtime`
 * builds guards whose partitions, and whose re-plans, keep to the CPU
 * (plan.json records `kinds`), so `dype run --project` with its defaults
 * runs instead of asking for a cuda build (DY3043). A compile that builds no
 * kernel code plans for every kind; a project without guards is planned on
 * its kinds at run time. gcn on cora: the whole system's guards leave the
 * CPU there, so the restriction is what keeps them on it.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { example, REPO_ROOT, runCli } from '../helpers/cli.js';

const M = join(REPO_ROOT, '..', 'shared', 'data', 'matrices');
const HAVE_DATA = existsSync(M);
const dir = mkdtempSync(join(tmpdir(), 'dype-project-kinds-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const GCN = example('gcn.dy');
const CORA = `A=${join(M, 'cora.cites')}`;
const INPUTS = ['--input', CORA, '--input', 'X=@random', '--input', 'W1=@random', '--input', 'W2=@random'];
const DIMS = ['--param', 'f=16', '--param', 'h=16', '--param', 'c=16'];

interface Plan {
  kernels: Record<
    string,
    { guards: Record<string, { kinds?: string[]; partitions: { choices: { device: string }[] }[] }> }
  >;
}
const planOf = (p: string): Plan => JSON.parse(readFileSync(join(dir, p, 'plan.json'), 'utf8')) as Plan;
const guardsOf = (plan: Plan) => Object.values(plan.kernels['gcn']!.guards);
const devices = (plan: Plan): string[] =>
  guardsOf(plan).flatMap((g) => g.partitions.flatMap((p) => p.choices.map((c) => c.device)));
const runOn = (project: string) =>
  runCli(['run', GCN, '--project', join(dir, project), ...INPUTS, ...DIMS, '--json'], { timeoutMs: 120_000 });

describe.skipIf(!HAVE_DATA)("a project's partitions keep to the kinds its targets serve", () => {
  it('with no kernel target the guards plan for the whole system: GPU and FPGA partitions among them', () => {
    const c = runCli(['compile', GCN, '-o', join(dir, 'all'), '--targets', 'runtime', '--profile', CORA]);
    expect(c.status, c.stderr).toBe(0);
    const plan = planOf('all');
    for (const g of guardsOf(plan)) expect(g.kinds).toBeUndefined();
    expect(
      devices(plan).some((d) => d !== 'cpu'),
      devices(plan).join(' '),
    ).toBe(true);
  });

  it('the guards of a wasm-only project pick CPU partitions alone, and its default run runs them on wasm', () => {
    const c = runCli(['compile', GCN, '-o', join(dir, 'cpu'), '--targets', 'wasm,runtime', '--profile', CORA]);
    expect(c.status, c.stderr).toBe(0);
    const plan = planOf('cpu');
    for (const g of guardsOf(plan)) expect(g.kinds).toEqual(['cpu']);
    expect(new Set(devices(plan))).toEqual(new Set(['cpu']));
    const r = runOn('cpu');
    expect(r.status, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout) as { stages: { backend: string }[] };
    expect(out.stages.map((s) => s.backend)).toEqual(out.stages.map(() => 'wasm'));
  });

  it('a project without guards is planned on its kinds at run time', () => {
    const c = runCli(['compile', GCN, '-o', join(dir, 'bare'), '--targets', 'wasm']);
    expect(c.status, c.stderr).toBe(0);
    const r = runOn('bare');
    expect(r.status, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout) as { stages: { backend: string }[] };
    expect(out.stages.map((s) => s.backend)).toEqual(out.stages.map(() => 'wasm'));
  });
});
