/**
 * Spread walks (codegen/wasm/simd.ts `SPREAD`, WasmOp.spread): which ops get
 * a second function, that the executor runs it where the gathered rows'
 * bytes reach its threshold and most of them lie far from each row's own
 * (runtime/wasm/spread.ts), at 1 and 2 threads, with the plain function's
 * bits; the host's L2 read from sysfs.
 */
import { mkdtempSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { emitWasm } from '../../codegen/wasm/emit.js';
import { planVector } from '../../codegen/wasm/simd.js';
import type { LStmt } from '../../ir/loops.js';
import type { Kernel } from '../../ir/module.js';
import { Rng } from '../../runtime/random.js';
import type { CsrMatrix, DenseTensor, Tensor } from '../../runtime/tensor.js';
import { createWasmExecutor, executorOver } from '../../runtime/wasm/executor.js';
import { instantiateKernel } from '../../runtime/wasm/instantiate.js';
import { WasmThreadPool } from '../../runtime/wasm/threads.js';
import {
  FAR_ROW_ENTRIES,
  FAR_SAMPLE_ROWS,
  farShare,
  hostL2Bytes,
  hostSpreadFromBytes,
  parseCacheSize,
  spreadPays,
  type GatherPattern,
} from '../../runtime/wasm/spread.js';
import { bandedPattern, farPattern } from '../helpers/gather-patterns.js';
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

/**
 * n x n, rows of 5 entries at least 3n/8 columns from the diagonal, so that the rule's share of far entries
 * says spread at any threshold over B's bytes: rows >= 256 let the pool split.
 */
const scattered = (n: number, seed: number): CsrMatrix => farPattern(n, n, 5, seed);
const csrPattern = (m: CsrMatrix): GatherPattern => ({
  ptr: m.rowPtr,
  at: (q) => m.colIdx[q]!,
  gatheredRows: m.cols,
});

const dense = (shape: number[], seed: number): DenseTensor => ({
  format: 'dense',
  shape,
  data: rand(shape[0]! * shape[1]!, seed),
});

type Inputs = { tensors: Map<string, Tensor>; scalars: Map<string, number> };
const inputsOf = (ts: Record<string, Tensor>): Inputs => ({ tensors: new Map(Object.entries(ts)), scalars: new Map() });

/** The kernel's outputs from its plain functions (1 thread) and from its spread forms on every call at 1 and 2 threads. */
async function spreadAgrees(k: Kernel, inputs: Inputs, what: string): Promise<void> {
  const plain = await emitWasm(k, { spreadWalks: 1 });
  const base = await createWasmExecutor(plain.binary, plain.manifest, { threads: 1 });
  const want = base.run(inputs).outputs;
  base.close();
  const { binary, manifest } = await emitWasm(k);
  expect(
    manifest.ops.some((o) => o.spread),
    `${what}: an op with a spread form`,
  ).toBe(true);
  for (const threads of [1, 2]) {
    const ex = await createWasmExecutor(binary, manifest, { threads, spreadFromBytes: 0 });
    try {
      const got = ex.run(inputs).outputs;
      for (const o of manifest.ops) if (o.spread) expect(ex.spreadsOp(o.op)).toBe(true);
      for (const [name, y] of want) expectIdentical(got.get(name)!, y, `${what}, ${threads} threads: ${name}`);
    } finally {
      ex.close();
    }
  }
}

afterEach(() => {
  vi.restoreAllMocks();
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
          [2, Infinity, undefined], // never: no spread form resolved
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

  it('the function called is the one the decision names: at 1 thread (the calls recorded) and 2 (the pool told)', async () => {
    const { binary, manifest } = await emitWasm(spmm('f32'));
    const A = scattered(600, 7);
    const inputs = inputsOf({ A, B: dense([600, 64], 8) });
    for (const [from, want] of [
      [0, 'k_op0_spread'],
      [Infinity, 'k_op0'],
    ] as const) {
      const { memory, instance } = await instantiateKernel(binary, manifest, 1, 'test');
      const called: string[] = [];
      const fns: Record<string, unknown> = {};
      for (const [name, f] of Object.entries(instance.exports))
        fns[name] =
          typeof f === 'function'
            ? (...a: number[]) => {
                called.push(name);
                return (f as (...x: number[]) => void)(...a);
              }
            : f;
      const ex = executorOver(manifest, { fns }, memory, { spreadFromBytes: from });
      ex.run(inputs);
      ex.run(inputs);
      expect(called).toEqual([want, want]);
      ex.close();
      const run = vi.spyOn(WasmThreadPool.prototype, 'run');
      const two = await createWasmExecutor(binary, manifest, { threads: 2, spreadFromBytes: from });
      try {
        two.run(inputs);
        expect(run.mock.calls.map((c) => c[0])).toEqual([want]);
      } finally {
        two.close();
        run.mockRestore();
      }
    }
    // Without a finite threshold the functions need no spread form (a native library has none).
    const { memory, instance } = await instantiateKernel(binary, manifest, 1, 'test');
    const only = { k_op0: instance.exports.k_op0 };
    const ex = executorOver(manifest, { fns: only }, memory);
    expect(ex.run(inputs).outputs.get('Y')).toBeDefined();
    expect(ex.spreadsOp('op0')).toBeUndefined();
    expect(() => executorOver(manifest, { fns: only }, memory, { spreadFromBytes: 0 })).toThrow(
      /exports no function 'k_op0_spread'/,
    );
  });

  it('give the plain bits on gcn at widths that take blocks of 4 and 2 walks, attention, a repeat over X.next, and a loop with a load that is not gathered', async () => {
    const A = scattered(400, 11);
    await spreadAgrees(
      gcn,
      inputsOf({ A, X: dense([400, 19], 1), W1: dense([19, 70], 2), W2: dense([70, 40], 3) }),
      'gcn 70/40',
    );
    const attention = loopKernel(readFileSync(`${EXAMPLES_DIR}attention.dy`, 'utf8'), 'attention.dy');
    await spreadAgrees(
      attention,
      inputsOf({ A, Q: dense([400, 75], 4), K: dense([400, 75], 5), V: dense([400, 75], 6) }),
      'attention d=75',
    );
    for (const t of ['f32', 'f64']) {
      const repeat = loopKernel(
        `kernel k(A: csr<${t}>[n, n], X0: dense<${t}>[n, h]) -> (X: dense<${t}>[n, h]) {
          X[i, c] = X0[i, c];
          repeat 3 { X[i, c] = A[i, j] * X[j, c]; }
        }`,
      );
      await spreadAgrees(repeat, inputsOf({ A, X0: dense([400, 66], 7) }), `repeat over X.next ${t}`);
      const mixed = loopKernel(
        `kernel k(A: csr<${t}>[n, n], B: dense<${t}>[n, h], C: dense<${t}>[n, h], D: dense<${t}>[n, h]) -> (Y: dense<${t}>[n, h]) {
          Y[i, c] = relu(A[i, j] * (B[j, c] + C[j, c])) * D[i, c];
        }`,
      );
      await spreadAgrees(
        mixed,
        inputsOf({ A, B: dense([400, 75], 8), C: dense([400, 75], 9), D: dense([400, 75], 10) }),
        `two gathered, one not ${t}`,
      );
    }
  });

  it('are for loads inside a walk over entries: a row read once through a loaded offset has none', () => {
    const k = spmm('f32');
    const loop = (ss: readonly LStmt[]): Extract<LStmt, { k: 'for' }> | undefined => {
      for (const x of ss) if (x.k === 'for') return x.body.some((y) => y.k === 'for') && !x.parallel ? x : loop(x.body);
      return undefined;
    };
    const f = k.loops![0]!;
    const kLoop = loop(f.body)!;
    expect(planVector(kLoop, f.buffers)?.rowGathered).toEqual(new Set(['B']));
    // for c { let off = ptr[i]; Y[i*h + c] = X[off + c] }: one row, no walk to share.
    const once: Extract<LStmt, { k: 'for' }> = {
      k: 'for',
      var: 'c',
      lo: { k: 'const', value: 0, type: 'index' },
      hi: { k: 'var', name: 'h' },
      parallel: false,
      body: [
        { k: 'let', var: 'off', type: 'index', value: { k: 'load', buf: 'A.rowPtr', index: { k: 'var', name: 'i' } } },
        {
          k: 'store',
          buf: 'Y',
          index: {
            k: 'bin',
            op: '+',
            type: 'index',
            lhs: { k: 'bin', op: '*', type: 'index', lhs: { k: 'var', name: 'i' }, rhs: { k: 'var', name: 'h' } },
            rhs: { k: 'var', name: 'c' },
          },
          value: {
            k: 'load',
            buf: 'B',
            index: { k: 'bin', op: '+', type: 'index', lhs: { k: 'var', name: 'off' }, rhs: { k: 'var', name: 'c' } },
          },
        },
      ],
    } as Extract<LStmt, { k: 'for' }>;
    const plan = planVector(once, f.buffers);
    expect(plan).toBeDefined();
    expect(plan!.rowGathered.size).toBe(0);
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

  it('are weighed again when a new pattern has the same layout: banded, then far, then banded', async () => {
    const { binary, manifest } = await emitWasm(spmm('f32'));
    const n = 1200;
    const ex = await createWasmExecutor(binary, manifest, { threads: 1, spreadFromBytes: n * 64 * 4 });
    try {
      const B = dense([n, 64], 3);
      for (const [A, spreads] of [
        [bandedPattern(n, n, 6, 40, 1), false],
        [farPattern(n, n, 6, 2), true],
        [bandedPattern(n, n, 6, 40, 3), false],
      ] as const) {
        ex.run(inputsOf({ A, B }));
        expect(ex.spreadsOp('op0')).toBe(spreads);
      }
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

  it('count the far entries of a sample: none in a band narrower than the window, all where rows gather half the matrix away', () => {
    const band = bandedPattern(2000, 2000, 6, 10, 1);
    expect(farShare(csrPattern(band), 11)).toBe(0);
    expect(farShare(csrPattern(band), 3)).toBeGreaterThan(0.5);
    const far = farPattern(2000, 2000, 6, 2);
    expect(farShare(csrPattern(far), 700)).toBe(1);
    // A window of 0 holds nothing: every entry is far (what spreadFromBytes 0 asks for).
    expect(farShare(csrPattern(band), 0)).toBe(1);
    // Rectangular: row r's place is r x cols / rows, not r.
    const wide = bandedPattern(500, 5000, 4, 20, 3);
    expect(farShare(csrPattern(wide), 21)).toBe(0);
    expect(farShare({ ...csrPattern(wide), gatheredRows: 500 }, 21)).toBeGreaterThan(0.95);
    // Nothing sampled says nothing against spreading.
    expect(farShare({ ptr: Int32Array.of(0), at: () => 0, gatheredRows: 0 }, 5)).toBe(1);
    expect(farShare({ ptr: new Int32Array(9), at: () => 0, gatheredRows: 8 }, 5)).toBe(1);
  });

  it('read a bounded sample: at most FAR_SAMPLE_ROWS rows of FAR_ROW_ENTRIES entries', () => {
    const rows = 10_000;
    const ptr = Int32Array.from({ length: rows + 1 }, (_, r) => r * 1000);
    let reads = 0;
    const share = farShare(
      {
        ptr,
        at: (q) => {
          reads++;
          return q % 2 === 0 ? Math.floor(q / 1000) : 0;
        },
        gatheredRows: rows,
      },
      100,
    );
    expect(reads).toBe(FAR_SAMPLE_ROWS * FAR_ROW_ENTRIES);
    expect(share).toBeGreaterThan(0.4);
    expect(share).toBeLessThan(0.5);
  });

  it('weigh the pattern only over the bytes threshold, and spread where most of its entries are far', () => {
    const band = csrPattern(bandedPattern(4000, 4000, 6, 30, 4));
    const far = csrPattern(farPattern(4000, 4000, 6, 5));
    // 4000 rows of 128 bytes (512 KB) against a threshold of 256 KB: the window is 64 KB, 500 rows.
    const at = () => 4000 * 128;
    let asked = 0;
    const ask = (g: GatherPattern) => () => {
      asked++;
      return g;
    };
    expect(spreadPays([0], at, 4000 * 128 + 1, ask(far))).toBe(false);
    expect(asked).toBe(0);
    expect(spreadPays([0], at, 256 * 1024, ask(far))).toBe(true);
    expect(spreadPays([0], at, 256 * 1024, ask(band))).toBe(false);
    expect(asked).toBe(2);
    expect(spreadPays([0], at, 256 * 1024)).toBe(true);
    expect(spreadPays([0], at, 256 * 1024, () => undefined)).toBe(true);
    // A window under one row (a threshold of 0) spreads any pattern, whatever the pattern's data say.
    expect(spreadPays([0], at, 0, ask(band))).toBe(true);
    const bad = (over: Partial<GatherPattern>) => () => ({ ...band, ...over });
    expect(spreadPays([0], at, 0, bad({ at: () => NaN }))).toBe(true);
    expect(spreadPays([0], at, 0, bad({ gatheredRows: Infinity }))).toBe(true);
    expect(spreadPays([0], at, 256 * 1024, bad({ gatheredRows: Infinity }))).toBe(true);
    // Pointers that go down read nothing of that row: the share stays in [0, 1].
    const down = farShare({ ptr: Int32Array.of(5, 0, 1), at: () => 0, gatheredRows: 2 }, 1);
    expect(down).toBeGreaterThanOrEqual(0);
    expect(down).toBeLessThanOrEqual(1);
  });

  it('stay plain over a banded A with B past the threshold, and run over a far one, at 1 and 2 threads (csr and csc)', async () => {
    const n = 1200;
    const h = 64;
    const from = n * h * 4; // B's bytes: window from / 4 = n / 4 rows of B
    const csc = loopKernel(
      'kernel k(A: csc<f32>[m, n], B: dense<f32>[m, h]) -> (Y: dense<f32>[n, h]) { Y[j, c] = A[i, j] * B[i, c]; }',
    );
    for (const [k, layout] of [
      [spmm('f32'), 'csr'],
      [csc, 'csc'],
    ] as const) {
      const { binary, manifest } = await emitWasm(k);
      const plain = await emitWasm(k, { spreadWalks: 1 });
      for (const [A, spreads] of [
        [bandedPattern(n, n, 6, 40, 6), false],
        [farPattern(n, n, 6, 7), true],
      ] as const) {
        const a: Tensor =
          layout === 'csr'
            ? A
            : { format: 'csc', rows: n, cols: n, colPtr: A.rowPtr, rowIdx: A.colIdx, values: A.values };
        const inputs = inputsOf({ A: a, B: dense([n, h], 8) });
        const base = await createWasmExecutor(plain.binary, plain.manifest, { threads: 1 });
        const want = base.run(inputs).outputs;
        base.close();
        for (const threads of [1, 2]) {
          const ex = await createWasmExecutor(binary, manifest, { threads, spreadFromBytes: from });
          try {
            const got = ex.run(inputs).outputs;
            expect(ex.spreadsOp('op0'), `${layout}, ${threads} threads`).toBe(spreads);
            for (const [name, y] of want) expectIdentical(got.get(name)!, y, `${layout} ${threads} threads: ${name}`);
          } finally {
            ex.close();
          }
        }
      }
    }
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
