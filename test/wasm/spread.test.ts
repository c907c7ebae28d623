/**
 * Spread walks (codegen/wasm/simd.ts `SPREAD`, WasmOp.spread): which ops get
 * a second function, that the executor runs it where the gathered rows'
 * bytes reach its threshold (runtime/wasm/spread.ts), at 1 and 2 threads,
 * with the plain function's bits; the host's L2 read from sysfs.
 */
import { mkdtempSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { emitWasm } from '../../codegen/wasm/emit.js';
import { Rng } from '../../runtime/random.js';
import type { CsrMatrix, DenseTensor, Tensor } from '../../runtime/tensor.js';
import { createWasmExecutor } from '../../runtime/wasm/executor.js';
import { hostL2Bytes, hostSpreadFromBytes, parseCacheSize } from '../../runtime/wasm/spread.js';
import { expectIdentical, loopKernel } from './compare.js';

const EXAMPLES_DIR = fileURLToPath(new URL('../../examples/', import.meta.url));
const gcn = loopKernel(readFileSync(`${EXAMPLES_DIR}gcn.dy`, 'utf8'), 'gcn.dy');
const spmm = (t: string) =>
  loopKernel(
    `kernel k(A: csr<${t}>[m, n], B: dense<${t}>[n, h]) -> (Y: dense<${t}>[m, h]) { Y[i, c] = A[i, j] * B[j, c]; }`,
  );

function rand(n: number, seed: number): Float64Array {
  const rng = new Rng(seed);
  return Float64Array.from({ length: n }, () => rng.uniform(-1, 1));
}

/** n x n with rows of 0-9 scattered entries: rows >= 256 let the pool split. */
function scattered(n: number, seed: number): CsrMatrix {
  const rng = new Rng(seed);
  const rowPtr = new Int32Array(n + 1);
  const colIdx: number[] = [];
  for (let r = 0; r < n; r++) {
    const cs = new Set<number>();
    const len = Math.floor(rng.uniform(0, 10));
    for (let t = 0; t < len; t++) cs.add(Math.floor(rng.uniform(0, n)));
    colIdx.push(...[...cs].sort((a, b) => a - b));
    rowPtr[r + 1] = colIdx.length;
  }
  return {
    format: 'csr',
    rows: n,
    cols: n,
    rowPtr,
    colIdx: Int32Array.from(colIdx),
    values: rand(colIdx.length, seed),
  };
}

const dense = (shape: number[], seed: number): DenseTensor => ({
  format: 'dense',
  shape,
  data: rand(shape[0]! * shape[1]!, seed),
});

describe('spread walks', () => {
  it('exist for the ops that read rows through loaded indices (SpMM, GCN aggregation), not GEMM or SDDMM', async () => {
    const g = await emitWasm(gcn);
    const byOp = new Map(g.manifest.ops.map((o) => [o.op, o.spread]));
    expect(byOp.get('op0')).toBeUndefined();
    expect(byOp.get('op1')).toEqual({ export: 'gcn_op1_spread', gathered: ['T1'] });
    expect(byOp.get('op2')).toBeUndefined();
    expect(byOp.get('op3')).toEqual({ export: 'gcn_op3_spread', gathered: ['T2'] });
    const m = await WebAssembly.compile(g.binary as Uint8Array<ArrayBuffer>);
    const exports = WebAssembly.Module.exports(m).map((e) => e.name);
    expect(exports).toEqual(expect.arrayContaining(['gcn_op1', 'gcn_op1_spread', 'gcn_op3_spread']));
    expect(exports).not.toContain('gcn_op0_spread');
    const sddmm = loopKernel(
      'kernel k(A: csr<f32>[n, n], Q: dense<f32>[n, d], K: dense<f32>[n, d]) -> (S: csr<f32>[n, n]) { S[i, j] = A[i, j] * sum(k: Q[i, k] * K[j, k]); }',
    );
    expect((await emitWasm(sddmm)).manifest.ops.every((o) => o.spread === undefined)).toBe(true);
    // One walk, or no SIMD: no second function, and the manifest names none.
    for (const opts of [{ spreadWalks: 1 }, { simd: false }]) {
      const c = await emitWasm(gcn, opts);
      expect(c.manifest.ops.every((o) => o.spread === undefined)).toBe(true);
      const names = WebAssembly.Module.exports(await WebAssembly.compile(c.binary as Uint8Array<ArrayBuffer>));
      expect(names.some((e) => e.name.endsWith('_spread'))).toBe(false);
    }
  });

  it('run from the threshold on, with the plain function bits, at 1 and 2 threads (f32 and f64)', async () => {
    for (const t of ['f32', 'f64']) {
      const k = spmm(t);
      const { binary, manifest } = await emitWasm(k);
      const plain = await emitWasm(k, { spreadWalks: 1 });
      const A = scattered(600, 3);
      const tensors = new Map<string, Tensor>([
        ['A', A],
        ['B', dense([600, 70], 4)],
      ]);
      const inputs = { tensors, scalars: new Map<string, number>() };
      const bytes = 600 * 70 * (t === 'f32' ? 4 : 8);
      const base = await createWasmExecutor(plain.binary, plain.manifest, { threads: 1, spreadFromBytes: 0 });
      try {
        const want = base.run(inputs).outputs;
        expect(base.spreadsOp('op0')).toBeUndefined();
        for (const [threads, from, spreads] of [
          [1, bytes, true],
          [1, bytes + 1, false],
          [2, 0, true],
          [2, Infinity, false],
        ] as const) {
          const ex = await createWasmExecutor(binary, manifest, { threads, spreadFromBytes: from });
          try {
            expect(ex.spreadsOp('op0')).toBeUndefined();
            const got = ex.run(inputs).outputs;
            expect(ex.spreadsOp('op0')).toBe(spreads);
            for (const [name, y] of want) expectIdentical(got.get(name)!, y, `${t} ${threads} threads from ${from}`);
          } finally {
            ex.close();
          }
        }
      } finally {
        base.close();
      }
    }
  });

  it('are weighed again when the layout changes: a wider B crosses the threshold', async () => {
    const { binary, manifest } = await emitWasm(spmm('f32'));
    const A = scattered(300, 5);
    const ex = await createWasmExecutor(binary, manifest, { threads: 1, spreadFromBytes: 300 * 40 * 4 });
    try {
      const run = (h: number) =>
        ex.run({
          tensors: new Map<string, Tensor>([
            ['A', A],
            ['B', dense([300, h], h)],
          ]),
          scalars: new Map(),
        });
      run(32);
      expect(ex.spreadsOp('op0')).toBe(false);
      run(40);
      expect(ex.spreadsOp('op0')).toBe(true);
      run(16);
      expect(ex.spreadsOp('op0')).toBe(false);
    } finally {
      ex.close();
    }
  });

  it('refuses a negative or NaN threshold', async () => {
    const { binary, manifest } = await emitWasm(spmm('f32'));
    for (const bad of [-1, NaN])
      await expect(createWasmExecutor(binary, manifest, { spreadFromBytes: bad })).rejects.toThrow(
        /spreadFromBytes must be at least 0/,
      );
  });

  it("reads the host's L2 from sysfs, and spreads from twice it (never where it is unknown)", () => {
    expect(parseCacheSize('1024K')).toBe(1024 * 1024);
    expect(parseCacheSize('32M\n')).toBe(32 * 1024 * 1024);
    expect(parseCacheSize('512')).toBe(512);
    expect(parseCacheSize('big')).toBeUndefined();
    const dir = mkdtempSync(join(tmpdir(), 'dype-cache-'));
    try {
      const level = (q: number, lv: string, type: string, size: string) => {
        mkdirSync(join(dir, `index${q}`));
        writeFileSync(join(dir, `index${q}`, 'level'), `${lv}\n`);
        writeFileSync(join(dir, `index${q}`, 'type'), `${type}\n`);
        writeFileSync(join(dir, `index${q}`, 'size'), `${size}\n`);
      };
      expect(hostL2Bytes(dir)).toBeUndefined();
      level(0, '1', 'Data', '48K');
      level(1, '1', 'Instruction', '32K');
      expect(hostL2Bytes(dir)).toBeUndefined();
      level(2, '2', 'Unified', '2048K');
      level(3, '3', 'Unified', '64M');
      expect(hostL2Bytes(dir)).toBe(2 * 1024 * 1024);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    expect(hostL2Bytes(join(dir, 'gone'))).toBeUndefined();
    const host = hostL2Bytes();
    expect(hostSpreadFromBytes()).toBe(host === undefined ? Infinity : 2 * host);
  });
});
