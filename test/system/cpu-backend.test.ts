/**
 * A fit per CPU backend (runtime/system/cpu-backend.ts): the top-level
 * cpuModel names the backend it was fitted on, the others sit in
 * cpuBackendModels; each backend prices and picks threads by its own fit,
 * and says whose fit picked where it had to borrow one.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { opThreads } from '../../cli/threads.js';
import { cpuThreadsFor } from '../../runtime/catalogue/index.js';
import { bindProblem } from '../../runtime/plan/bind.js';
import { cpuFitFor, cpuFitPath, systemForCpuBackend, withCpuFit } from '../../runtime/system/cpu-backend.js';
import { loadSystemFile, parseSystem } from '../../runtime/system/load.js';
import type { SparseFeatures } from '../../runtime/plan/types.js';
import type { CpuModelSpec, DeviceSpec } from '../../runtime/system/types.js';
import { specOf } from '../helpers/compile.js';
import { MODEL, system } from './devices.js';
import { fails } from './fails.js';

const root = join(import.meta.dirname, '..', '..');
/** Threads that cost nothing to wake and scale linearly: every op takes all of them. */
const EAGER: CpuModelSpec = { ...MODEL, parallelEfficiency: 1, dispatchUsPerThread: 0 };
/** A second thread that costs a second to wake: every op stays on one. */
const LONE: CpuModelSpec = { ...MODEL, parallelEfficiency: 0.5, dispatchUsPerThread: 1e6 };

/** The native fit at the top, the wasm fit beside it. */
const BOTH = {
  cpuModel: EAGER,
  cpuModelBackend: 'native',
  cpuBackendModels: { wasm: { launchOverheadUs: 9, cpuModel: LONE } },
};

/** 100k rows of 10 entries each. */
const UNIFORM: SparseFeatures = {
  rows: 100_000,
  cols: 100_000,
  nnz: 1_000_000,
  rowLenMean: 10,
  rowLenMax: 10,
  rowLenCv: 0,
  emptyRowFraction: 0,
  top1PctNnzShare: 0.01,
};

const cpuOf = (src: string): DeviceSpec => parseSystem(src, 'sys.json').devices[0]!;

describe('a fit per CPU backend in a system file', () => {
  it('loads the top-level fit named and another backend beside it', () => {
    const d = cpuOf(system(BOTH));
    expect(d.cpuModelBackend).toBe('native');
    expect(d.cpuBackendModels?.wasm).toEqual({ launchOverheadUs: 9, cpuModel: LONE });
  });

  it('each rule broken is one DY3025 naming the field', () => {
    const noName = fails(
      system({ cpuModel: EAGER, cpuBackendModels: { wasm: { launchOverheadUs: 1, cpuModel: LONE } } }),
    );
    expect(noName.code).toBe('DY3025');
    expect(noName.detail).toContain('"cpuModelBackend" must say which backend "cpuModel" is');
    const twice = fails(
      system({
        cpuModel: EAGER,
        cpuModelBackend: 'wasm',
        cpuBackendModels: { wasm: { launchOverheadUs: 1, cpuModel: LONE } },
      }),
    );
    expect(twice.code).toBe('DY3025');
    expect(twice.detail).toContain('a backend has one fit');
    expect(fails(system({ cpuModelBackend: 'native' })).detail).toContain('there is no "cpuModel"');
    const gpu = fails(system({}, { cpuModelBackend: 'native' }));
    expect(gpu.code).toBe('DY3025');
    expect(gpu.detail).toContain('"cpuModelBackend" is for the host CPU only');
  });

  it('an unknown backend or a fit without its overhead is a schema error naming the path', () => {
    const src = system({
      cpuModel: EAGER,
      cpuModelBackend: 'native',
      cpuBackendModels: { cuda: { launchOverheadUs: 1, cpuModel: LONE } },
    });
    expect(fails(src).detail).toContain('cpuBackendModels');
    const partial = fails(
      system({ cpuModel: EAGER, cpuModelBackend: 'native', cpuBackendModels: { wasm: { cpuModel: LONE } } }),
    );
    expect(partial.code).toBe('DY3020');
    expect(partial.detail).toContain('devices[0].cpuBackendModels.wasm.launchOverheadUs');
  });

  it("this machine's preset carries the native fit and the wasm fit", () => {
    const d = loadSystemFile(join(root, 'systems', 'this-machine.json')).devices.find((x) => x.kind === 'cpu')!;
    expect(d.cpuModelBackend).toBe('native');
    expect(d.cpuBackendModels?.wasm?.cpuModel.dispatchUsPerThread).toBeGreaterThan(0);
  });
});

