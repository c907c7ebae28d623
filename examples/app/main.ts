/**
 * An application linking the runtime generated for examples/gcn.dy. It
 * feeds a sequence of real graphs (and the same graph again) to the
 * runtime and prints, per input, the partition, the guard path, whether
 * the runtime switched and why, and which backend ran each stage for how
 * long; then streams the same sequence pipelined (stages of successive
 * inputs at the same time on different devices) and writes a timeline of
 * the predicted and the measured stages; then changes the objective to
 * energy (setObjective: the energy guards choose from there on, the policy
 * weighs switches in joules) and runs a few more graphs.
 *
 * Every stage runs for real: CPU stages on the wasm kernels, GPU stages in
 * the project's CUDA library, FPGA stages in its FPGA host library. With
 * --emulate (a host without the devices) those are the emulated builds:
 * CUDA on a CPU emulation (cuda-emu) and the HLS kernels in C simulation
 * (fpga-csim); without it the real libraries (cuda, xrt), unchanged.
 *
 *   npm run build
 *   node dist/cli/main.js compile examples/gcn.dy -o examples/app/out --profile A=... (see README.md)
 *   node dist/cli/main.js build examples/app/out --emulate
 *   npx tsc -p examples/app && node examples/app/out/js/main.js --emulate [--json] [--matrices DIR] [GRAPH ...]
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  closeBackends,
  InputError,
  openProject,
  Rng,
  seedFor,
  toCsr,
  loadMatrix,
  TraceRecorder,
  type CsrMatrix,
  type DenseTensor,
  type RunResult,
  type SystemSpec,
} from 'dype/runtime';
import { createRuntime, type GcnInputs, type GcnOutputs } from './out/runtime/gcn.runtime.js';

/** Feature widths of the two layers (within the range the guards were sampled across). */
const F = 16;
const H = 16;
const C = 16;

/** Run after setObjective('energy'): graphs whose energy guards' pick may differ from the throughput one. */
const ENERGY_SEQUENCE = ['jazz.mtx', 'jazz.mtx', 'jazz.mtx', 'cora.cites', 'cora.cites', 'cora.cites'];

const DEFAULT_SEQUENCE = [
  'karate.mtx',
  'jazz.mtx',
  'jazz.mtx',
  'cora.cites',
  'cora.cites',
  'cora.cites',
  'ca-GrQc.mtx',
  'ca-GrQc.mtx',
  'ca-GrQc.mtx',
  'ca-GrQc.mtx',
  'facebook_combined.txt',
  'facebook_combined.txt',
  'facebook_combined.txt',
  'cora.cites',
  'cora.cites',
  'cora.cites',
  'karate.mtx',
];

const here = dirname(fileURLToPath(import.meta.url));
// Compiled to examples/app/out/js/: the project is two folders up, the checkout four.
const outDir = resolve(here, '..');
const args = process.argv.slice(2);
const json = args.includes('--json');
const emulate = args.includes('--emulate');
const mi = args.indexOf('--matrices');
const matrices = mi >= 0 ? args[mi + 1]! : resolve(here, '..', '..', '..', '..', '..', 'shared', 'data', 'matrices');
const sequence = args.filter((a, i) => !a.startsWith('--') && args[i - 1] !== '--matrices');

/** A user's error (a graph that cannot be read, a project not built): one line, exit 1, as the dype command does. */
function fail(e: unknown): never {
  if (e instanceof InputError) {
    console.error(e.message);
    process.exit(1);
  }
  throw e;
}
if (!existsSync(matrices))
  fail(
    new InputError(
      'DY3010',
      matrices,
      undefined,
      'no such folder of graphs: pass --matrices DIR (the shared matrices beside the checkout are the default)',
    ),
  );

function random(shape: number[], name: string): DenseTensor {
  const rng = new Rng(seedFor(42, name));
  const data = new Float64Array(shape[0]! * shape[1]!);
  for (let k = 0; k < data.length; k++) data[k] = rng.uniform(-1, 1);
  return { format: 'dense', shape, data };
}

const graphs = new Map<string, GcnInputs>();
const W1 = random([F, H], 'W1');
const W2 = random([H, C], 'W2');
/** One tensor object per graph: the same graph again is the very same input (its data stays on the devices). */
function inputsFor(file: string): GcnInputs {
  let g = graphs.get(file);
  if (!g) {
    const A: CsrMatrix = toCsr(loadMatrix(join(matrices, file)));
    graphs.set(file, (g = { A, X: random([A.rows, F], `X:${file}`), W1, W2 }));
  }
  return g;
}

const stagesText = (r: RunResult<GcnOutputs>): string =>
  r.stages.map((s) => `[${s.ops.join(' ')}]@${s.devices.join('+')}: ${s.backend} ${s.ms.toFixed(2)} ms`).join(', ');

const plan = JSON.parse(readFileSync(join(outDir, 'plan.json'), 'utf8')) as { system: SystemSpec };
// A library not built (or of another program): one line, as the dype command prints it.
const backends = await openProject(outDir, plan.system, { emulate, kernel: 'gcn' }).catch(fail);
const trace = new TraceRecorder();
const rt = createRuntime({ system: plan.system, backends, trace });

