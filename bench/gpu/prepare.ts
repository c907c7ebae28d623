/**
 * CPU side of the GPU benchmark (no GPU needed): for five real matrices of
 * different structure, writes under bench/results/gpu-work/ everything
 * bench/gpu/run.sh needs on a GPU machine that may have neither node nor
 * dype: the generated CUDA project of every example, the matrices, dense
 * inputs (uniform in [-1, 1), fixed seed, four decimals), reference outputs
 * from dype's float64 interpreter, and jobs.txt, one dype_check command line
 * per example and matrix (SpMM once per dense width in SPMM_WIDTHS on the
 * smaller matrices, its job named <matrix>-K<width>), and picks.txt, per job
 * and op the variant dype picks on the H200 for that input (`dype plan
 * --system h200-cpu`, its GPU-only mapping): what a user gets, which
 * run.sh reports beside the fastest variant.
 * Beside them, SpMV and SpMM (the same widths) on matrices of 10^7 entries
 * and more that run.sh generates on the GPU machine from generated.txt
 * (bench/gpu/generate.py: a 3-D stencil and an R-MAT graph with hubs of
 * 10^5-10^6 entries; NumPy inputs and float64 references, too large to
 * carry): their jobs read gen/, and their picks are planned here from the
 * same matrices made by the same rules (generated.ts).
 *   npm run build && node dist/bench/gpu/prepare.js
 * Then carry bench/results/gpu-work to the GPU machine and run bench/gpu/run.sh.
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { formatMatrixMarketArray, formatMatrixMarketCoordinate } from '../../runtime/io/mtx-write.js';
import { toCsr } from '../../runtime/io/convert.js';
import { loadMatrix } from '../../runtime/io/load.js';
import { parseGoal } from '../../cli/goal.js';
import { boundDims, loadSystem, planFor } from '../../cli/planning.js';
import { features } from '../../runtime/features/index.js';
import type { SparseFeatures } from '../../runtime/plan/types.js';
import type { CsrMatrix, Tensor } from '../../runtime/tensor.js';
import { compiledExample, jobBindings } from './examples.js';
import { GENERATED, generateMatrix, specLine } from './generated.js';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..', '..');
const work = join(root, 'bench', 'results', 'gpu-work');
const matrices = join(root, '..', 'shared', 'data', 'matrices');
const cli = join(root, 'dist', 'cli', 'main.js');

/** Structure: skewed circuit, power-law graph, FEM with wide rows, uniform Markov chain, irregular chemical process. */
export const MATRICES = ['adder_dcop_05', 'ca-GrQc', 'bcsstk13', 'cage8', 'bayer10'];
const F = 16;
/**
 * SpMM's dense widths: a job per width (the other examples keep F); the wider
 * ones on the matrices of at most WIDE_ROWS rows only, so that the work
 * folder (its references are float64 text) stays small enough to carry.
 */
export const SPMM_WIDTHS = [16, 32, 128];
const WIDE_ROWS = 2_100;

function dype(args: string[]): string {
  const r = spawnSync(process.execPath, [cli, ...args], { encoding: 'utf8', cwd: root });
  if (r.status !== 0) throw new Error(`dype ${args.join(' ')} failed:\n${r.stderr}`);
  return r.stdout;
}

/** The system whose GPU the picks are for: the H200 the GPU machine has. */
const PICK_SYSTEM = 'h200-cpu';

/**
 * The variant dype itself runs each op as on the system's GPU for this
 * input: the catalogue's choice in `dype plan`'s GPU-only mapping (what a
 * user gets), reported beside the fastest variant measured.
 */
function gpuPicks(ex: string, inputs: string[], params: string[]): [string, string][] {
  const plan = JSON.parse(
    dype([
      'plan',
      join('examples', `${ex}.dy`),
      '--system',
      PICK_SYSTEM,
      ...inputs.flatMap((i) => ['--input', i]),
      ...params.flatMap((p) => ['--param', p]),
      '--json',
    ]),
  ) as { baselines: Record<string, { stages: { variants: Record<string, string> }[] } | null> };
  const gpu = plan.baselines['gpu-only'];
  if (!gpu) throw new Error(`${ex}: no GPU-only mapping on ${PICK_SYSTEM}`);
  return gpu.stages.flatMap((st) => Object.entries(st.variants));
}

