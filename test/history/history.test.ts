/**
 * Models that learn from runs: the runtime appends each op run to a history
 * (here on the wasm backend, the one that measures a real device on this
 * machine), `dype calibrate --history` turns it into per-device entries, and
 * the planner prefers them to its formulas where a bucket has enough runs;
 * overlapping, split and emulated runs are not fitted; a damaged history is
 * one error naming its line.
 */
import { fixedGuards } from '../../runtime/guards/build.js';
import { DEFAULT_ENERGY_SCOPE, DEFAULT_STREAM_LENGTH } from '../../runtime/plan/figures.js';
import { existsSync, linkSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { callOverheadUs, cpuThreadsFor, implTimes } from '../../runtime/catalogue/index.js';
import { createGuardedRuntime } from '../../runtime/engine/runtime.js';
import { closeBackends, WasmStageBackend } from '../../runtime/exec/index.js';
import { fitHistory, historyMs, MIN_RUNS, recordOp } from '../../runtime/history/fit.js';
import { HistoryLog, readHistory } from '../../runtime/history/log.js';
import { historyRecord as record } from '../helpers/history-record.js';
import { toCsr } from '../../runtime/io/convert.js';
import { loadMatrix } from '../../runtime/io/load.js';
import { bindProblem } from '../../runtime/plan/bind.js';
import { features } from '../../runtime/features/index.js';
import { loadSystemFile } from '../../runtime/system/load.js';
import type { DeviceSpec } from '../../runtime/system/types.js';
import { cleanup, example, freshDir, runCli } from '../helpers/cli.js';
import { specOf } from '../helpers/compile.js';
import { exampleInputs } from '../helpers/example-inputs.js';
import { compileWasm, loopKernel } from '../wasm/compare.js';

const root = join(import.meta.dirname, '..', '..');
const M = join(root, '..', 'shared', 'data', 'matrices');
const dir = freshDir('dype-history-');
afterAll(() => cleanup(dir));
const sys = loadSystemFile(join(root, 'systems', 'this-machine.json'));

describe('fitting a history', () => {
  it('buckets runs by work and imbalance; the planner takes a bucket only with enough runs, and only real, whole, lone runs count', () => {
    const cpu = sys.devices[0]!;
    const runs = [0.05, 0.06, 0.04].map((ms) => record({ ms }));
    const noise = [
      record({ ms: 9, concurrent: true }),
      record({ ms: 9, split: 2 }),
      record({ ms: 9, backend: 'cuda-emu' }),
      record({ ms: 9, device: 'gpu' }),
      // A process's first run of the op: first-call setup in its time.
      record({ ms: 9, cold: true }),
    ];
    const callUs = (): number => cpu.launchOverheadUs;
    const entries = fitHistory([...runs, ...noise], cpu, 'wasm', callUs);
    expect(entries).toHaveLength(1);
    expect(entries[0]!.buckets).toEqual([
      { log2Bytes: 13, imbalance: 0, threads: 1, runs: 3, msPerByte: (0.05 - cpu.launchOverheadUs / 1e3) / 10_000 },
    ]);
    const d: DeviceSpec = { ...cpu, history: entries };
    const spec = specOf(readFileSync(example('spmv.dy'), 'utf8'), 'spmv.dy');
    const op = {
      ...bindProblem(spec, {
        sparse: new Map([['A', record({}).sparse!]]),
        dims: new Map([
          ['m', 100],
          ['n', 100],
        ]),
        scalars: new Map(),
      }).ops[0]!,
      bytes: 12_000,
    };
    // 100 rows: the planner runs the op on one thread (runtime/catalogue/cpu.ts), the threads the runs had.
    expect(cpuThreadsFor(op, cpu)).toBe(1);
    const one = (): number => 1;
    expect(historyMs(op, 'nnz-split', d, one)).toBeCloseTo(((0.05 - cpu.launchOverheadUs / 1e3) / 10_000) * 12_000, 12);
    expect(implTimes(op, d)[0]!.ms).toBe(historyMs(op, 'nnz-split', d, one));
    // Another size, another imbalance, too few runs: the formula.
    const formula = implTimes(op, cpu)[0]!.ms;
    expect(implTimes({ ...op, bytes: 100_000 }, d)[0]!.ms).toBe(implTimes({ ...op, bytes: 100_000 }, cpu)[0]!.ms);
    expect(implTimes({ ...op, sparse: { ...op.sparse!, rowLenMax: 1000 } }, d)[0]!.ms).toBe(
      implTimes({ ...op, sparse: { ...op.sparse!, rowLenMax: 1000 } }, cpu)[0]!.ms,
    );
    const thin: DeviceSpec = { ...cpu, history: fitHistory(runs.slice(0, MIN_RUNS - 1), cpu, 'wasm', callUs) };
    expect(implTimes(op, thin)[0]!.ms).toBe(formula);
    // Runs on other thread counts are buckets of their own: they do not price the op the planner runs on one.
    const mixed = fitHistory(
      [...runs.map((r) => ({ ...r, threads: 2 })), record({ ms: 0.5, threads: 4 })],
      cpu,
      'wasm',
      callUs,
    );
    expect(mixed[0]!.buckets.map((b) => [b.threads, b.runs])).toEqual([
      [2, 3],
      [4, 1],
    ]);
    expect(implTimes(op, { ...cpu, history: mixed })[0]!.ms).toBe(formula);
    expect(historyMs(op, 'nnz-split', { ...cpu, history: mixed }, () => 2)).toBeCloseTo(
      ((0.05 - cpu.launchOverheadUs / 1e3) / 10_000) * 12_000,
      12,
    );
  });

  it("a GPU's sparse runs are fitted net of the call floor the planner adds back (not the launch): history predicts them", () => {
    const gpu = loadSystemFile(join(root, 'systems', 'paper-1g1f.json')).devices.find((d) => d.kind === 'gpu')!;
    expect(gpu.gpuModel!.sparseFloorUs).toBeGreaterThan(gpu.launchOverheadUs);
    const runs = [0.03, 0.031, 0.029].map((ms) =>
      record({
        ms,
        system: 'paper-1g1f',
        device: gpu.id,
        instance: 'gpu0',
        kind: 'gpu',
        backend: 'cuda',
        impl: 'adaptive-rows',
      }),
    );
    const op = recordOp(runs[0]!);
    const callUs = (r: (typeof runs)[number]): number => callOverheadUs(recordOp(r), gpu);
    const fitted: DeviceSpec = { ...gpu, history: fitHistory(runs, gpu, 'cuda', callUs) };
    // The planner's time of one run: the history's figure and the per-call cost, the median measured.
    expect(historyMs(op, 'adaptive-rows', fitted, () => undefined)! + callOverheadUs(op, gpu) / 1e3).toBeCloseTo(
      0.03,
      12,
    );
  });

  it('a history saved with a byte-order mark reads as without one', () => {
    const path = join(dir, 'bom.jsonl');
    writeFileSync(path, `\uFEFF${JSON.stringify(record({}))}\n${JSON.stringify(record({ ms: 0.07 }))}\n`);
    expect(readHistory(path).map((r) => r.ms)).toEqual([0.05, 0.07]);
  });

  it('a damaged history is one error naming the file and line', () => {
    const path = join(dir, 'bad.jsonl');
    writeFileSync(path, `${JSON.stringify(record({}))}\n{"v":1,"system":\n`);
    expect(() => readHistory(path)).toThrow(/bad\.jsonl:2: error DY3048: expected one JSON history record/);
    writeFileSync(path, `${JSON.stringify({ ...record({}), ms: undefined })}\n`);
    expect(() => readHistory(path)).toThrow(/bad\.jsonl:1: error DY3048: history record without ms/);
    // A record an older build wrote (version 1: no loop trips) is named as such, not read with counts missing.
    const { loops: _l, columns: _c, ...older } = record({});
    writeFileSync(path, `${JSON.stringify({ ...older, v: 1 })}\n`);
    expect(() => readHistory(path)).toThrow(
      /bad\.jsonl:1: error DY3048: history record version 1; this build reads version 2 \(a history an older build wrote: record it again\)/,
    );
    // Valid JSON that is no record: one error, not a TypeError reading its fields.
    for (const [line, what] of [
      ['null', 'null'],
      ['[1, 2]', 'an array'],
      ['"text"', 'a string'],
      ['7', 'a number'],
    ])
      for (const at of [1, 2]) {
        writeFileSync(path, at === 1 ? `${line}\n` : `${JSON.stringify(record({}))}\n${line}\n`);
        expect(() => readHistory(path)).toThrow(
          new RegExp(
            `bad\\.jsonl:${at}: error DY3048: expected one JSON history record \\(an object\\) on the line, found ${what}`,
          ),
        );
      }
  });

  it("a record from before records held only the models' features (format 'csr' among them) still reads", () => {
    const path = join(dir, 'older.jsonl');
    const older = { ...record({}), sparse: { ...record({}).sparse!, format: 'csr', sampledRows: 64 } };
    writeFileSync(path, `${JSON.stringify(older)}\n`);
    expect(readHistory(path)).toHaveLength(1);
  });

  it.each([
    [{ threads: 'two' }, /threads must be an integer >= 1 where given, found "two"/],
    [{ kind: 'tpu' }, /kind must be one of cpu, gpu, fpga, found "tpu"/],
    [{ dtype: 'f16' }, /dtype must be one of/],
    [{ opKind: 7 }, /opKind must be a non-empty string, found 7/],
    [{ split: 0 }, /split must be an integer >= 1/],
    [{ ms: -1 }, /ms must be a finite number >= 0/],
    [{ bytes: '12' }, /bytes must be a finite number >= 0, found "12"/],
    [{ loops: -1 }, /loops must be a finite number >= 0, found -1/],
    [{ concurrent: 'no' }, /concurrent must be true or false/],
    [{ sparse: { rows: 'x' } }, /sparse\.rows must be a finite number/],
  ])('a record whose field has the wrong type or value (%j) is DY3048 on its line', (over, why) => {
    const path = join(dir, 'typed.jsonl');
    writeFileSync(path, `${JSON.stringify(record({}))}\n${JSON.stringify({ ...record({}), ...over })}\n`);
    expect(() => readHistory(path)).toThrow(/typed\.jsonl:2: error DY3048: history record: /);
    expect(() => readHistory(path)).toThrow(why);
  });
  // Regression: runs recorded by `dype run --project` carry the project's system (paper-1g1f by default); refitting
  // this-machine from them refitted nothing and printed the system unchanged, blaming emulated runs.
  it('a history with no run of the chosen system is DY3048 naming the systems it holds, and writes nothing', () => {
    const path = join(dir, 'other.jsonl');
    const rows = [record({ system: 'paper-1g1f' }), record({ system: 'paper-1g1f' }), record({ system: 'paper-2g2f' })];
    writeFileSync(path, rows.map((r) => JSON.stringify(r)).join('\n') + '\n');
    const out = join(dir, 'other-fitted.json');
    const r = runCli(['calibrate', '--history', path, '--system', 'this-machine', '-o', out]);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(
      /other\.jsonl: error DY3048: no run here is of system 'this-machine': its 3 runs are of paper-1g1f \(2\), paper-2g2f \(1\); .* pass --system paper-1g1f/,
    );
    expect(existsSync(out)).toBe(false);
    const ok = runCli(['calibrate', '--history', path, '--system', 'paper-1g1f', '-o', out, '--json']);
    expect(ok.status, ok.stderr).toBe(0);
  });

  // Regressions (each was exit 0 with the system file unchanged or refitted from the wrong runs).
  it.each([
    ['an empty history', [], /the history holds no run/],
    [
      'a device the system lacks',
      [record({ device: 'gpu7', kind: 'gpu', backend: 'cuda' })],
      /names device 'gpu7', which system 'this-machine' has not/,
    ],
    [
      'a device of another kind',
      [record({ kind: 'gpu', backend: 'cuda' })],
      /says device 'cpu' is a gpu, but in system 'this-machine' it is a cpu/,
    ],
    ['a backend of another kind', [record({ backend: 'cuda' })], /says a cpu ran on backend 'cuda', which runs a gpu/],
    [
      'cold runs alone',
      [1, 2, 3].map((ms) => record({ ms, cold: true })),
      /no run of this-machine the fit can use: of 3 runs, .*3 cold \(a process's first run\): record with dype run --project \.\.\. --repeat N/,
    ],
    [
      'overlapping runs alone',
      [1, 2, 3].map((ms) => record({ ms, concurrent: true })),
      /no run of this-machine the fit can use: of 3 runs, 0 emulated, 3 overlapping in a stream/,
    ],
  ])('%s is DY3048, and nothing is written', (name, rows, why) => {
    const path = join(dir, `${name.replace(/\W/g, '-')}.jsonl`);
    writeFileSync(path, rows.map((r) => JSON.stringify(r)).join('\n') + (rows.length ? '\n' : ''));
    const out = join(dir, `${name.replace(/\W/g, '-')}-fitted.json`);
    const r = runCli(['calibrate', '--history', path, '-o', out]);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/error DY3048: /);
    expect(r.stderr).toMatch(why);
    expect(existsSync(out)).toBe(false);
  });

  // Regression (printed 'NaN%'): with 3 runs a bucket, leaving one out leaves too few to predict it.
  it('says why a median error has no runs to be taken over', () => {
    const path = join(dir, 'three.jsonl');
    writeFileSync(path, [1, 2, 3].map((k) => JSON.stringify(record({ ms: k }))).join('\n') + '\n');
    const r = runCli(['calibrate', '--history', path]);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).not.toMatch(/NaN/);
    expect(r.stderr).toMatch(/each run left out of its bucket: no bucket has 3 runs besides the one left out/);
  });

  it('-o naming the --history file is a usage error that leaves the history as it was', () => {
    const path = join(dir, 'same.jsonl');
    const text = [record({}), record({})].map((r) => JSON.stringify(r)).join('\n') + '\n';
    writeFileSync(path, text);
    const r = runCli(['calibrate', '--history', path, '-o', path]);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/-o names the --history file/);
    expect(readFileSync(path, 'utf8')).toBe(text);
    // Through a symbolic link either way, or a hard link: the write would follow it to the history.
    const soft = join(dir, 'same-soft.jsonl');
    const hard = join(dir, 'same-hard.jsonl');
    symlinkSync(path, soft);
    linkSync(path, hard);
    for (const [history, output] of [
      [soft, path],
      [path, soft],
      [hard, path],
    ]) {
      const linked = runCli(['calibrate', '--history', history!, '-o', output!]);
      expect(linked.status, `${history} -o ${output}`).toBe(2);
      expect(linked.stderr).toMatch(/-o names the --history file/);
      expect(readFileSync(path, 'utf8')).toBe(text);
    }
  });
});

