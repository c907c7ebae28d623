/**
 * `each` and `stream` read their inputs one at a time from any iterable or async iterable (docs/RUNTIME.md,
 * *Pipelining*): an input already admitted goes through its stages while an async source waits for the next one, so
 * a source that yields one graph and then waits indefinitely still delivers it; leaving the loop closes the source;
 * an error of the source's own return() does not replace the input error that is leaving. gcn on two stages (host,
 * then a loopback GPU: another wasm memory, test/helpers/loopback.ts).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { createGuardedRuntime, type GuardedRuntime } from '../../runtime/engine/runtime.js';
import { generatedMatrix } from '../../runtime/generate.js';
import { buildGuards, partitionLabel, sampleBindings } from '../../runtime/guards/index.js';
import { sparseFeaturesOf } from '../../runtime/guards/features.js';
import type { GuardPlan } from '../../runtime/guards/types.js';
import { loadSystemFile } from '../../runtime/system/load.js';
import type { CsrMatrix, DenseTensor } from '../../runtime/tensor.js';
import { specOf } from '../helpers/compile.js';
import { goal } from '../helpers/goal.js';
import { wasmAndLoopbacks } from '../helpers/loopback.js';
import { compileWasm, loopKernel } from '../wasm/compare.js';
import { throughputConfig } from './runtime-fixture.js';

const root = join(import.meta.dirname, '..', '..');
const SYS = loadSystemFile(join(root, 'systems', 'paper-1g1f.json'));
const gs = [generatedMatrix(300, 4), generatedMatrix(500, 6)];
const dense = (shape: number[]): DenseTensor => ({
  format: 'dense',
  shape,
  data: new Float64Array(shape[0]! * shape[1]!).fill(0.5),
});
const inputs = (g: CsrMatrix) => ({ A: g, X: dense([g.rows, 8]), W1: dense([8, 8]), W2: dense([8, 4]) });
const sleep = (ms: number) => new Promise((ok) => setTimeout(ok, ms));

let make: () => GuardedRuntime;
beforeAll(async () => {
  const src = readFileSync(join(root, 'examples', 'gcn.dy'), 'utf8');
  const spec = specOf(src, 'gcn.dy');
  const kernel = loopKernel(src, 'gcn.dy');
  const bind = (g: CsrMatrix) => ({
    sparse: new Map([['A', sparseFeaturesOf(g, 2)]]),
    dims: new Map([
      ['n', g.rows],
      ['f', 8],
      ['h', 8],
      ['c', 4],
    ]),
    scalars: new Map(),
  });
  const built = buildGuards(
    spec,
    SYS,
    sampleBindings(gs.map(bind), { perProfile: 2, shapeDims: { A: ['n', 'n'] } }),
    goal('throughput'),
  );
  const choices = [
    { start: 0, end: 2, device: 'cpu', count: 1 },
    { start: 2, end: 4, device: 'gpu', count: 1 },
  ];
  const plan: GuardPlan = {
    ...built,
    partitions: [{ id: 0, choices, label: partitionLabel(spec, choices), fallbacks: [] }],
    tree: { leaf: 0 },
    ranges: {},
  };
  const { binary, manifest } = await compileWasm(kernel);
  const config = throughputConfig(kernel, spec, manifest, plan);
  const backends = await wasmAndLoopbacks(binary, manifest);
  make = () => createGuardedRuntime(config, { system: SYS, backends });
}, 120_000);

describe('a stream read from its source one input at a time', () => {
  it('delivers an admitted input while an async source waits for the next', async () => {
    const rt = make();
    let release: () => void = () => undefined;
    const waiting = new Promise<void>((ok) => (release = ok));
    let closed = false;
    async function* arriving() {
      try {
        yield { inputs: inputs(gs[0]!), name: 'first' };
        await waiting;
        yield { inputs: inputs(gs[1]!), name: 'second' };
      } finally {
        closed = true;
      }
    }
    const it = rt.each(arriving());
    // Two stages: the first input must come out although the source has not yielded the second.
    const first = await Promise.race([it.next(), sleep(5_000).then(() => 'held back' as const)]);
    expect(first).not.toBe('held back');
    expect((first as IteratorResult<{ stages: unknown[] }>).value.stages).toHaveLength(2);
    release();
    const second = await it.next();
    expect(second.done).toBe(false);
    expect((await it.next()).done).toBe(true);
    expect(closed).toBe(true);
    rt.close();
  });

  it('pipelines an async source whose items are at hand as it pipelines an array', async () => {
    const rt = make();
    const items = [0, 1, 0, 1, 0, 1].map((k, n) => ({ inputs: inputs(gs[k]!), name: `g${n}` }));
    async function* at() {
      yield* items;
    }
    for (const source of [items, at()]) {
      const out = (await rt.stream(source)).results;
      expect(out.map((r) => r.log.input)).toEqual(items.map((x) => x.name));
      // Two stages, six inputs: a later input's first stage runs beside an earlier one's second.
      expect(out.flatMap((r) => r.stages).some((st) => st.concurrent)).toBe(true);
    }
    rt.close();
  });

  it("surfaces an error of the source's return() on a plain break, as for-of does", async () => {
    const rt = make();
    const source: AsyncIterable<unknown> = {
      [Symbol.asyncIterator]() {
        return {
          next: async () => ({ done: false, value: { inputs: inputs(gs[0]!), name: 'g' } }),
          return: async () => {
            throw new Error('return failed');
          },
        };
      },
    };
    await expect(
      (async () => {
        for await (const r of rt.each(source as never)) if (r) break;
      })(),
    ).rejects.toThrow(/return failed/);
    rt.close();
  });

  it("keeps the input's error when the source's return() throws as the stream leaves", async () => {
    const rt = make();
    const source: Iterable<unknown> = {
      [Symbol.iterator]() {
        let k = 0;
        return {
          next: () => ({ done: false, value: k++ === 0 ? { inputs: inputs(gs[0]!), name: 'ok' } : { A: gs[0] } }),
          return: () => {
            throw new Error('return failed');
          },
        };
      },
    };
    const got: unknown[] = [];
    await expect(
      (async () => {
        for await (const r of rt.each(source as never)) got.push(r);
      })(),
    ).rejects.toThrow(/DY3013/);
    expect(got).toHaveLength(1);
    rt.close();
  });

  it('a source that is no iterable, an iterator without next(), a non-object result or item: DY3042, never a TypeError', async () => {
    const rt = make();
    const drained = async (src: unknown): Promise<unknown[]> => {
      const got: unknown[] = [];
      for await (const r of rt.each(src as never)) got.push(r);
      return got;
    };
    await expect(drained(null)).rejects.toThrow(/DY3042: got null: each\(\) and stream\(\) take an iterable/);
    await expect(drained(5)).rejects.toThrow(/DY3042: got a number/);
    await expect(rt.stream({} as never)).rejects.toThrow(/DY3042: got an object with neither/);
    await expect(drained({ [Symbol.asyncIterator]: () => 5 })).rejects.toThrow(
      /DY3042: its \[Symbol\.asyncIterator\]\(\) gave a number, not an iterator/,
    );
    await expect(drained({ [Symbol.iterator]: () => ({}) })).rejects.toThrow(
      /DY3042: its \[Symbol\.iterator\]\(\) gave an object/,
    );
    await expect(drained({ [Symbol.iterator]: () => ({ next: () => 7 }) })).rejects.toThrow(
      /DY3042: its next\(\) gave a number, not an iterator result/,
    );
    await expect(drained({ [Symbol.asyncIterator]: () => ({ next: async () => null }) })).rejects.toThrow(
      /DY3042: its next\(\) gave null/,
    );
    // An item that is null: the inputs' own check (as run(null) has it).
    await expect(drained([null])).rejects.toThrow(/DY3042: expected an object of inputs by parameter name/);
    // After an input in flight: it is delivered first.
    const one = { inputs: inputs(gs[0]!), name: 'first' };
    let k = 0;
    const late = {
      [Symbol.asyncIterator]: () => ({ next: async () => (k++ === 0 ? { done: false, value: one } : 3) }),
    };
    const got: unknown[] = [];
    await expect(
      (async () => {
        for await (const r of rt.each(late as never)) got.push(r);
      })(),
    ).rejects.toThrow(/DY3042: its next\(\) gave a number/);
    expect(got).toHaveLength(1);
    rt.close();
  });
});
