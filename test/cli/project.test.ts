/**
 * `dype build` and `dype run --project`: the issue's done-when command on
 * gcn (a stage on wasm and one on cuda-emu or fpga-csim, outputs equal the
 * reference run), `--objective` choosing whose guards pick (plan.json has
 * every objective's), partitions written out (a split stage among them), and
 * every bad input as one clear error with exit code 1 (2 for usage), no
 * output file written: an unbuilt library names the file and the build
 * command, a project of another program or another version of it is
 * refused, as is a plan.json of an older version, a bad partition says what
 * is wrong.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanup, example, freshDir, REPO_ROOT, runCliAsync } from '../helpers/cli.js';

const M = join(import.meta.dirname, '..', '..', '..', 'shared', 'data', 'matrices');
const HAVE = existsSync(M) && spawnSync('g++', ['--version']).status === 0;
const dir = freshDir('dype-project-');
const out = join(dir, 'out');
const GCN_INPUTS = [
  '--input',
  `A=${join(M, 'cora.cites')}`,
  '--input',
  'X=@random',
  '--input',
  'W1=@random',
  '--input',
  'W2=@random',
  '--param',
  'f=16',
  '--param',
  'h=16',
  '--param',
  'c=16',
];
afterAll(() => cleanup(dir));

/** `dype run gcn.dy --project out` on cora with `args`. */
const runGcn = (...args: string[]): ReturnType<typeof runCliAsync> =>
  runCliAsync(['run', example('gcn.dy'), '--project', out, ...args, ...GCN_INPUTS]);

interface RunJson {
  backend: string;
  threads: number;
  emulated: boolean;
  emulate_allowed: boolean;
  partition: {
    source: string;
    label: string;
    id?: number;
    objective: string;
    decision_ms?: number;
    decision_reused?: boolean;
    decision_clock?: string;
  };
  stages: {
    ops: string[];
    devices: string[];
    backend: string;
    ms: number;
    bytes_in: number;
    bytes_out: number;
    predicted_ms: number;
    threads_per_op?: Record<string, number>;
  }[];
  timing: { runs: number; median_ms: number; clock: string };
  predicted: { clock: string };
}

/** The values of a Matrix Market array file. */
const values = (path: string): number[] =>
  readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l !== '' && !l.startsWith('%'))
    .slice(1)
    .map(Number);

let built: { status: number | null; stdout: string; stderr: string };
beforeAll(async () => {
  if (!HAVE) return;
  const c = await runCliAsync(
    [
      'compile',
      example('gcn.dy'),
      '-o',
      out,
      '--targets',
      'wasm,cuda,hls,runtime',
      ...['cora.cites', 'ca-GrQc.mtx', 'jazz.mtx'].flatMap((m) => ['--profile', `A=${join(M, m)}`]),
      '--profile',
      'f=16',
      '--profile',
      'h=16',
      '--profile',
      'c=16',
    ],
    { timeoutMs: 120_000 },
  );
  expect(c.status, c.stderr).toBe(0);
  // The libraries are built after the test of what is missing without them (below, first).
}, 130_000);

