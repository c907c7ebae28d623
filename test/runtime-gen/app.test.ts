/**
 * `dype compile examples/gcn.dy --profile ...` emits the runtime and the
 * native projects, `dype build --emulate` builds the CUDA emulation and the
 * FPGA C-simulation libraries; the generated gcn.runtime.ts type-checks
 * with the project's compiler settings (tsc on examples/app, which links it
 * through the package's `dype/runtime` export); examples/app runs a
 * sequence of real graphs for real on wasm + cuda-emu + fpga-csim, switches
 * partitions with logged reasons, re-plans out of range, reports per input
 * the backend of every stage, streams the sequence pipelined, changes the
 * objective to energy (the energy guards choose, the log says so, switches
 * are weighed in joules), and its outputs equal the reference
 * interpreter's. Needs dist/ (npm test builds it first) and g++.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { interpretKernel } from '../../interp/interpret.js';
import { toCsr } from '../../runtime/io/convert.js';
import { loadMatrix } from '../../runtime/io/load.js';
import { Rng, seedFor } from '../../runtime/random.js';
import type { DenseTensor } from '../../runtime/tensor.js';
import { optimised } from '../helpers/compile.js';
import { example, REPO_ROOT, runCliAsync } from '../helpers/cli.js';

const M = join(REPO_ROOT, '..', 'shared', 'data', 'matrices');
const APP = join(REPO_ROOT, 'examples', 'app');
const OUT = join(APP, 'out');
const HAVE_DATA = existsSync(M);
const PROFILES = ['cora.cites', 'ca-GrQc.mtx', 'facebook_combined.txt', 'jazz.mtx'];
/** The app's default sequence: graphs changing in runs of 1-4, and the same graph again. */
/** What the app runs after setObjective('energy'). */
const ENERGY_SEQUENCE = ['jazz.mtx', 'jazz.mtx', 'jazz.mtx', 'cora.cites', 'cora.cites', 'cora.cites'];
const SEQUENCE = [
  'karate.mtx',
  'jazz.mtx',
  'jazz.mtx',
  'cora.cites',
  'cora.cites',
  'cora.cites',
  'ca-GrQc.mtx',
  'ca-GrQc.mtx',
  'ca-GrQc.mtx',
  'ca-GrQc.mtx',
  'facebook_combined.txt',
  'facebook_combined.txt',
  'facebook_combined.txt',
  'cora.cites',
  'cora.cites',
  'cora.cites',
  'karate.mtx',
];

interface Line {
  input: string;
  objective: string;
  units: string;
  selected: { id: number; replanned: boolean };
  stages: { ops: string[]; devices: string[]; backend: string; ms: number }[];
  partition: { id: number; label: string; replanned: boolean };
  switched: boolean;
  reason: string;
  path: string[];
  replan: { reason: string } | null;
  ySum: number;
  yAbsSum: number;
}

let compiled: { status: number | null; stderr: string };
let built: { status: number | null; stderr: string; stdout: string };
beforeAll(async () => {
  if (!HAVE_DATA) return;
  rmSync(OUT, { recursive: true, force: true });
  const args = [
    'compile',
    example('gcn.dy'),
    '--targets',
    'wasm,cuda,hls,runtime',
    '-o',
    OUT,
    ...PROFILES.flatMap((p) => ['--profile', `A=${join(M, p)}`]),
    '--profile',
    'f=16',
    '--profile',
    'h=16',
    '--profile',
    'c=16',
  ];
  compiled = await runCliAsync(args, { timeoutMs: 120_000 });
  built = await runCliAsync(['build', OUT, '--emulate'], { timeoutMs: 300_000 });
}, 430_000);

