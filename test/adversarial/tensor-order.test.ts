/**
 * Hand-made sparse inputs in the wrong order, and arrays the runtime cannot
 * read as numbers (the runtime audit: an unsorted COO gave a wrong y
 * silently, a BigInt64Array a bare TypeError, a fractional index was
 * truncated). Each is a DY3051 naming the input, from the guarded runtime
 * and from an executor driven directly (as `dype run` drives the wasm and
 * native ones), never a result:
 *   - COO entries out of (row, column) order: reversed, one pair swapped, a
 *     position repeated; the error names the first entry out of order.
 *   - a CSR row whose columns descend or repeat, a CSC column whose rows do
 *     (runtime/tensor.ts promises them strictly ascending).
 *   - BigInt64Array / BigUint64Array / DataView arrays, refused before any
 *     decision; fractional indices and pointers in float arrays, refused
 *     where the pattern is laid out.
 * The same matrix as sorted COO still runs, y = A x. The reference
 * interpreter refuses the same inputs with the same messages (it read past
 * them: a CSR column index outside the shape gave NaN in y).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildCpuLibraryAsync, type CpuLibraryBuild } from '../../codegen/cpu/build.js';
import { interpretKernel } from '../../interp/interpret.js';
import { cpuLibrarySource } from '../../codegen/cpu/library.js';
import { wasmManifest } from '../../codegen/wasm/emit.js';
import type { Kernel } from '../../ir/module.js';
import { createGuardedRuntime, type GuardedRuntime } from '../../runtime/engine/runtime.js';
import type { RuntimeConfig, RuntimeInputs } from '../../runtime/engine/types.js';
import { InputError } from '../../runtime/errors.js';
import { closeBackends, type StageBackends } from '../../runtime/exec/index.js';
import { buildGuards, sampleBindings } from '../../runtime/guards/index.js';
import { csrToCsc } from '../../runtime/io/convert.js';
import { createNativeCpuExecutor } from '../../runtime/native/cpu-executor.js';
import type { CooMatrix, CscMatrix, CsrMatrix, DenseTensor, Tensor } from '../../runtime/tensor.js';
import type { WasmExecutor } from '../../runtime/wasm/executor.js';
import { graph, root, spmvBinding, system } from '../guards/fixtures.js';
import { throughputConfig } from '../guards/runtime-fixture.js';
import { haveCompiler } from '../helpers/cc.js';
import { specOf } from '../helpers/compile.js';
import { goal } from '../helpers/goal.js';
import { wasmAndLoopbacks } from '../helpers/loopback.js';
import { compileWasm, loopKernel } from '../wasm/compare.js';
import { asCoo, spmvReference, vec } from './inputs.js';

const SYS = system('paper-1g1f');

/** The InputError `f` throws (failing the test on anything else, or on a result). */
async function inputErrorOf(f: () => unknown): Promise<InputError> {
  try {
    await f();
  } catch (e) {
    expect(e, String(e)).toBeInstanceOf(InputError);
    return e as InputError;
  }
  throw new Error('expected an InputError, got a result');
}

/** f32 results against a float64 reference, within 1e-4 relative (plus 1e-5 of the largest). */
function expectY(got: Float64Array, want: Float64Array): void {
  expect(got.length).toBe(want.length);
  let big = 0;
  for (const v of want) big = Math.max(big, Math.abs(v));
  let worst = 0;
  for (let i = 0; i < want.length; i++)
    worst = Math.max(worst, Math.abs(got[i]! - want[i]!) - 1e-4 * Math.abs(want[i]!) - 1e-5 * big);
  expect(worst).toBeLessThanOrEqual(0);
}

/** Entries k and k + 1 exchanged (every array of the entries). */
function swapped(m: CooMatrix, k: number): CooMatrix {
  const [rowIdx, colIdx, values] = [m.rowIdx.slice(), m.colIdx.slice(), m.values.slice()];
  for (const a of [rowIdx, colIdx, values]) [a[k], a[k + 1]] = [a[k + 1]!, a[k]!];
  return { ...m, rowIdx, colIdx, values };
}

/** The first k with entries k and k + 1 in the same row (column, for CSC's rowPtr = colPtr). */
function firstPairInOneGroup(ptr: Int32Array): { k: number; group: number } {
  for (let g = 0; g + 1 < ptr.length; g++) if (ptr[g + 1]! - ptr[g]! >= 2) return { k: ptr[g]!, group: g };
  throw new Error('no group with two entries');
}

/** A case: the inputs, the input the error must name, and what its message must say. */
interface Case {
  what: string;
  inputs: () => Record<string, Tensor>;
  names: string;
  says: RegExp;
  /** Refused before any decision (explain too), not only where the pattern is laid out. */
  atOnce?: boolean;
}