describe.skipIf(!HAVE)('dype build and dype run --project', () => {
  it('without built libraries: DY3043 naming the library and the command that builds it; no output file', async () => {
    const y = join(dir, 'unbuilt.mtx');
    const r = await runCliAsync([
      'run',
      example('gcn.dy'),
      '--project',
      out,
      '--partition',
      'cpu:op0|gpu:op1-op3',
      '--emulate',
      ...GCN_INPUTS,
      '--out',
      `Y=${y}`,
    ]);
    expect(r.status).toBe(1);
    expect(r.stderr.trim()).toBe(
      `${join(out, 'cuda', 'libgcn_cuda_emu.so')}: error DY3043: the emulated cuda library is not built: run dype build ${out} --emulate`,
    );
    expect(existsSync(y)).toBe(false);
    built = await runCliAsync(['build', out, '--emulate', '--json'], { timeoutMs: 300_000 });
  }, 330_000);

  it('dype build --emulate says what it built, as which backend, and why', () => {
    expect(built.status, built.stderr).toBe(0);
    const j = JSON.parse(built.stdout) as {
      built: { family: string; backend: string; library: string; why: string }[];
    };
    expect(j.built.map((b) => [b.family, b.backend, b.why])).toEqual([
      ['cuda', 'cuda-emu', '--emulate'],
      ['fpga', 'fpga-csim', '--emulate'],
    ]);
    for (const b of j.built) expect(existsSync(b.library)).toBe(true);
  });

  it('--partition auto --emulate --json: the guards\u2019 partition runs on wasm and an emulated device; outputs equal the reference run', async () => {
    const y = join(dir, 'auto.mtx');
    const ref = join(dir, 'ref.mtx');
    const [r, f] = await Promise.all([
      runCliAsync(
        [
          'run',
          example('gcn.dy'),
          '--project',
          out,
          '--partition',
          'auto',
          '--emulate',
          ...GCN_INPUTS,
          '--out',
          `Y=${y}`,
          '--json',
        ],
        { timeoutMs: 120_000 },
      ),
      runCliAsync(['run', example('gcn.dy'), '--backend', 'reference', ...GCN_INPUTS, '--out', `Y=${ref}`]),
    ]);
    expect(r.status, r.stderr).toBe(0);
    expect(f.status, f.stderr).toBe(0);
    const j = JSON.parse(r.stdout) as RunJson;
    expect(j.emulated).toBe(true);
    expect(j.emulate_allowed).toBe(true);
    expect(j.partition.source).toMatch(/^auto: the project's throughput guards \(path /);
    expect(j.partition.objective).toBe('throughput');
    // One run of a graph the runtime never saw: decided on it (nothing kept to reuse), measured.
    expect(j.partition.decision_reused).toBe(false);
    expect(j.partition.decision_clock).toBe('measured');
    expect(j.partition.decision_ms).toBeGreaterThan(0);
    const backends = j.stages.map((s) => s.backend);
    expect(backends).toContain('wasm');
    expect(backends.some((b) => b === 'cuda-emu' || b === 'fpga-csim')).toBe(true);
    expect(j.backend).toBe([...new Set(backends)].join('+'));
    for (const s of j.stages) {
      expect(s.ms).toBeGreaterThan(0);
      expect(s.predicted_ms).toBeGreaterThan(0);
      // A CPU stage runs each op on the threads the system's CPU model picks, at most --threads.
      if (s.backend !== 'wasm') expect(s.threads_per_op).toBeUndefined();
      else {
        expect(Object.keys(s.threads_per_op!)).toEqual(s.ops);
        for (const n of Object.values(s.threads_per_op!)) expect(n >= 1 && n <= j.threads, String(n)).toBe(true);
      }
    }
    expect(j.stages.reduce((a, s) => a + s.bytes_in, 0)).toBeGreaterThan(0);
    expect(j.timing.clock).toBe('measured');
    expect(j.predicted.clock).toBe('modelled');
    const [got, want] = [values(y), values(ref)];
    expect(got.length).toBe(want.length);
    for (let i = 0; i < want.length; i++)
      expect(Math.abs(got[i]! - want[i]!), `Y[${i}]`).toBeLessThanOrEqual(1e-4 * Math.max(1, Math.abs(want[i]!)));
  }, 120_000);

  it('--objective energy: the project\u2019s energy guards pick the partition; the JSON names the objective', async () => {
    const plan = JSON.parse(readFileSync(join(out, 'plan.json'), 'utf8')) as {
      version: number;
      kernels: {
        gcn: {
          objective: string;
          objectives: string[];
          guards: Record<string, unknown>;
          partitionIds: Record<string, number[]>;
          partitions: { id: number; objectives: string[] }[];
        };
      };
    };
    expect(plan.version).toBe(5);
    const k = plan.kernels.gcn;
    expect(k.objective).toBe('throughput');
    expect(k.objectives).toEqual(['throughput', 'energy', 'latency']);
    expect(Object.keys(k.guards)).toEqual(['throughput', 'energy', 'latency']);
    const r = await runCliAsync(
      ['run', example('gcn.dy'), '--project', out, '--objective', 'energy', '--emulate', ...GCN_INPUTS, '--json'],
      { timeoutMs: 120_000 },
    );
    expect(r.status, r.stderr).toBe(0);
    const j = JSON.parse(r.stdout) as RunJson;
    expect(j.partition.objective).toBe('energy');
    expect(j.partition.source).toMatch(/^auto: the project's energy guards \(path /);
    expect(k.partitionIds['energy']).toContain(j.partition.id);
    expect(k.partitions[j.partition.id!]!.objectives).toContain('energy');
  }, 120_000);

  it('--emulate says what ran emulated (an all-CPU partition: nothing); without it, the emulated build that is there is named', async () => {
    const [cpu, json, real] = await Promise.all([
      runGcn('--partition', 'cpu:op0-op3', '--emulate'),
      runGcn('--partition', 'cpu:op0-op3', '--emulate', '--json'),
      runGcn('--partition', 'cpu:op0|gpu:op1-op3'),
    ]);
    expect(cpu.status, cpu.stderr).toBe(0);
    expect(cpu.stdout).toMatch(/\(--emulate: GPU\/FPGA stages may run in the emulated builds; none did\)\n/);
    expect(cpu.stdout).toMatch(/^ {2}time: .* measured on this host \(wasm\)/m);
    expect(cpu.stdout).not.toMatch(/note: /);
    expect(json.status, json.stderr).toBe(0);
    const j = JSON.parse(json.stdout) as RunJson;
    expect([j.backend, j.emulated, j.emulate_allowed]).toEqual(['wasm', false, true]);
    // `dype build` made the emulated library here; "run dype build" alone would make it again.
    expect(real.status).toBe(1);
    expect(real.stderr.trim()).toBe(
      `${join(out, 'cuda', 'libgcn_cuda.so')}: error DY3043: the cuda library (cuda) is not built, only its emulated build (cuda-emu): run with --emulate (openProject's emulate: true) to use it, or dype build ${out} --real where the CUDA toolkit and an NVIDIA GPU are`,
    );
  }, 60_000);

  // Regression (the guarded runtime's trace held the warm-up as well, a fixed partition's only the last run).
  it('--trace with --repeat N draws the N timed runs, with guards and with a fixed partition', async () => {
    const traced = (partition: string, name: string): ReturnType<typeof runGcn> =>
      runGcn('--partition', partition, '--emulate', '--repeat', '3', '--trace', join(dir, name), '--json');
    const runs = await Promise.all([traced('auto', 'auto.trace.json'), traced('cpu:op0-op3', 'fixed.trace.json')]);
    for (const [r, name] of [
      [runs[0], 'auto.trace.json'],
      [runs[1], 'fixed.trace.json'],
    ] as const) {
      expect(r.status, r.stderr).toBe(0);
      const j = JSON.parse(r.stdout) as RunJson;
      const instances = j.stages.reduce((n, st) => n + st.devices.length, 0);
      const events = (
        JSON.parse(readFileSync(join(dir, name), 'utf8')) as {
          traceEvents: { ph: string; args?: { clock?: string } }[];
        }
      ).traceEvents;
      const measured = events.filter((e) => e.ph === 'X' && e.args?.clock === 'measured');
      expect(measured.length, name).toBe(3 * instances);
    }
  }, 60_000);

  it('a partition written out, with a stage split over both FPGAs of paper-2g2f, prints each stage\u2019s backend', async () => {
    const r = await runCliAsync(
      [
        'run',
        example('gcn.dy'),
        '--project',
        out,
        '--system',
        'paper-2g2f',
        '--partition',
        'gpu:T1|fpga*2:H1-Y',
        '--emulate',
        ...GCN_INPUTS,
      ],
      { timeoutMs: 120_000 },
    );
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/stage 0 \[op0\] on gpu0: cuda-emu, [\d.]+ ms measured/);
    expect(r.stdout).toMatch(/stage 1 \[op1 op2 op3\] on fpga0\+fpga1: fpga-csim, [\d.]+ ms measured/);
    // The emulated stages are named where the time is, and their times said to be the emulation's.
    expect(r.stdout).toMatch(/; cuda-emu and fpga-csim did\)\n/);
    expect(r.stdout).toMatch(/^ {2}time: .* measured on this host \(cuda-emu \+ fpga-csim\)/m);
    expect(r.stdout).toMatch(
      /^ {2}note: cuda-emu and fpga-csim ran on this host's CPU: their measured times are the emulation's, not a device's$/m,
    );
  }, 120_000);

  it('bad partitions, mismatched projects and misused options are one clear error each; nothing is written', async () => {
    const y = join(dir, 'never.mtx');
    const run = (extra: string[], project = out) =>
      runCliAsync([
        'run',
        example('gcn.dy'),
        '--project',
        project,
        '--emulate',
        ...GCN_INPUTS,
        '--out',
        `Y=${y}`,
        ...extra,
      ]);
    const other = join(dir, 'other');
    cpSync(out, other, { recursive: true });
    const info = JSON.parse(readFileSync(join(other, 'project.json'), 'utf8'));
    writeFileSync(join(other, 'project.json'), JSON.stringify({ ...info, programHash: '0'.repeat(64) }));
    // A plan.json of version 3 (one objective's guards) from before guards for every objective.
    const old = join(dir, 'old');
    cpSync(out, old, { recursive: true });
    const plan = JSON.parse(readFileSync(join(old, 'plan.json'), 'utf8'));
    writeFileSync(
      join(old, 'plan.json'),
      JSON.stringify({
        ...plan,
        version: 3,
        kernels: { gcn: { ...plan.kernels.gcn, guards: plan.kernels.gcn.guards.throughput } },
      }),
    );
    const cases: [string[], number, RegExp, string?][] = [
      [['--partition', 'gpu:op0-op2'], 1, /error DY3047: ops op3 are in no stage/],
      [
        ['--partition', 'gpu:op1-op3|cpu:op0'],
        1,
        /error DY3047: stage 'gpu:op1-op3' must continue the kernel's ops in order from op0/,
      ],
      [
        ['--partition', 'tpu:op0-op3'],
        1,
        /error DY3047: stage 'tpu:op0-op3': system paper-1g1f has no device 'tpu' \(it has cpu, gpu, fpga\)/,
      ],
      [
        ['--partition', 'gpu*3:op0-op3'],
        1,
        /error DY3047: stage 'gpu\*3:op0-op3': gpu has 1 instance\(s\); asked for 3/,
      ],
      [['--partition', 'gpu:op0,Z'], 1, /error DY3047: no op or result 'Z' in kernel gcn/],
      [
        ['--partition', 'cpu:op0|cpu:op1-op3'],
        1,
        /error DY3047: its stages on cpu ask for 2 instance\(s\) in all and system paper-1g1f has 1: each stage runs on instances of its own/,
      ],
      // Ids of the partition table (every objective's partitions: up to 12 here).
      [['--partition', '99'], 1, /error DY3047: the guards of kernel gcn have partitions [\d, ]+; there is no 99/],
      [['--backend', 'wasm'], 2, /--backend and --project exclude each other/],
      [['--objective', 'speed'], 2, /--objective expects throughput, energy or latency, got 'speed'/],
      [
        [],
        1,
        /plan\.json: error DY3044: expected a dype plan \(format dype-plan, version 5: guards for every objective, ops with their loop counts\), got dype-plan version 3: recompile the project with dype compile/,
        old,
      ],
      [[], 1, /project\.json: error DY3044: was compiled from another version of .*gcn\.dy/, other],
    ];
    const results = await Promise.all(cases.map(([extra, , , project]) => run(extra, project)));
    results.forEach((r, i) => {
      const [extra, status, message] = cases[i]!;
      expect(r.status, `${extra.join(' ')}: ${r.stderr}`).toBe(status);
      expect(r.stderr, extra.join(' ')).toMatch(message);
      expect(r.stderr.trim().split('\n').length, `${extra.join(' ')}: one line`).toBe(1);
    });
    expect(existsSync(y)).toBe(false);
    // A system without a device a partition of plan.json uses (paper-1g1f less that device).
    const table = JSON.parse(readFileSync(join(out, 'plan.json'), 'utf8')).kernels.gcn.partitions as {
      id: number;
      stages: { device: string }[];
    }[];
    const onDevice = table.find((t) => t.stages.some((st) => st.device !== 'cpu'));
    expect(onDevice, 'a partition of the guards runs on a GPU or FPGA').toBeDefined();
    {
      const gone = onDevice!.stages.find((st) => st.device !== 'cpu')!.device;
      const preset = JSON.parse(readFileSync(join(REPO_ROOT, 'systems', 'paper-1g1f.json'), 'utf8'));
      const lacking = join(dir, 'lacking.json');
      writeFileSync(
        lacking,
        JSON.stringify({
          ...preset,
          devices: preset.devices.filter((d: { id: string }) => d.id !== gone),
          peerLinks: preset.peerLinks.filter((l: { a: string; b: string }) => l.a !== gone && l.b !== gone),
        }),
      );
      const r = await run(['--system', lacking, '--partition', String(onDevice!.id)]);
      expect(r.status, r.stderr).toBe(1);
      expect(r.stderr.trim()).toMatch(
        new RegExp(
          `^partition ${onDevice!.id} of plan\\.json: error DY3047: runs a stage on device '${gone}', which system [\\w-]+ does not have`,
        ),
      );
    }
    const noProject = await runCliAsync(['run', example('gcn.dy'), '--partition', 'auto', ...GCN_INPUTS]);
    expect(noProject.status).toBe(2);
    expect(noProject.stderr).toMatch(/--partition needs --project DIR/);
    const notBuilt = await runCliAsync(['build', dir]);
    expect(notBuilt.status).toBe(1);
    expect(notBuilt.stderr).toMatch(/project\.json: error DY3043: not a compiled dype project/);
  }, 120_000);
});