describe.skipIf(!HAVE_DATA)('dype compile --profile: the generated runtime and examples/app', () => {
  it('writes the runtime, the C++ dispatch header, plan.json and the build-guards IR', () => {
    expect(compiled.stderr).toBe('');
    expect(compiled.status).toBe(0);
    for (const f of [
      'runtime/gcn.runtime.ts',
      'runtime/gcn_dispatch.h',
      'plan.json',
      'ir/build-guards.ir',
      'wasm/gcn.wasm',
    ])
      expect(existsSync(join(OUT, f)), f).toBe(true);
    const ts = readFileSync(join(OUT, 'runtime/gcn.runtime.ts'), 'utf8');
    expect(ts).toMatch(/from 'dype\/runtime';/);
    expect(ts).not.toMatch(/from '\.\.?\/.*(ir|passes|frontend|codegen|interp)\//);
    for (const o of ['throughput', 'energy', 'latency'])
      expect(ts).toMatch(
        new RegExp(
          `export function gcnGuard_${o}\\(f: GuardFeatures\\): number \\{\\n\\s+(if \\(\\(f\\["A\\.|void f;)`,
        ),
      );
    const header = readFileSync(join(OUT, 'runtime/gcn_dispatch.h'), 'utf8');
    for (const o of ['throughput', 'energy', 'latency'])
      expect(header).toMatch(new RegExp(`inline int gcn_gcn_dispatch_${o}\\(const gcn_gcn_features& f\\)`));
    const plan = JSON.parse(readFileSync(join(OUT, 'plan.json'), 'utf8'));
    expect(plan.version).toBe(5);
    const k = plan.kernels.gcn;
    expect(k.objective).toBe('throughput');
    expect(k.profiles).toHaveLength(PROFILES.length);
    for (const p of k.profiles) expect(p.pareto.length).toBeGreaterThan(0);
    for (const o of ['throughput', 'energy', 'latency']) {
      const g = k.guards[o];
      expect(g.objective).toBe(o);
      expect(g.partitions.length).toBeGreaterThanOrEqual(1);
      for (const p of g.partitions) expect(p.fallbacks).toHaveLength(g.partitions.length - 1);
      expect(g.trainingAccuracy).toBeGreaterThan(0.5);
      expect(typeof g.meanLossPct).toBe('number');
      expect(g.ranges['dim.f']).toEqual([16, 16]);
      // Each objective's partitions in the table, as its guards number them.
      expect(k.partitionIds[o]).toHaveLength(g.partitions.length);
      k.partitionIds[o].forEach((id: number, i: number) => {
        expect(k.partitions[id].label).toBe(g.partitions[i].label);
        expect(k.partitions[id].objectives).toContain(o);
      });
    }
    expect(k.guards.throughput.partitions.length).toBeGreaterThan(1);
    expect(k.partitionIds.throughput).toEqual(k.guards.throughput.partitions.map((_: unknown, i: number) => i));
    expect(plan.model.costModel).toBeDefined();
    expect(plan.system.name).toBe('paper-1g1f');
    expect(readFileSync(join(OUT, 'ir/build-guards.ir'), 'utf8')).toMatch(/guards = \["p0:/);
  });

  it('dype build --emulate builds the CUDA emulation and the FPGA C simulation, saying so', () => {
    expect(built.stderr).toBe('');
    expect(built.status).toBe(0);
    expect(built.stdout).toMatch(/built .*libgcn_cuda_emu\.so: backend cuda-emu \(--emulate\)/);
    expect(built.stdout).toMatch(/built .*libgcn_fpga_csim\.so: backend fpga-csim \(--emulate\)/);
  });

  it('type-checks the generated runtime and the app with the project settings, runs it on wasm + cuda-emu + fpga-csim, and its outputs are the reference', () => {
    execFileSync(process.execPath, [join(REPO_ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', APP], {
      cwd: REPO_ROOT,
      encoding: 'utf8',
    });
    // The generated runtime alone under the settings demanding applications use, the library's declarations
    // checked too: its guards index a record (noUncheckedIndexedAccess), its partition table has the documented
    // type, and the library's optional fields take undefined (exactOptionalPropertyTypes).
    const strict = join(OUT, 'tsconfig.strict.json');
    writeFileSync(
      strict,
      JSON.stringify({
        extends: '../tsconfig.json',
        compilerOptions: {
          noEmit: true,
          noUncheckedIndexedAccess: true,
          exactOptionalPropertyTypes: true,
          noPropertyAccessFromIndexSignature: true,
          skipLibCheck: false,
        },
        include: ['runtime/*.runtime.ts'],
        exclude: [],
      }),
    );
    const checked = spawnSync(
      process.execPath,
      [join(REPO_ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', strict],
      {
        cwd: REPO_ROOT,
        encoding: 'utf8',
      },
    );
    expect(checked.status, checked.stdout).toBe(0);
    // Without --emulate the app asks for the real libraries, which this host has not built; the emulated ones are
    // there, and the error says so (plain "run dype build" would build the emulated ones again).
    const real = spawnSync(process.execPath, [join(OUT, 'js', 'main.js'), '--json', '--matrices', M], {
      cwd: REPO_ROOT,
      encoding: 'utf8',
    });
    expect(real.status).not.toBe(0);
    expect(real.stderr.trim()).toMatch(
      /^\S*libgcn_(cuda|fpga)\.so: error DY3043: the (cuda|fpga) library \((cuda|xrt)\) is not built, only its emulated build \((cuda-emu|fpga-csim)\): run with --emulate .* or dype build \S+ --real where .*$/,
    );
    // A graph that cannot be read: one line naming it, exit 1, before anything runs (no stack trace).
    const missing = spawnSync(
      process.execPath,
      [join(OUT, 'js', 'main.js'), '--emulate', '--matrices', M, 'karate.mtx', 'nosuch.mtx'],
      { cwd: REPO_ROOT, encoding: 'utf8' },
    );
    expect(missing.status).toBe(1);
    expect(missing.stdout).toBe('');
    expect(missing.stderr.trim()).toMatch(/^\S*nosuch\.mtx: error DY3010: .*$/);
    const stdout = execFileSync(
      process.execPath,
      [join(OUT, 'js', 'main.js'), '--emulate', '--json', '--matrices', M],
      { cwd: REPO_ROOT, encoding: 'utf8', maxBuffer: 64 << 20 },
    );
    const lines = stdout
      .trim()
      .split('\n')
      .map(
        (l) =>
          JSON.parse(l) as Line & {
            summary?: {
              runs: number;
              switches: number;
              sequentialRuns: number;
              sequentialSwitches: number;
              byPartition: Record<string, number>;
              replans: number;
              traceEvents: number;
              byBackend: Record<string, { stages: number }>;
              streamYSums: number[];
              byObjective: Record<string, number>;
              [time: string]: unknown;
            };
          },
      );
    const runs = lines.filter((l) => l.summary === undefined && l.objective === 'throughput');
    const energy = lines.filter((l) => l.summary === undefined && l.objective !== 'throughput');
    const summary = lines.find((l) => l.summary)!.summary!;
    expect(runs.map((r) => r.input)).toEqual(SEQUENCE);
    // After setObjective('energy'): the energy guards (or a re-plan for energy) pick, switches are weighed in joules.
    expect(energy.map((r) => r.input)).toEqual(ENERGY_SEQUENCE);
    // The sequence one at a time and streamed, then the energy runs.
    expect(summary.byObjective).toEqual({ throughput: 2 * SEQUENCE.length, energy: ENERGY_SEQUENCE.length });
    // Every count of the summary is of the same inputs: all three parts (the sequential ones apart).
    expect(summary.runs).toBe(2 * SEQUENCE.length + ENERGY_SEQUENCE.length);
    expect(Object.values(summary.byPartition).reduce((a, n) => a + n, 0)).toBe(summary.runs);
    expect(summary.sequentialRuns).toBe(SEQUENCE.length);
    expect(summary.switches).toBeGreaterThanOrEqual(summary.sequentialSwitches);
    const table = JSON.parse(readFileSync(join(OUT, 'plan.json'), 'utf8')).kernels.gcn.partitions as {
      id: number;
      objectives: string[];
    }[];
    for (const r of energy) {
      expect(r.objective).toBe('energy');
      expect(r.units).toBe('J');
      if (!r.replan) expect(table[r.selected.id]!.objectives).toContain('energy');
      if (r.selected.id !== r.partition.id)
        expect(r.reason).toMatch(/ J <= switch cost .* J$|minimum dwell|cannot run/);
      if (r.switched) expect(r.reason).toMatch(/ J > switch cost .* J$|cannot run/);
    }
    // Every stage ran on the backend of its device, and the sequence used the CPU and an emulated device.
    for (const r of [...runs, ...energy])
      for (const st of r.stages)
        expect(st.backend, `${r.input}: ${st.devices.join('+')}`).toBe(
          st.devices[0]!.startsWith('cpu') ? 'wasm' : st.devices[0]!.startsWith('gpu') ? 'cuda-emu' : 'fpga-csim',
        );
    expect(Object.keys(summary.byBackend)).toContain('wasm');
    expect(Object.keys(summary.byBackend).some((b) => b === 'cuda-emu' || b === 'fpga-csim')).toBe(true);
    // Every time in the summary names its clock: the model's or the wall clock's (measured).
    const times = Object.keys(summary).filter((k) => k.endsWith('Ms'));
    expect(times.length).toBeGreaterThan(0);
    for (const k of times) expect(k, 'a time without its clock').toMatch(/Model|Measured/);
    // Streamed, the same outputs as one at a time.
    summary.streamYSums.forEach((y, i) =>
      expect(Math.abs(y - runs[i]!.ySum), `stream ${runs[i]!.input}`).toBeLessThanOrEqual(
        1e-4 * Math.max(1, runs[i]!.yAbsSum),
      ),
    );
    for (const r of runs) {
      expect(r.partition.label).toMatch(/^(cpu|gpu|fpga) x\d/);
      expect(r.reason.length).toBeGreaterThan(5);
      if (!r.replan) expect(r.path.length).toBeGreaterThan(0);
    }
    expect(summary.sequentialSwitches).toBeGreaterThanOrEqual(1);
    expect(runs.filter((r) => r.switched).length).toBe(summary.sequentialSwitches);
    for (const r of runs.filter((x) => x.switched)) expect(r.reason).toMatch(/> switch cost|cannot run/);
    // karate is smaller than anything the guards were built for.
    const karate = runs.find((r) => r.input === 'karate.mtx')!;
    expect(karate.replan?.reason).toMatch(/A\.rows = 34 is below the guards' range/);
    expect(summary.replans).toBeGreaterThanOrEqual(1);
    // The same inputs through the reference interpreter (the app's generator, seeds and widths).
    const kernel = optimised(readFileSync(example('gcn.dy'), 'utf8')).kernels[0]!;
    const random = (shape: number[], name: string): DenseTensor => {
      const rng = new Rng(seedFor(42, name));
      const data = new Float64Array(shape[0]! * shape[1]!);
      for (let i = 0; i < data.length; i++) data[i] = rng.uniform(-1, 1);
      return { format: 'dense', shape, data };
    };
    const W1 = random([16, 16], 'W1');
    const W2 = random([16, 16], 'W2');
    for (const g of new Set(SEQUENCE)) {
      const A = toCsr(loadMatrix(join(M, g)));
      const Y = interpretKernel(kernel, {
        tensors: new Map<string, DenseTensor | typeof A>([
          ['A', A],
          ['X', random([A.rows, 16], `X:${g}`)],
          ['W1', W1],
          ['W2', W2],
        ]),
        scalars: new Map(),
      }).outputs.get('Y') as DenseTensor;
      let sum = 0;
      let abs = 0;
      for (const v of Y.data) {
        sum += v;
        abs += Math.abs(v);
      }
      for (const r of [...runs, ...energy].filter((x) => x.input === g)) {
        expect(Math.abs(r.ySum - sum), `${g} sum`).toBeLessThanOrEqual(1e-4 * Math.max(1, abs));
        expect(Math.abs(r.yAbsSum - abs), `${g} abs sum`).toBeLessThanOrEqual(1e-4 * Math.max(1, abs));
      }
    }
    const trace = JSON.parse(readFileSync(join(OUT, 'trace.json'), 'utf8')) as {
      traceEvents: { ph: string; pid: number }[];
    };
    expect(trace.traceEvents.filter((e) => e.ph === 'X').length).toBe(
      summary.traceEvents - trace.traceEvents.filter((e) => e.ph === 'i').length,
    );
  }, 400_000);
});

describe('dype compile: runtime target errors', () => {
  it('--targets runtime without --profile is DY6300, a profile naming nothing DY6301, a rectangular graph for [n, n] DY6302; none writes anything', async () => {
    const none = join(APP, 'out-none');
    const bad = join(APP, 'out-bad');
    const rect = join(APP, 'out-rect');
    const [a, b, c] = await Promise.all([
      runCliAsync(['compile', example('gcn.dy'), '--targets', 'runtime', '-o', none]),
      runCliAsync(['compile', example('gcn.dy'), '--targets', 'runtime', '--profile', 'Z=3', '-o', bad]),
      runCliAsync([
        'compile',
        example('gcn.dy'),
        '--targets',
        'runtime',
        '--profile',
        `A=${join(M, 'ash219.mtx')}`,
        '-o',
        rect,
      ]),
    ]);
    expect(c.status).toBe(1);
    if (HAVE_DATA)
      expect(c.stderr).toMatch(
        /error DY6302: --profile A=.*ash219\.mtx: the matrix is 219 x 85, but kernel gcn declares A as \[n, n\] \(square\)/,
      );
    expect(a.status).toBe(1);
    expect(a.stderr).toMatch(/error DY6300: the runtime target needs profile inputs/);
    expect(b.status).toBe(1);
    expect(b.stderr).toMatch(/error DY6301: --profile Z: no kernel of .*gcn\.dy has a parameter or dim named 'Z'/);
    for (const d of [none, bad, rect]) {
      expect(existsSync(join(d, 'runtime'))).toBe(false);
      rmSync(d, { recursive: true, force: true });
    }
  });
});