describe('learning from runs', () => {
  it('the runtime appends each op run; dype calibrate --history writes a system file the planner then uses', async () => {
    const c = await compileWasm(loopKernel(readFileSync(example('spmv.dy'), 'utf8'), 'spmv.dy'));
    const spec = specOf(readFileSync(example('spmv.dy'), 'utf8'), 'spmv.dy');
    const wasm = await WasmStageBackend.create(c.binary, c.manifest);
    const path = join(dir, 'runs.jsonl');
    const n = spec.ops.length;
    const guards = fixedGuards(
      { objective: 'throughput', energyScope: DEFAULT_ENERGY_SCOPE, streamLength: DEFAULT_STREAM_LENGTH },
      [{ start: 0, end: n, device: 'cpu', count: 1 }],
      'cpu',
    );
    const rt = createGuardedRuntime(
      {
        program: 'spmv',
        programHash: 'test',
        kernel: 'spmv',
        manifest: c.manifest,
        spec,
        objective: 'throughput',
        guards: { throughput: guards },
        params: [
          { name: 'A', kind: 'sparse', shape: ['m', 'n'] },
          { name: 'x', kind: 'dense', shape: ['n'] },
        ],
        guard: { throughput: () => 0 },
      },
      { system: sys, backends: { cpu: wasm }, history: new HistoryLog(path) },
    );
    const A = toCsr(loadMatrix(join(M, 'cage8.mtx')));
    const x = exampleInputs('spmv', A).tensors;
    for (let i = 0; i < 6; i++) await rt.run(x);
    rt.close();
    closeBackends({ cpu: wasm });
    c.exec.close();
    const all = readHistory(path);
    expect(all).toHaveLength(6);
    // The runtime's first run of the op is cold (first-call setup in its time), and the fit leaves it out.
    expect(all.map((r) => r.cold === true)).toEqual([true, false, false, false, false, false]);
    const runs = all.slice(1);
    expect(
      runs.every(
        (r) =>
          r.backend === 'wasm' &&
          r.opKind === 'spmv' &&
          r.impl === 'nnz-split' &&
          r.ms > 0 &&
          !r.concurrent &&
          r.sparse?.nnz === A.values.length,
      ),
    ).toBe(true);
    const out = join(dir, 'fitted.json');
    const r = runCli(['calibrate', '--history', path, '--system', 'this-machine', '-o', out, '--json']);
    expect(r.status, r.stderr).toBe(0);
    const report = JSON.parse(r.stdout) as { devices: { device: string; runs: number; buckets_used: number }[] };
    expect(report.devices).toEqual([
      expect.objectContaining({ device: 'cpu', runs: 5, buckets_used: 1, formula_median_err_pct: expect.any(Number) }),
    ]);
    const fitted = loadSystemFile(out);
    const op = bindProblem(spec, {
      sparse: new Map([['A', features(A, 2)]]),
      dims: new Map([
        ['m', A.rows],
        ['n', A.cols],
      ]),
      scalars: new Map(),
    }).ops[0]!;
    // The backend ran every op on its one thread, and the records say so.
    expect(runs.every((x) => x.threads === 1)).toBe(true);
    const cpu = fitted.devices[0]!;
    // Where the planner runs the op on one thread it now predicts the median of the warm runs it measured.
    const one: DeviceSpec = { ...cpu, threads: 1 };
    const planned = implTimes(op, one)[0]!.ms + cpu.launchOverheadUs / 1e3;
    const sorted = runs.map((x) => x.ms).sort((a, b) => a - b);
    expect(planned).toBeCloseTo(Math.max(sorted[2]!, cpu.launchOverheadUs / 1e3), 12);
    // On more threads the one-thread runs say nothing: the formula. The preset keeps cage8's 5 us SpMV on one
    // thread (a second one costs more than it saves there), so a CPU whose extra thread costs nothing to wake runs
    // it on two.
    const many: DeviceSpec = { ...cpu, cpuModel: { ...cpu.cpuModel!, dispatchUsPerThread: 0 } };
    const { history: _, ...formulaOnly } = many;
    expect(cpuThreadsFor(op, many)).toBeGreaterThan(1);
    expect(implTimes(op, many)[0]!.ms).toBe(implTimes(op, formulaOnly)[0]!.ms);
    expect(implTimes(op, many)[0]!.ms).not.toBe(implTimes(op, { ...many, threads: 1 })[0]!.ms);
  }, 60_000);
});
