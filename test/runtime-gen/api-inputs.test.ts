/**
 * The generated typed runtime as an application calls it (docs/RUNTIME.md): every input it is given reaches the
 * runtime's checks (an extra name is DY3014, a scalar out of its dtype's range DY3042, a rank-1 input of another
 * shape DY3042), a stream is read one input at a time (an endless source streams, leaving the loop closes it), and
 * backends built from another version of the program are refused (DY3044) rather than run. pagerank compiled for
 * this machine's system (CPU only: every stage on the project's wasm kernels).
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InputError } from '../../runtime/errors.js';
import { closeBackends, type StageBackends } from '../../runtime/exec/index.js';
import { toCsr } from '../../runtime/io/convert.js';
import { loadMatrix } from '../../runtime/io/load.js';
import { openProject } from '../../runtime/native/project.js';
import type { SystemSpec } from '../../runtime/system/types.js';
import type { CsrMatrix, DenseTensor } from '../../runtime/tensor.js';
import { cleanup, cpuRuntimeCompileArgs, example, freshDir, runCliAsync } from '../helpers/cli.js';

const root = join(import.meta.dirname, '..', '..');
const M = join(root, '..', 'shared', 'data', 'matrices');
const HAVE_DATA = existsSync(M);

interface Result {
  outputs: { r: DenseTensor };
  stages: { backend: string }[];
}
interface TypedRuntime {
  run(inputs: Record<string, unknown>): Promise<Result>;
  stream(inputs: Iterable<unknown> | AsyncIterable<unknown>): Promise<{ results: Result[] }>;
  each(inputs: Iterable<unknown> | AsyncIterable<unknown>): AsyncGenerator<Result>;
  close(): void;
}
type Create = (o: { system: SystemSpec; backends: StageBackends }) => TypedRuntime;

/** A compiled project's generated runtime, importing this checkout's runtime library. */
async function generated(dir: string, program: string): Promise<Create> {
  const src = readFileSync(join(dir, 'runtime', `${program}.runtime.ts`), 'utf8').replace(
    "from 'dype/runtime'",
    `from ${JSON.stringify(join(root, 'runtime', 'engine', 'index.ts'))}`,
  );
  const file = join(dir, `${program}.local.runtime.ts`);
  writeFileSync(file, src);
  return ((await import(file)) as { createRuntime: Create }).createRuntime;
}

async function compile(file: string, dir: string): Promise<void> {
  const c = await runCliAsync(cpuRuntimeCompileArgs(file, dir, [join(M, 'cage8.mtx'), join(M, 'Erdos971.mtx')]), {
    timeoutMs: 120_000,
  });
  if (c.status !== 0) throw new Error(`compile ${file}: ${c.stderr}`);
}

const code = async (p: Promise<unknown>): Promise<string> => {
  try {
    await p;
    return 'ok';
  } catch (e) {
    return e instanceof InputError ? `${e.code}: ${e.message}` : `${(e as Error).name}: ${(e as Error).message}`;
  }
};