/** gpuPicks for a matrix held here only (a generated one): the planner in-process, its A from memory. */
function gpuPicksOf(
  ex: string,
  a: Tensor,
  feats: ReadonlyMap<string, SparseFeatures>,
  k: number | undefined,
): [string, string][] {
  const c = compiledExample(root, ex);
  const { tensors, scalars } = jobBindings(a, k);
  pickSystem ??= loadSystem({ system: PICK_SYSTEM }, PICK_SYSTEM);
  const r = planFor(c.spec, pickSystem, feats, boundDims(c.kernel, tensors, scalars), scalars, parseGoal({}));
  const gpu = r.baselines['gpu-only'].mapping;
  if (!gpu) throw new Error(`${ex}: no GPU-only mapping on ${PICK_SYSTEM}`);
  return gpu.stages.flatMap((st) => Object.entries(st.variants));
}
let pickSystem: ReturnType<typeof loadSystem> | undefined;

/** Jobs and picks of the generated matrices; their spec lines go to generated.txt. */
function generatedJobs(jobs: string[], picks: string[]): string[] {
  const specs: string[] = [];
  for (const g of GENERATED) {
    const t0 = performance.now();
    const a = generateMatrix(g);
    // Its features once, for every job on it (an O(nnz) pass over 10^7 entries).
    const feats = new Map([['A', features(a, 2)]]);
    const at = (f: string): string => `gen/${g.name}${f}`;
    const cases: { ex: string; job: string; args: string; k?: number }[] = [
      { ex: 'spmv', job: g.name, args: `--input A=${at('.csr')} --input x=${at('-x.npy')} --ref y=${at('-y.npy')}` },
      ...SPMM_WIDTHS.map((k) => ({
        ex: 'spmm',
        job: `${g.name}-K${k}`,
        args: `--input A=${at('.csr')} --input B=${at(`-B${k}.npy`)} --ref Y=${at(`-Y${k}.npy`)}`,
        k,
      })),
    ];
    for (const c of cases) {
      jobs.push(`${c.ex} ${c.job} ${c.args}`);
      for (const [op, variant] of gpuPicksOf(c.ex, a, feats, c.k)) picks.push(`${c.ex} ${c.job} ${op} ${variant}`);
    }
    specs.push(specLine(g, SPMM_WIDTHS));
    const s = ((performance.now() - t0) / 1e3).toFixed(1);
    console.log(
      `${g.name} (generated on the GPU machine): ${a.rows} x ${a.cols}, nnz ${a.colIdx.length}; planned in ${s} s`,
    );
  }
  return specs;
}

/** xorshift32 from a fixed seed; four decimals keep the files small. */
function randomDense(rows: number, cols: number, seed: number): string {
  let s = seed >>> 0 || 1;
  const data = new Float64Array(rows * cols);
  for (let k = 0; k < data.length; k++) {
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    data[k] = Math.round(((s / 2 ** 32) * 2 - 1) * 1e4) / 1e4;
  }
  return formatMatrixMarketArray({ format: 'dense', shape: [rows, cols], data }, 'real');
}

/**
 * The inputs PageRank and SSSP are defined on: a column-stochastic matrix (|a_ij| over its
 * column's sum; examples/pagerank.dy) and non-negative weights (|a_ij|; with negative ones
 * Bellman-Ford never settles and runs its 100,000 trips, where f32 and the float64 reference
 * drift apart, as the first H200 run showed on bcsstk13, bayer10 and adder_dcop_05).
 */
function reweighted(A: CsrMatrix, how: 'stochastic' | 'abs'): string {
  const values = A.values.map(Math.abs);
  if (how === 'stochastic') {
    const sums = new Float64Array(A.cols);
    for (let k = 0; k < values.length; k++) sums[A.colIdx[k]!] += values[k]!;
    for (let k = 0; k < values.length; k++) values[k] = sums[A.colIdx[k]!]! > 0 ? values[k]! / sums[A.colIdx[k]!]! : 0;
  }
  return formatMatrixMarketCoordinate({ ...A, values }, 'real');
}

function sourceVector(n: number): string {
  const data = new Float64Array(n).fill(Infinity);
  data[0] = 0;
  return formatMatrixMarketArray({ format: 'dense', shape: [n, 1], data }, 'real');
}