/** west0479 (479 x 479, 1910 entries, several per row), the audit's matrix. */
const A = (): CsrMatrix => graph('west0479.mtx');
const x = (): DenseTensor => vec(A().cols, 2);

function cases(): Case[] {
  const csr = A();
  const coo = asCoo(csr);
  const nnz = coo.values.length;
  const rev = <T extends Int32Array | Float64Array>(a: T): T => a.slice().reverse() as T;
  const reversed: CooMatrix = { ...coo, rowIdx: rev(coo.rowIdx), colIdx: rev(coo.colIdx), values: rev(coo.values) };
  const { k: inRow, group: row } = firstPairInOneGroup(csr.rowPtr);
  const repeated: CooMatrix = { ...coo, colIdx: coo.colIdx.slice() };
  repeated.colIdx[inRow + 1] = repeated.colIdx[inRow]!;
  const descending: CsrMatrix = { ...csr, colIdx: csr.colIdx.slice(), values: csr.values.slice() };
  [descending.colIdx[inRow], descending.colIdx[inRow + 1]] = [csr.colIdx[inRow + 1]!, csr.colIdx[inRow]!];
  const twice: CsrMatrix = { ...csr, colIdx: csr.colIdx.slice() };
  twice.colIdx[inRow + 1] = csr.colIdx[inRow]!;
  const csc: CscMatrix = csrToCsc(csr);
  const { k: inCol, group: col } = firstPairInOneGroup(csc.colPtr);
  const upward: CscMatrix = { ...csc, rowIdx: csc.rowIdx.slice() };
  [upward.rowIdx[inCol], upward.rowIdx[inCol + 1]] = [csc.rowIdx[inCol + 1]!, csc.rowIdx[inCol]!];
  const fractionalCol = { ...csr, colIdx: Float64Array.from(csr.colIdx) as unknown as Int32Array };
  fractionalCol.colIdx[5] = csr.colIdx[5]! + 0.5;
  const fractionalRow = { ...coo, rowIdx: Float64Array.from(coo.rowIdx) as unknown as Int32Array };
  fractionalRow.rowIdx[7] = coo.rowIdx[7]! + 0.25;
  // Halfway between two pointers of a row with entries: the fill of rows would truncate it.
  const fractionalPtr = { ...csr, rowPtr: Float64Array.from(csr.rowPtr) as unknown as Int32Array };
  fractionalPtr.rowPtr[row + 1] = csr.rowPtr[row + 1]! - 0.5;
  const bigData = { format: 'dense', shape: [csr.cols], data: new BigInt64Array(csr.cols) } as unknown as DenseTensor;
  const viewData = {
    format: 'dense',
    shape: [csr.cols],
    data: new DataView(new ArrayBuffer(8 * csr.cols)),
  } as unknown as DenseTensor;
  const bigValues = { ...csr, values: new BigUint64Array(nnz) as unknown as Float64Array };
  const bigIndices = { ...coo, colIdx: BigInt64Array.from(coo.colIdx, BigInt) as unknown as Int32Array };
  const entry = (m: CooMatrix, k: number): string => `\\(row ${m.rowIdx[k]}, col ${m.colIdx[k]}\\)`;
  return [
    {
      what: 'COO entries reversed',
      inputs: () => ({ A: reversed, x: x() }),
      names: 'input A',
      says: new RegExp(
        `entry 1 ${entry(reversed, 1)} comes after entry 0 ${entry(reversed, 0)}: COO entries must be sorted by row, then column`,
      ),
    },
    {
      what: 'two COO entries of one row swapped',
      inputs: () => ({ A: swapped(coo, inRow), x: x() }),
      names: 'input A',
      says: new RegExp(`entry ${inRow + 1} ${entry(swapped(coo, inRow), inRow + 1)} comes after entry ${inRow} `),
    },
    {
      what: 'two COO entries of different rows swapped',
      inputs: () => ({ A: swapped(coo, csr.rowPtr[row + 1]! - 1), x: x() }),
      names: 'input A',
      says: new RegExp(
        `entry ${csr.rowPtr[row + 1]} \\(row ${row}, col \\d+\\) comes after entry ${csr.rowPtr[row + 1]! - 1} \\(row ${row + 1}, `,
      ),
    },
    {
      what: 'a COO position given twice',
      inputs: () => ({ A: repeated, x: x() }),
      names: 'input A',
      says: new RegExp(
        `entry ${inRow + 1} ${entry(repeated, inRow + 1)} repeats entry ${inRow}: COO entries must be distinct`,
      ),
    },
    {
      what: 'a CSR row whose columns descend',
      inputs: () => ({ A: descending, x: x() }),
      names: 'input A',
      says: new RegExp(
        `colIdx\\[${inRow + 1}\\] = ${csr.colIdx[inRow]} comes after colIdx\\[${inRow}\\] = ${csr.colIdx[inRow + 1]} in row ${row}: a row's columns must be strictly ascending`,
      ),
    },
    {
      what: 'a CSR row with a column twice',
      inputs: () => ({ A: twice, x: x() }),
      names: 'input A',
      says: new RegExp(`colIdx\\[${inRow + 1}\\] = ${csr.colIdx[inRow]} repeats colIdx\\[${inRow}\\] in row ${row}`),
    },
    {
      what: 'a CSC column whose rows descend',
      inputs: () => ({ A: upward, x: x() }),
      names: 'input A',
      says: new RegExp(
        `rowIdx\\[${inCol + 1}\\] = \\d+ comes after rowIdx\\[${inCol}\\] = \\d+ in column ${col}: a column's rows`,
      ),
    },
    {
      what: 'a fractional column index in a Float64Array',
      inputs: () => ({ A: fractionalCol, x: x() }),
      names: 'input A',
      says: new RegExp(`colIdx\\[5\\] is ${csr.colIdx[5]! + 0.5}, not an integer`),
    },
    {
      what: 'a fractional COO row index',
      inputs: () => ({ A: fractionalRow, x: x() }),
      names: 'input A',
      says: new RegExp(`rowIdx\\[7\\] is ${coo.rowIdx[7]! + 0.25}, not an integer`),
    },
    {
      what: 'a fractional row pointer',
      inputs: () => ({ A: fractionalPtr, x: x() }),
      names: 'input A',
      says: new RegExp(`rowPtr\\[${row + 1}\\] is ${csr.rowPtr[row + 1]! - 0.5}, not an integer`),
    },
    {
      what: 'dense data in a BigInt64Array',
      inputs: () => ({ A: csr, x: bigData }),
      names: 'input x',
      says: /a dense tensor's data is a BigInt64Array, which the runtime cannot read as numbers: it must be a typed array of numbers \(Float64Array, Float32Array, Int32Array/,
      atOnce: true,
    },
    {
      what: 'dense data in a DataView',
      inputs: () => ({ A: csr, x: viewData }),
      names: 'input x',
      says: /a dense tensor's data is a DataView, which the runtime cannot read as numbers: it must be a typed array of numbers/,
      atOnce: true,
    },
    {
      what: 'sparse values in a BigUint64Array',
      inputs: () => ({ A: bigValues, x: x() }),
      names: 'input A',
      says: /a csr matrix's values is a BigUint64Array, which the runtime cannot read as numbers/,
      atOnce: true,
    },
    {
      what: 'COO column indices in a BigInt64Array',
      inputs: () => ({ A: bigIndices, x: x() }),
      names: 'input A',
      says: /colIdx is a BigInt64Array, which the runtime cannot read as numbers/,
      atOnce: true,
    },
  ];
}