describe('the CPU as one backend sees it', () => {
  const both = cpuOf(system({ ...BOTH, launchOverheadUs: 2 }));

  it("takes the backend's own fit, with its overhead, and drops the others", () => {
    expect(cpuFitFor(both, 'native')).toEqual({
      device: { ...both, cpuBackendModels: undefined },
      fit: "the native backend's fit",
    });
    const w = cpuFitFor(both, 'wasm');
    expect(w.fit).toBe("the wasm backend's fit");
    expect(w.device.cpuModel).toEqual(LONE);
    expect(w.device.launchOverheadUs).toBe(9);
    expect(w.device.cpuModelBackend).toBe('wasm');
    expect(w.device.cpuBackendModels).toBeUndefined();
  });

  it("keeps the history entries of the backend that runs, not the other's", () => {
    const entry = (backend: string) => ({
      opKind: 'spmv',
      impl: 'nnz-split',
      dtype: 'f32' as const,
      backend,
      buckets: [{ log2Bytes: 13, imbalance: 0, runs: 3, msPerByte: backend === 'wasm' ? 2e-6 : 1e-6 }],
    });
    const d: DeviceSpec = { ...both, history: [entry('wasm'), entry('native')] };
    expect(cpuFitFor(d, 'native').device.history).toEqual([entry('native')]);
    expect(cpuFitFor(d, 'wasm').device.history).toEqual([entry('wasm')]);
    // Only the other backend's runs: no history at all, the formulas price it.
    expect(cpuFitFor({ ...both, history: [entry('wasm')] }, 'native').device.history).toBeUndefined();
  });

  it('borrows the fit it has where the backend has none, and says so', () => {
    const native = cpuOf(system({ cpuModel: EAGER, cpuModelBackend: 'native' }));
    expect(cpuFitFor(native, 'wasm')).toEqual({
      device: native,
      fit: "the native backend's fit (no wasm fit in the system)",
    });
    const unnamed = cpuOf(system({ cpuModel: EAGER }));
    expect(cpuFitFor(unnamed, 'native').fit).toBe('a fit of no named backend (no native fit in the system)');
    expect(cpuFitFor(cpuOf(system()), 'wasm').fit).toBe('the roofline (no fitted model)');
  });

  it('a system keeps its other devices and is the same object where nothing changes', () => {
    const sys = parseSystem(system({ cpuModel: EAGER, cpuModelBackend: 'native' }), 'sys.json');
    expect(systemForCpuBackend(sys, 'native').system).toBe(sys);
    const two = parseSystem(system(BOTH), 'sys.json');
    const w = systemForCpuBackend(two, 'wasm').system;
    expect(w.devices[0]!.cpuModel).toEqual(LONE);
    expect(w.devices[1]).toBe(two.devices[1]);
  });

  it('a new fit goes to its backend: the top level where it is that backend or unnamed, else beside it', () => {
    const fit = { launchOverheadUs: 4, cpuModel: LONE };
    const unnamed = cpuOf(system({ cpuModel: EAGER }));
    expect(withCpuFit(unnamed, 'wasm', fit)).toMatchObject({
      cpuModelBackend: 'wasm',
      cpuModel: LONE,
      launchOverheadUs: 4,
    });
    const kept = withCpuFit(both, 'wasm', fit);
    expect(kept.cpuModel).toEqual(EAGER);
    expect(kept.cpuBackendModels?.wasm).toEqual(fit);
    expect(cpuFitPath(kept, 'wasm', 'devices[0]')).toBe('devices[0].cpuBackendModels.wasm');
    expect(cpuFitPath(kept, 'native', 'devices[0]')).toBe('devices[0]');
    // What calibrate writes must load: the fit beside the top-level one passes the schema.
    const text = JSON.stringify({ ...JSON.parse(system()), devices: [kept, JSON.parse(system()).devices[1]] });
    expect(parseSystem(text, 'sys.json').devices[0]!.cpuBackendModels?.wasm).toEqual(fit);
  });

  it("dype run's thread picks: each backend by its fit, naming it", () => {
    const spec = specOf(readFileSync(join(root, 'examples', 'spmv.dy'), 'utf8'), 'spmv.dy');
    const sys = parseSystem(system(BOTH), 'sys.json');
    const binding = {
      sparse: new Map<string, SparseFeatures>([['A', UNIFORM]]),
      dims: new Map([
        ['m', 100_000],
        ['n', 100_000],
      ]),
      scalars: new Map(),
    };
    const native = opThreads(spec, sys, binding, 4, 'native');
    const wasm = opThreads(spec, sys, binding, 4, 'wasm');
    expect([...native.counts.values()]).toEqual([4]);
    expect([...wasm.counts.values()]).toEqual([1]);
    expect(native.from).toBe("the model of s's cpu, the native backend's fit");
    expect(wasm.from).toBe("the model of s's cpu, the wasm backend's fit");
    const op = bindProblem(spec, binding).ops[0]!;
    expect(cpuThreadsFor(op, systemForCpuBackend(sys, 'wasm').system.devices[0]!, 4)).toBe(1);
  });
});
