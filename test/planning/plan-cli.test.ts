/** `dype plan` and `dype run --json` from the command line (spawns dist/cli/main.js, built by npm test). */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));
const M = join(root, '..', 'shared', 'data', 'matrices');
const dype = (...args: string[]) =>
  spawnSync(process.execPath, [join(root, 'dist', 'cli', 'main.js'), ...args], { cwd: root, encoding: 'utf8' });
const gcn = [
  'examples/gcn.dy',
  '--input',
  `A=${join(M, 'ca-GrQc.mtx')}`,
  '--param',
  'f=64',
  '--param',
  'h=64',
  '--param',
  'c=16',
];

describe('dype plan', () => {
  it('prints the Pareto set with baselines', () => {
    const r = dype('plan', ...gcn, '--system', 'paper-2g2f');
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain('Pareto-optimal mappings');
    for (const b of ['gpu-only', 'static', 'heft']) expect(r.stdout).toContain(b);
    // Nothing ran: the figures say they are the model's, the planner's own time that it is measured.
    expect(r.stdout).toMatch(/planned in [\d.]+ ms measured/);
    expect(r.stdout).toContain('every time, energy and power below is modelled (the cost model for paper-2g2f)');
    expect(r.stdout).toContain('Baselines (modelled):');
  });
  it('--json follows the contract', () => {
    const r = dype('plan', ...gcn, '--system', 'paper-1g1f', '--objective', 'energy', '--json');
    expect(r.status, r.stderr).toBe(0);
    const j = JSON.parse(r.stdout);
    expect(j).toMatchObject({ kernel: 'gcn', system: 'paper-1g1f', objective: 'energy' });
    expect(typeof j.plan_ms).toBe('number');
    expect(j.features.A).toMatchObject({ rows: 5242, nnz: 28980 });
    expect(j.pareto.length).toBeGreaterThan(0);
    for (const m of j.pareto) {
      expect(m.stages.length).toBeGreaterThan(0);
      for (const s of m.stages) expect(s).toMatchObject({ ops: expect.any(Array), devices: expect.any(Array) });
      for (const k of ['period_ms', 'latency_ms', 'energy_j']) expect(m[k]).toBeGreaterThan(0);
      expect(m.clock).toBe('modelled');
    }
    const energies = j.pareto.map((m: { energy_j: number }) => m.energy_j);
    expect(energies[0]).toBe(Math.min(...energies));
    for (const b of ['gpu-only', 'static', 'heft'])
      for (const k of ['period_ms', 'latency_ms', 'energy_j']) expect(j.baselines[b][k]).toBeGreaterThan(0);
  });
  it('reports both energies and the figures over the stream; --energy-scope and --stream set the goal', () => {
    const plan = (...extra: string[]) => {
      const r = dype('plan', ...gcn, '--system', 'paper-1g1f', '--objective', 'energy', '--json', ...extra);
      expect(r.status, r.stderr).toBe(0);
      return JSON.parse(r.stdout);
    };
    const dflt = plan();
    // The documented defaults: system energy, the steady state of an unbounded stream.
    expect(dflt).toMatchObject({ energy_scope: 'system', stream_length: 'unbounded' });
    for (const m of dflt.pareto) {
      expect(m.energy_j).toBe(m.system_energy_j);
      expect(m.system_energy_j).toBeGreaterThanOrEqual(m.device_energy_j);
      expect(m.per_input_ms).toBe(m.period_ms);
      expect(m.period_ms).toBeGreaterThanOrEqual(m.root_complex_ms);
    }
    const one = plan('--energy-scope', 'device', '--stream', '1');
    expect(one).toMatchObject({ energy_scope: 'device', stream_length: 1 });
    for (const m of one.pareto) {
      expect(m.energy_j).toBe(m.device_energy_j);
      // One input at a time: fill and drain are all there is.
      expect(m.per_input_ms).toBe(m.latency_ms);
    }
    const devices = one.pareto.map((m: { device_energy_j: number }) => m.device_energy_j);
    expect(devices[0]).toBe(Math.min(...devices));
  });
  it('a bad --energy-scope or --stream is a usage error, exit 2', () => {
    const scope = dype('plan', ...gcn, '--energy-scope', 'wall');
    expect(scope.status).toBe(2);
    expect(scope.stderr).toMatch(/--energy-scope expects device or system, got 'wall'/);
    for (const bad of ['0', '2.5', 'many']) {
      const r = dype('plan', ...gcn, '--stream', bad);
      expect(r.status, bad).toBe(2);
      expect(r.stderr).toMatch(/--stream expects a positive whole number of inputs or 'unbounded'/);
    }
  });
  it('--no-p2p never makes the best period shorter', () => {
    const a = JSON.parse(dype('plan', ...gcn, '--json').stdout);
    const b = JSON.parse(dype('plan', ...gcn, '--json', '--no-p2p').stdout);
    expect(b.pareto[0].period_ms).toBeGreaterThanOrEqual(a.pareto[0].period_ms);
  });
  it('every baseline keeps to the power cap, and one without a mapping says why', () => {
    const karateSpmv = ['examples/spmv.dy', '--input', `A=${join(M, 'karate.mtx')}`, '--input', 'x=@ones'];
    const r = dype('plan', ...karateSpmv, '--power-cap', '300', '--json');
    expect(r.status, r.stderr).toBe(0);
    const j = JSON.parse(r.stdout);
    for (const [name, m] of Object.entries(j.baselines) as [string, { power_w: number } | null][]) {
      expect(typeof j.baseline_notes[name], name).toBe('string');
      if (m) expect(m.power_w, name).toBeLessThanOrEqual(300);
    }
    // Uncapped, HEFT's schedule on this system draws more than 300 W: capped, it runs on fewer devices.
    const free = JSON.parse(dype('plan', ...karateSpmv, '--json').stdout);
    expect(free.baselines.heft.power_w).toBeGreaterThan(300);
    expect(j.baseline_notes.heft).toBe('heft on the devices the power cap allows');
    // The GPU is there: its baseline is not "not applicable" but over the cap.
    expect(j.baselines['gpu-only']).toBeNull();
    expect(j.baseline_notes['gpu-only']).toMatch(/breaks the power cap/);
    const text = dype('plan', ...karateSpmv, '--power-cap', '300');
    expect(text.stdout).toMatch(/gpu-only +\(none: every gpu-only mapping breaks the power cap or the latency bound\)/);
    expect(text.stdout).not.toMatch(/not applicable/);
  });
  it('--power-cap takes a positive decimal number of watts; anything else is a usage error, exit 2', () => {
    for (const bad of ['0x190', 'Infinity', '1e400', '0', '-5', 'NaN', '']) {
      const r = dype('plan', ...gcn, '--power-cap', bad);
      expect(r.status, bad).toBe(2);
      expect(r.stderr, bad).toMatch(/--power-cap expects a positive decimal number of watts/);
    }
  });
  it('an infeasible power cap is one clear error, exit 1', () => {
    const r = dype('plan', ...gcn, '--power-cap', '50');
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/^--power-cap: error DY3030: no mapping meets power cap 50 W: the cheapest needs \d+ W/);
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });
  it("a system file's infeasible power cap or latency bound is DY3030 at that field's line, with what the best mapping needs", () => {
    const dir = mkdtempSync(join(tmpdir(), 'dype-sys-'));
    const preset = JSON.parse(readFileSync(join(root, 'systems', 'paper-1g1f.json'), 'utf8')) as Record<
      string,
      unknown
    >;
    for (const [field, value, want] of [
      ['powerCapW', 50, /no mapping meets power cap 50 W: the cheapest needs \d+ W$/],
      [
        'latencyBoundMs',
        1e-9,
        /no mapping meets the latency bound of 1e-9 ms \(constraints\.latencyBoundMs\): the fastest takes [\d.e-]+ ms$/,
      ],
    ] as const) {
      const file = join(dir, `${field}.json`);
      const text = JSON.stringify({ ...preset, constraints: { [field]: value } }, null, 2);
      writeFileSync(file, text);
      const line = text.split('\n').findIndex((l) => l.includes(`"${field}"`)) + 1;
      const r = dype('plan', ...gcn, '--system', file);
      expect(r.status, field).toBe(1);
      expect(r.stderr.trim().split('\n'), field).toHaveLength(1);
      expect(r.stderr.trim(), field).toMatch(
        new RegExp(`^${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:${line}: error DY3030: `),
      );
      expect(r.stderr.trim(), field).toMatch(want);
    }
  });
  it('a bad system file is one clear error naming file, line and field, exit 1', () => {
    const dir = mkdtempSync(join(tmpdir(), 'dype-sys-'));
    const bad = join(dir, 'bad.json');
    writeFileSync(
      bad,
      '{\n  "name": "x",\n  "description": "y",\n  "devices": [\n    { "id": "cpu", "kind": "cpu", "name": "c", "count": 1, "peakGflops": { "f32": 1, "f64": 1, "i32": 1, "i64": 1 }, "memBandwidthGBs": -3, "launchOverheadUs": 1, "idlePowerW": 1, "waitingPowerW": 1, "activePowerW": 2, "memoryGB": 1 }\n  ]\n}\n',
    );
    const r = dype('plan', ...gcn, '--system', bad);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain(`${bad}:5:`);
    expect(r.stderr).toContain('memBandwidthGBs');
    const m = dype('plan', ...gcn, '--system', join(dir, 'missing.json'));
    expect(m.status).toBe(1);
    expect(m.stderr).toContain('DY3010');
  });
  it('a missing dim is one clear error', () => {
    const r = dype('plan', 'examples/gcn.dy', '--input', `A=${join(M, 'ca-GrQc.mtx')}`);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/DY3013: dim 'f' is not bound/);
  });
});