function main(): void {
  rmSync(work, { recursive: true, force: true });
  mkdirSync(join(work, 'data'), { recursive: true });
  mkdirSync(join(work, 'ref'), { recursive: true });
  const examples = ['spmv', 'spmm', 'gcn', 'pagerank', 'sssp', 'attention'];
  for (const ex of examples) dype(['compile', join('examples', `${ex}.dy`), '--targets', 'cuda', '-o', join(work, ex)]);
  const jobs: string[] = [];
  const picks: string[] = [];
  const rel = (p: string): string => relative(work, p);
  for (const name of MATRICES) {
    const src = join(matrices, `${name}.mtx`);
    const A = join(work, 'data', `${name}.mtx`);
    copyFileSync(src, A);
    const m = loadMatrix(A);
    const n = m.rows;
    const cols = m.cols;
    const file = (what: string, text: string): string => {
      const p = join(work, 'data', `${name}.${what}.mtx`);
      writeFileSync(p, text);
      return p;
    };
    const xn = file('x', randomDense(cols, 1, 1));
    const Xn = file(`X${F}`, randomDense(cols, F, 2));
    const W = file(`W${F}`, randomDense(F, F, 3));
    const W2 = file(`W${F}x8`, randomDense(F, 8, 4));
    const r0 = file('r0', randomDense(n, 1, 5).replace(/^-/gm, ''));
    const d0 = file('d0', sourceVector(n));
    const csr = toCsr(m);
    const stochastic = file('stochastic', reweighted(csr, 'stochastic'));
    const weights = file('abs', reweighted(csr, 'abs'));
    const runs: Record<string, { inputs: string[]; params: string[]; out: string }> = {
      spmv: { inputs: [`A=${A}`, `x=${xn}`], params: [], out: 'y' },
      spmm: { inputs: [`A=${A}`, `B=${Xn}`], params: [], out: 'Y' },
      gcn: { inputs: [`A=${A}`, `X=${Xn}`, `W1=${W}`, `W2=${W2}`], params: [], out: 'Y' },
      pagerank: { inputs: [`A=${stochastic}`, `r0=${r0}`], params: ['d=0.85'], out: 'r' },
      sssp: { inputs: [`A=${weights}`, `d0=${d0}`], params: [], out: 'd' },
      attention: { inputs: [`A=${A}`, `Q=${Xn}`, `K=${Xn}`, `V=${Xn}`], params: [], out: 'O' },
    };
    const cases = examples.flatMap((ex) =>
      ex === 'spmm'
        ? SPMM_WIDTHS.filter((k) => k === F || n <= WIDE_ROWS).map((k) => ({
            ex,
            job: `${name}-K${k}`,
            r: { ...runs[ex]!, inputs: [`A=${A}`, `B=${k === F ? Xn : file(`X${k}`, randomDense(cols, k, 2))}`] },
          }))
        : [{ ex, job: name, r: runs[ex]! }],
    );
    for (const { ex, job, r } of cases) {
      // Square-only kernels skip rectangular matrices.
      if (n !== cols && ex !== 'spmv' && ex !== 'spmm') continue;
      const ref = join(work, 'ref', `${ex}.${job}.${r.out}.mtx`);
      dype([
        'run',
        join('examples', `${ex}.dy`),
        '--backend',
        'reference',
        ...r.inputs.flatMap((i) => ['--input', i]),
        ...r.params.flatMap((p) => ['--param', p]),
        '--out',
        `${r.out}=${ref}`,
      ]);
      const args = [
        ...r.inputs.map((i) => `--input ${i.replace(/=.*/, '')}=${rel(i.slice(i.indexOf('=') + 1))}`),
        ...r.params.map((p) => `--param ${p}`),
        `--ref ${r.out}=${rel(ref)}`,
      ];
      jobs.push(`${ex} ${job} ${args.join(' ')}`);
      for (const [op, variant] of gpuPicks(ex, r.inputs, r.params)) picks.push(`${ex} ${job} ${op} ${variant}`);
    }
    console.log(`${name}: ${n} x ${cols}, nnz ${m.kind === 'coordinate' ? m.rowIdx.length : n * cols}`);
  }
  const specs = generatedJobs(jobs, picks);
  writeFileSync(join(work, 'generated.txt'), `${specs.join('\n')}\n`);
  writeFileSync(join(work, 'jobs.txt'), `${jobs.join('\n')}\n`);
  writeFileSync(join(work, 'picks.txt'), `${picks.join('\n')}\n`);
  console.log(`wrote ${jobs.length} jobs to ${relative(root, join(work, 'jobs.txt'))}`);
}

main();