const names = sequence.length > 0 ? sequence : DEFAULT_SEQUENCE;
/** Runs one input and prints what happened. */
async function runOne(file: string): Promise<void> {
  const inputs = inputsFor(file);
  const r = await rt.run(inputs, file);
  let sum = 0;
  let abs = 0;
  for (const v of r.outputs.Y.data) {
    sum += v;
    abs += Math.abs(v);
  }
  if (json) {
    const stages = r.stages.map((s) => ({
      ops: s.ops,
      devices: s.devices,
      backend: s.backend,
      ms: s.ms,
      bytesIn: s.bytesIn,
      bytesOut: s.bytesOut,
    }));
    process.stdout.write(
      `${JSON.stringify({ input: file, objective: r.log.objective, units: r.log.units, rows: inputs.A.rows, nnz: inputs.A.values.length, selected: r.log.selected, partition: r.partition, switched: r.switched, reason: r.reason, path: r.path, replan: r.log.replan ?? null, decisionMs: r.log.decisionMs, decisionReused: r.log.decisionReused, predicted: r.predicted, stages, wallMs: r.wallMs, ySum: sum, yAbsSum: abs })}\n`,
    );
  } else {
    console.log(
      `${file} (${inputs.A.rows} x ${inputs.A.cols}, nnz ${inputs.A.values.length}; objective ${r.log.objective})`,
    );
    console.log(`  partition ${r.partition.id}${r.partition.replanned ? ' (re-planned)' : ''}: ${r.partition.label}`);
    console.log(`  guard path: ${r.path.join(' -> ') || '(one partition)'}`);
    if (r.log.replan) console.log(`  re-plan: ${r.log.replan.reason}`);
    console.log(
      `  decision: ${(r.log.decisionMs * 1e3).toFixed(1)} us measured (${r.log.decisionReused ? 'the choice kept for this graph, reused' : 'features, guards and the cost model on this input'})`,
    );
    console.log(`  ${r.switched ? 'switched' : r.log.event === 'initial' ? 'first input' : 'stayed'}: ${r.reason}`);
    console.log(
      `  ran: ${stagesText(r)} (measured); predicted period ${r.predicted.periodMs.toFixed(4)} ms on ${plan.system.name}; Y sum ${sum.toPrecision(8)}`,
    );
  }
}
// Every graph is read before anything runs, so a misspelt one fails at once, with nothing run or written.
try {
  for (const file of new Set([...names, ...ENERGY_SEQUENCE])) inputsFor(file);
} catch (e) {
  closeBackends(backends);
  fail(e);
}
for (const file of names) await runOne(file);
// The sequence one input at a time: its switches are the ones printed above, its model clock the sequential one.
const seq = rt.stats();
const streamed = await rt.stream(names.map((file) => ({ inputs: inputsFor(file), name: `stream ${file}` })));
// The same runtime, now for energy: the energy guards choose from the next input on; the policy's state carries over.
if (!json) console.log(`\nobjective ${rt.objective} -> energy`);
rt.setObjective('energy');
for (const file of ENERGY_SEQUENCE) await runOne(file);
// Every input of the three parts: the sequence, the stream and the energy runs.
const s = rt.stats();
const summary = {
  runs: s.runs,
  switches: s.switches,
  replans: s.replans,
  byPartition: s.byPartition,
  byBackend: s.byBackend,
  byObjective: s.byObjective,
  sequentialRuns: seq.runs,
  sequentialSwitches: seq.switches,
  // Which clock each time is on, in its name: the model's (the cost model's figures) or the wall clock's (measured).
  sequentialModelClockMs: seq.clockMs,
  streamModelMakespanMs: streamed.makespanMs,
  streamMeasuredWallMs: streamed.wallMs,
  streamMeasuredStageSumMs: streamed.stageSumMs,
  streamYSums: streamed.results.map((r) => r.outputs.Y.data.reduce((a, v) => a + v, 0)),
  traceEvents: trace.size,
};
trace.write(join(outDir, 'trace.json'));
if (json) process.stdout.write(`${JSON.stringify({ summary })}\n`);
else
  console.log(
    `\n${s.runs} inputs (${names.length} one at a time, ${names.length} streamed, ${ENERGY_SEQUENCE.length} for energy), ${s.switches} switches, ${s.replans} re-plans; decisions ${s.decisionMs.toFixed(2)} ms measured in all (${s.decisionsReused} reused a kept choice); by backend, measured: ${Object.entries(
      s.byBackend,
    )
      .map(([b, x]) => `${b} ${x.stages} stages ${x.ms.toFixed(1)} ms`)
      .join(', ')}; runs by objective: ${Object.entries(summary.byObjective)
      .map(([o, n]) => `${o} ${n}`)
      .join(
        ', ',
      )}\nstreamed: ${streamed.wallMs.toFixed(1)} ms measured against ${streamed.stageSumMs.toFixed(1)} ms of stages one after another (model clock: ${streamed.makespanMs.toFixed(3)} ms); timeline in ${join(outDir, 'trace.json')}`,
  );
rt.close();
closeBackends(backends);