let kernel: Kernel;
let compiled: Awaited<ReturnType<typeof compileWasm>>;

beforeAll(async () => {
  kernel = loopKernel(readFileSync(join(root, 'examples', 'spmv.dy'), 'utf8'), 'spmv.dy');
  compiled = await compileWasm(kernel);
}, 60_000);

describe('guarded runtime (spmv): out-of-order entries and unreadable arrays are DY3051 naming the input', () => {
  let config: RuntimeConfig;
  let backends: StageBackends;
  const runtime = (): GuardedRuntime => createGuardedRuntime(config, { system: SYS, backends });

  beforeAll(async () => {
    const src = readFileSync(join(root, 'examples', 'spmv.dy'), 'utf8');
    const spec = specOf(src, 'spmv.dy');
    const profiles = ['karate.mtx', 'west0479.mtx'].map((f) => spmvBinding(graph(f)));
    const plan = buildGuards(
      spec,
      SYS,
      sampleBindings(profiles, { perProfile: 4, shapeDims: { A: ['m', 'n'] } }),
      goal('throughput'),
    );
    const { binary, manifest } = compiled;
    config = throughputConfig(kernel, spec, manifest, plan);
    backends = await wasmAndLoopbacks(binary, manifest);
  }, 60_000);
  afterAll(() => backends && closeBackends(backends));

  it('west0479 as sorted COO runs: y = A x', async () => {
    const rt = runtime();
    const X = x();
    const r = await rt.run({ A: asCoo(A()), x: X });
    expectY((r.outputs.get('y') as DenseTensor).data, spmvReference(A(), X.data));
    rt.close();
  }, 60_000);

  for (const c of cases())
    it(`${c.what}: DY3051 naming ${c.names}, no result`, async () => {
      const rt = runtime();
      const inputs = c.inputs() as RuntimeInputs;
      const e = await inputErrorOf(() => rt.run(inputs));
      expect(e.code).toBe('DY3051');
      expect(e.file).toMatch(new RegExp(`^${c.names}( of kernel spmv)?$`));
      expect(e.detail).toMatch(c.says);
      // Refused before a decision where the check is O(1); the order and integrality of the indices are read only
      // where the pattern is laid out, so explain (whose cost stays independent of nnz) still decides on those.
      if (c.atOnce) expect((await inputErrorOf(() => rt.explain(inputs))).code).toBe('DY3051');
      else expect(rt.explain(inputs).selected).toBeDefined();
      // Refused again on a second try: the refusal is not remembered as a laid-out pattern.
      expect((await inputErrorOf(() => rt.run(inputs))).code).toBe('DY3051');
      rt.close();
    }, 60_000);
});