describe('dype run --json', () => {
  it('fills features, partition and predicted', () => {
    const r = dype(
      'run',
      'examples/spmv.dy',
      '--input',
      `A=${join(M, 'bcsstk13.mtx')}`,
      '--input',
      'x=@random',
      '--json',
      '--system',
      'paper-1g1f',
    );
    expect(r.status, r.stderr).toBe(0);
    const j = JSON.parse(r.stdout);
    expect(j.features.A).toMatchObject({ rows: 2003, nnz: 83883 });
    expect(j.features.A.row_len_cv).toBeGreaterThan(0);
    expect(j.partition.stages[0].ops).toEqual(['op0']);
    expect(j.predicted.latency_ms).toBeGreaterThan(0);
    expect(j.partition).toMatchObject({ energy_scope: 'system', stream_length: 'unbounded' });
    expect(j.predicted.system_energy_j).toBeGreaterThanOrEqual(j.predicted.device_energy_j);
    // Which figures were measured here and which the model gave, as run --project says it.
    expect(j.timing.clock).toBe('measured');
    expect(j.compile.clock).toBe('measured');
    expect(j.predicted.clock).toBe('modelled');
  });
  it('the text names the backend and the clock of every time', () => {
    const r = dype('run', 'examples/spmv.dy', '--input', `A=${join(M, 'karate.mtx')}`, '--input', 'x=@ones');
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toMatch(
      /^ {2}time: median [\d.]+ ms, min [\d.]+ ms over 1 run\(s\), measured on this host by the (native|wasm) backend /m,
    );
    expect(r.stdout).toMatch(/^ {2}compile: [\d.]+ ms measured/m);
  });
});