describe.skipIf(!HAVE_DATA)('the generated runtime as an application calls it (pagerank, wasm)', () => {
  const dir = freshDir('dype-api-inputs-');
  const edited = freshDir('dype-api-inputs-edited-');
  let system: SystemSpec;
  let backends: StageBackends;
  let create: Create;
  let A: CsrMatrix;
  let r0: DenseTensor;
  beforeAll(async () => {
    await compile(example('pagerank.dy'), dir);
    system = (JSON.parse(readFileSync(join(dir, 'plan.json'), 'utf8')) as { system: SystemSpec }).system;
    backends = await openProject(dir, system, { emulate: false, kinds: ['cpu'] });
    create = await generated(dir, 'pagerank');
    A = toCsr(loadMatrix(join(M, 'cage8.mtx')));
    r0 = { format: 'dense', shape: [A.rows], data: new Float64Array(A.rows).fill(1 / A.rows) };
  }, 240_000);
  afterAll(() => {
    if (backends) closeBackends(backends);
    cleanup(dir);
    cleanup(edited);
  });

  it('passes every input to the runtime: an extra name is DY3014, not dropped', async () => {
    const rt = create({ system, backends });
    expect(await code(rt.run({ A, r0, d: 0.85 }))).toBe('ok');
    expect(await code(rt.run({ A, r0, d: 0.85, B: r0 }))).toMatch(/^DY3014: .*has no parameter 'B'/);
    rt.close();
  });

  it('checks a scalar against its dtype and names what a non-number is', async () => {
    const rt = create({ system, backends });
    expect(await code(rt.run({ A, r0, d: 1e39 }))).toMatch(/^DY3042: .*'d' is f32: 1e\+39 is beyond f32's range/);
    // An infinity is a value f32 holds, as the command line takes it.
    expect(await code(rt.run({ A, r0, d: Infinity }))).toBe('ok');
    expect(await code(rt.run({ A, r0, d: '0.85' }))).toMatch(/^DY3042: .*expected a number, found a string/);
    expect(await code(rt.run({ A, r0, d: 1n }))).toMatch(/expected a number, found a bigint/);
    expect(await code(rt.run({ A, r0, d: r0 }))).toMatch(/expected a number, found a dense tensor/);
    rt.close();
  });

  it('takes a rank-1 input as [n], n x 1 or 1 x n, and nothing else', async () => {
    const rt = create({ system, backends });
    const as = (shape: number[]) => ({ A, r0: { format: 'dense', shape, data: r0.data }, d: 0.85 });
    const base = (await rt.run(as([A.rows]))).outputs.r.data;
    for (const shape of [
      [A.rows, 1],
      [1, A.rows],
    ])
      expect(Array.from((await rt.run(as(shape))).outputs.r.data), shape.join('x')).toEqual(Array.from(base));
    expect(A.rows).toBe(1015);
    expect(await code(rt.run(as([5, 203])))).toMatch(/^DY3042: .*expected rank 1, found shape \[5, 203\]/);
    rt.close();
  });

  it('says what a malformed tensor lacks, and which dimension binds a square input', async () => {
    const rt = create({ system, backends });
    const noFormat = { shape: [A.rows], data: r0.data };
    expect(await code(rt.run({ A, r0: noFormat, d: 0.85 }))).toMatch(
      /^DY3051: .*a tensor's format must be 'dense', 'csr', 'csc' or 'coo', found none/,
    );
    const wide = { ...A, cols: A.cols + 1 };
    expect(await code(rt.run({ A: wide, r0, d: 0.85 }))).toMatch(
      /dimension 2 is n, which dimension 1 makes 1015, found 1016/,
    );
    rt.close();
  });

  it('reads a stream one input at a time: an endless source streams, and leaving the loop closes it', async () => {
    const rt = create({ system, backends });
    let pulled = 0;
    let closed = false;
    function* endless() {
      try {
        for (;;) {
          pulled++;
          yield { inputs: { A, r0, d: 0.85 }, name: `g${pulled}` };
        }
      } finally {
        closed = true;
      }
    }
    let got = 0;
    for await (const r of rt.each(endless())) {
      expect(r.outputs.r.data.length).toBe(A.rows);
      if (++got === 3) break;
    }
    // pagerank's partition here is one stage: one input in flight, so at most one taken ahead of the results.
    expect(pulled).toBeLessThanOrEqual(4);
    expect(closed).toBe(true);
    async function* arriving() {
      for (let i = 0; i < 3; i++) {
        await new Promise((ok) => setTimeout(ok, 1));
        yield { inputs: { A, r0, d: 0.85 }, name: `a${i}` };
      }
    }
    expect((await rt.stream(arriving())).results).toHaveLength(3);
    rt.close();
  });

  it('refuses backends built from another version of the program (DY3044), not only the command line', async () => {
    // pagerank with another damping form: same name, same parameters, another program hash.
    const src = readFileSync(example('pagerank.dy'), 'utf8').replace('(1 - d) / n', '(1 - d) / (n + 1)');
    const file = join(edited, 'pagerank.dy');
    writeFileSync(file, src);
    await compile(file, join(edited, 'p'));
    const other = await openProject(join(edited, 'p'), system, { emulate: false, kinds: ['cpu'] });
    try {
      expect(() => create({ system, backends: other })).toThrow(
        /DY3044.*built from another version of program 'pagerank'/,
      );
    } finally {
      closeBackends(other);
    }
  });
});

describe.skipIf(!HAVE_DATA)('a project of two kernels, compiled for the CPU of a system with every kind', () => {
  const dir = freshDir('dype-api-two-kernels-');
  afterAll(() => cleanup(dir));

  it("opens only the kinds its targets serve by default, and a kernel's runtime refuses another kernel's wasm module (DY3044)", async () => {
    const file = join(dir, 'two.dy');
    writeFileSync(
      file,
      [
        'kernel spmv(A: csr<f32>[m, n], x: dense<f32>[n]) -> (y: dense<f32>[m]) { y[i] = A[i, j] * x[j]; }',
        'kernel scale(A: csr<f32>[m, n], s: f32) -> (B: csr<f32>[m, n]) { B[i, j] = s * A[i, j]; }',
        '',
      ].join('\n'),
    );
    const out = join(dir, 'p');
    const c = await runCliAsync(cpuRuntimeCompileArgs(file, out, [join(M, 'cage8.mtx')], { system: 'paper-1g1f' }), {
      timeoutMs: 120_000,
    });
    expect(c.status, c.stderr).toBe(0);
    const system = (JSON.parse(readFileSync(join(out, 'plan.json'), 'utf8')) as { system: SystemSpec }).system;
    expect(new Set(system.devices.map((d) => d.kind))).toEqual(new Set(['cpu', 'gpu', 'fpga']));
    // No cuda or hls target: nothing but the wasm backend to open (asking for a GPU library was DY3043).
    const first = await openProject(out, system, { emulate: false });
    expect(Object.keys(first)).toEqual(['cpu']);
    const src = readFileSync(join(out, 'runtime', 'two.runtime.ts'), 'utf8').replace(
      "from 'dype/runtime'",
      `from ${JSON.stringify(join(root, 'runtime', 'engine', 'index.ts'))}`,
    );
    writeFileSync(join(out, 'two.local.runtime.ts'), src);
    const mod = (await import(join(out, 'two.local.runtime.ts'))) as Record<string, Create>;
    const A = toCsr(loadMatrix(join(M, 'cage8.mtx')));
    try {
      expect(() => mod['createScaleRuntime']!({ system, backends: first })).toThrow(
        /DY3044.*runs the module of kernel spmv of program 'two', but this runtime runs kernel scale: .*kernel: 'scale'/,
      );
      const spmv = mod['createSpmvRuntime']!({ system, backends: first });
      const x = { format: 'dense', shape: [A.cols], data: new Float64Array(A.cols).fill(1) };
      expect(await code(spmv.run({ A, x }))).toBe('ok');
      spmv.close();
    } finally {
      closeBackends(first);
    }
    const own = await openProject(out, system, { emulate: false, kernel: 'scale' });
    try {
      const rt = mod['createScaleRuntime']!({ system, backends: own });
      const r = (await rt.run({ A, s: 2 })) as unknown as { outputs: { B: CsrMatrix } };
      expect(Array.from(r.outputs.B.values.slice(0, 5))).toEqual(
        Array.from(A.values.slice(0, 5), (v) => Math.fround(2 * v)),
      );
      rt.close();
    } finally {
      closeBackends(own);
    }
  });
});