/** Runs each case through an executor driven directly, as `dype run` does (no guarded runtime, no bindInputs). */
function directCases(exec: () => WasmExecutor): void {
  it('west0479 as sorted COO runs: y = A x', () => {
    const X = x();
    const r = exec().run({
      tensors: new Map<string, Tensor>([
        ['A', asCoo(A())],
        ['x', X],
      ]),
      scalars: new Map(),
    });
    expectY((r.outputs.get('y') as DenseTensor).data, spmvReference(A(), X.data));
  });
  for (const c of cases())
    it(`${c.what}: DY3051 naming ${c.names}`, async () => {
      const e = await inputErrorOf(() =>
        exec().run({ tensors: new Map(Object.entries(c.inputs())), scalars: new Map() }),
      );
      expect(e.code).toBe('DY3051');
      expect(e.file).toBe(c.names);
      expect(e.detail).toMatch(c.says);
    });
}

describe('wasm executor driven directly (dype run): the same refusals', () => {
  directCases(() => compiled.exec);
});

describe.skipIf(!haveCompiler())(
  'native CPU executor driven directly (dype run --backend native): the same refusals',
  () => {
    let build: CpuLibraryBuild | undefined;
    let ex: WasmExecutor | undefined;
    beforeAll(async () => {
      const manifest = wasmManifest(kernel, [], true);
      build = await buildCpuLibraryAsync(cpuLibrarySource('order', 'test', [{ kernel, manifest }]), null);
      ex = createNativeCpuExecutor(build.path, manifest, { program: 'order', programHash: 'test', threads: 1 });
    }, 120_000);
    afterAll(() => {
      ex?.close();
      build?.cleanup();
    });
    directCases(() => ex!);
  },
);

describe('reference interpreter (dype run --backend reference): the same refusals', () => {
  const interpret = (tensors: Record<string, Tensor>): DenseTensor =>
    interpretKernel(kernel, { tensors: new Map(Object.entries(tensors)), scalars: new Map() }).outputs.get(
      'y',
    ) as DenseTensor;
  it('west0479 as sorted COO runs: y = A x, as CSR gives it', () => {
    const X = x();
    expect(interpret({ A: asCoo(A()), x: X }).data).toEqual(interpret({ A: A(), x: X }).data);
    expectY(interpret({ A: asCoo(A()), x: X }).data, spmvReference(A(), X.data));
  });
  const outside = (): CsrMatrix => {
    const m = { ...A(), colIdx: A().colIdx.slice() };
    m.colIdx[3] = m.cols + 2;
    return m;
  };
  const cases2: Case[] = [
    ...cases(),
    {
      what: 'a CSR column index outside the shape',
      inputs: () => ({ A: outside(), x: x() }),
      names: 'input A',
      says: new RegExp(`colIdx\\[3\\] is ${A().cols + 2}, outside the ${A().cols} columns`),
    },
    {
      what: 'a CSR row pointer that decreases',
      inputs: () => {
        const m = { ...A(), rowPtr: A().rowPtr.slice() };
        m.rowPtr[10] = m.rowPtr[9]! - 1;
        return { A: m, x: x() };
      },
      names: 'input A',
      says: /rowPtr\[10\] = \d+ after rowPtr\[9\] = \d+: row pointers must not decrease/,
    },
  ];
  for (const c of cases2)
    it(`${c.what}: DY3051 naming ${c.names}`, async () => {
      const e = await inputErrorOf(() => interpret(c.inputs()));
      expect(e.code).toBe('DY3051');
      expect(e.file).toBe(`--${c.names}`);
      expect(e.detail).toMatch(c.says);
    });
});
