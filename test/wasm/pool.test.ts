/**
 * The wasm thread pool's chunk claiming (runtime/wasm/threads.ts): every
 * row of an op is run exactly once whoever claims it and however late a
 * worker wakes, no more threads than the op's count take part, and a chunk
 * that traps fails the op on the caller or on a worker and leaves the pool
 * usable. Functions built here with binaryen over a shared memory:
 * `mark(base, lo, hi)` adds 1 to the i32 at base + 4 row for each row,
 * `hold(ctr, rel, lo, hi)` counts itself in at ctr and waits for rel,
 * `trap(row, lo, hi)` traps when its rows hold `row`.
 */
import binaryen from 'binaryen';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { balancedCuts, chunksFor, MAX_CHUNKS, WasmThreadPool } from '../../runtime/wasm/threads.js';

function build(): WebAssembly.Module {
  const b = binaryen;
  const m = new b.Module();
  m.setFeatures(b.Features.Atomics | b.Features.BulkMemory | b.Features.MutableGlobals);
  m.setMemory(1, 16, null, [], true, false, '0');
  m.addMemoryImport('0', 'env', 'memory', true);
  const i32 = b.i32;
  const get = (i: number): number => m.local.get(i, i32);
  const addr = (base: number, row: number): number => m.i32.add(get(base), m.i32.shl(get(row), m.i32.const(2)));
  // mark(base, lo, hi): for (i = lo; i < hi; i++) atomic mem[base + 4i] += 1
  m.addFunction(
    'mark',
    b.createType([i32, i32, i32]),
    b.none,
    [],
    m.block(null, [
      m.if(
        m.i32.lt_s(get(1), get(2)),
        m.loop(
          'L',
          m.block(null, [
            m.drop(m.i32.atomic.rmw.add(0, addr(0, 1), m.i32.const(1))),
            m.local.set(1, m.i32.add(get(1), m.i32.const(1))),
            m.br('L', m.i32.lt_s(get(1), get(2))),
          ]),
        ),
      ),
    ]),
  );
  // hold(ctr, rel, lo, hi): atomic ctr += 1; while (!atomic rel); (each thread holds one chunk until released)
  m.addFunction(
    'hold',
    b.createType([i32, i32, i32, i32]),
    b.none,
    [],
    m.block(null, [
      m.drop(m.i32.atomic.rmw.add(0, get(0), m.i32.const(1))),
      m.loop('W', m.br('W', m.i32.eqz(m.i32.atomic.load(0, get(1))))),
    ]),
  );
  // trap(row, lo, hi): unreachable when lo <= row < hi
  m.addFunction(
    'trap',
    b.createType([i32, i32, i32]),
    b.none,
    [],
    m.if(m.i32.and(m.i32.le_s(get(1), get(0)), m.i32.lt_s(get(0), get(2))), m.unreachable()),
  );
  for (const f of ['mark', 'hold', 'trap']) m.addFunctionExport(f, f);
  if (!m.validate()) throw new Error('pool test module does not validate');
  const bytes = m.emitBinary();
  m.dispose();
  return new WebAssembly.Module(bytes as Uint8Array<ArrayBuffer>);
}

const ROWS = 5000;
let memory: WebAssembly.Memory;
let fns: Record<string, (...a: number[]) => void>;
let pool: WasmThreadPool;
const module = build();

beforeAll(async () => {
  memory = new WebAssembly.Memory({ initial: 1, maximum: 16, shared: true } as WebAssembly.MemoryDescriptor);
  fns = new WebAssembly.Instance(module, { env: { memory } }).exports as typeof fns;
  pool = await WasmThreadPool.create(module, memory, ['mark', 'hold', 'trap'], 3);
});
afterAll(() => pool.close());

/** Runs mark over rows [0, ROWS) in `cuts` and returns the count per row. */
function marks(cuts: number[], threads: number, self = (lo: number, hi: number) => fns.mark!(0, lo, hi)): Int32Array {
  new Int32Array(memory.buffer, 0, ROWS).fill(0);
  pool.run('mark', [0], cuts, self, threads);
  return new Int32Array(memory.buffer, 0, ROWS).slice();
}

describe('the wasm pool claims chunks', () => {
  it('runs every row exactly once, for any chunks and thread count', () => {
    const ptr = Int32Array.from({ length: ROWS + 1 }, (_, i) => i * i);
    for (const threads of [1, 2, 3])
      for (const chunks of [1, 2, 7, chunksFor(ROWS, threads), MAX_CHUNKS])
        for (let rep = 0; rep < 20; rep++) {
          const got = marks(balancedCuts(ROWS, chunks, rep % 2 ? ptr : undefined), threads);
          expect(got.every((v) => v === 1)).toBe(true);
        }
  });

  it('lets the workers take what the caller leaves: a slow caller still finishes every row once', () => {
    let mine = 0;
    const got = marks(balancedCuts(ROWS, 64), 3, (lo, hi) => {
      mine++;
      const until = performance.now() + 2;
      while (performance.now() < until);
      fns.mark!(0, lo, hi);
    });
    expect(got.every((v) => v === 1)).toBe(true);
    // The two workers wake within the caller's 2 ms chunks and take most of the 64.
    expect(mine).toBeLessThan(64);
  });

  it('lets no more threads than the op asks take part', () => {
    const ints = new Int32Array(memory.buffer);
    const [ctr, rel] = [8192, 8193];
    for (const [threads, want] of [
      [2, 1],
      [3, 2],
    ] as const) {
      Atomics.store(ints, ctr, 0);
      Atomics.store(ints, rel, 0);
      let seen = 0;
      let first = true;
      pool.run(
        'hold',
        [ctr * 4, rel * 4],
        balancedCuts(ROWS, 16),
        () => {
          if (!first) return;
          first = false;
          // Wait up to 300 ms for the workers to come in, then release them.
          const until = performance.now() + 300;
          while (performance.now() < until && Atomics.load(ints, ctr) < 2);
          seen = Atomics.load(ints, ctr);
          Atomics.store(ints, rel, 1);
        },
        threads,
      );
      expect(seen).toBe(want);
    }
  });

  it('fails the op when a chunk traps, on the caller or a worker, and stays usable', () => {
    const cuts = balancedCuts(ROWS, 16);
    // On the caller (an op on one thread: every chunk is the caller's): its own error.
    expect(() => pool.run('trap', [10], cuts, (lo, hi) => fns.trap!(10, lo, hi), 1)).toThrow(WebAssembly.RuntimeError);
    // On a worker: the caller never runs the trapping chunk.
    let threw = false;
    for (let rep = 0; rep < 50 && !threw; rep++) {
      try {
        pool.run('trap', [ROWS - 1], cuts, (lo, hi) => {
          if (hi === ROWS) throw new Error('the caller left the last chunk to a worker');
          const until = performance.now() + 0.5;
          while (performance.now() < until);
          fns.trap!(ROWS - 1, lo, hi);
        });
      } catch (e) {
        if (String(e).includes('left the last chunk')) continue;
        expect(String(e)).toMatch(/trap failed on a worker/);
        threw = true;
      }
    }
    expect(threw).toBe(true);
    expect(marks(cuts, 3).every((v) => v === 1)).toBe(true);
  });

  it('refuses chunks it cannot hold and an unknown function', () => {
    expect(() => pool.run('mark', [0], balancedCuts(ROWS, MAX_CHUNKS + 1), () => {})).toThrow(/chunks, expected 1\.\./);
    expect(() => pool.run('nope', [0], [0, 1], () => {})).toThrow(/unknown function nope/);
  });
});
