/**
 * The runtime's whole decision (choose, decide, the running partition's
 * predicted period) in streams of inputs back to back, us per decision, on
 * gcn's guards (built from four real graphs, as in bench/guards.ts):
 *   new   a pattern the runtime has not seen each time (the matrix with its
 *         last k entries dropped, k cycling over more values than the memo
 *         keeps: bench/gcn-decisions.ts);
 *   copy  the matrix's own pattern in new arrays each time (a CSR rebuilt per
 *         call), which the runtime's feature cache has not seen;
 * with how many of 100 such copies took the choice kept for the pattern.
 * With --against DIR (another build's dist folder) the same streams run on
 * that build's runtime classes in the same process, the two builds' blocks
 * alternating in order round by round, a full collection before each block:
 * medians over the rounds.
 *   npm run build && node --expose-gc dist/bench/decision-stream.js
 *     [--against DIR] [--system paper-1g1f] [--decisions 2000] [--rounds 7] [matrix ...]
 * (default matrices whitaker3.mtx, bcsstk13.mtx; writes bench/results/decision-stream.json).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { Chooser } from '../runtime/engine/choose.js';
import { Decider } from '../runtime/engine/decide.js';
import { MEMO_PROBLEMS } from '../runtime/engine/memo.js';
import { planOptions } from '../runtime/guards/build.js';
import { SwitchPolicy } from '../runtime/policy/policy.js';
import { decisionsOn, gcnTreeConfig, type DecisionClasses, type Decisions, type Next } from './gcn-decisions.js';
import { DEFAULT_PROFILES, gcnGuards, matrix, root } from './gcn-guards.js';

const { values: opt, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    against: { type: 'string' },
    system: { type: 'string', default: 'paper-1g1f' },
    decisions: { type: 'string', default: '2000' },
    rounds: { type: 'string', default: '7' },
  },
});
const count = (s: string, what: string): number => {
  const n = Number(s);
  if (!Number.isSafeInteger(n) || n < 1) throw new Error(`--${what} ${s}: expected a positive integer`);
  return n;
};
const DECISIONS = count(opt.decisions, 'decisions');
const ROUNDS = count(opt.rounds, 'rounds');
const files = positionals.length > 0 ? positionals : ['whitaker3.mtx', 'bcsstk13.mtx'];
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) process.stderr.write('note: run with --expose-gc, or collections from one block fall into the next\n');

const { kernel, spec, system, plan } = gcnGuards(opt.system, DEFAULT_PROFILES);
const cfg = gcnTreeConfig({ kernel, spec, plan });
const popts = planOptions(system, plan);

const builds: { name: string; rt: DecisionClasses }[] = [
  { name: 'this build', rt: { Chooser, Decider, SwitchPolicy, memoProblems: MEMO_PROBLEMS } },
];
if (opt.against !== undefined) {
  const dir = resolve(opt.against);
  const load = async <T>(rel: string): Promise<T> => (await import(pathToFileURL(join(dir, rel)).href)) as T;
  builds.push({
    name: opt.against,
    rt: {
      Chooser: (await load<{ Chooser: typeof Chooser }>('runtime/engine/choose.js')).Chooser,
      Decider: (await load<{ Decider: typeof Decider }>('runtime/engine/decide.js')).Decider,
      SwitchPolicy: (await load<{ SwitchPolicy: typeof SwitchPolicy }>('runtime/policy/policy.js')).SwitchPolicy,
      memoProblems: (await load<{ MEMO_PROBLEMS: number }>('runtime/engine/memo.js')).MEMO_PROBLEMS,
    },
  });
}

const KINDS: Exclude<Next, 'same'>[] = ['new', 'copy'];
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
let sink = 0;
const results: {
  matrix: string;
  kind: string;
  build: string;
  usPerDecision: number[];
  medianUs: number;
  /** Of 100 more decisions after the timed ones, how many took a kept choice (Choice.fresh false). */
  keptOf100: number;
  path: string;
}[] = [];
for (const f of files) {
  const m = matrix(f);
  if (m.rows !== m.cols) throw new Error(`${f}: gcn needs a square matrix`);
  // One decision state per build and kind, warmed up before the rounds.
  const states = builds.map((b) =>
    KINDS.map((kind) => {
      const d: Decisions = decisionsOn(b.rt, cfg, system, popts, m);
      for (let i = 0; i < 200; i++) sink += d.decide(kind);
      return { d, kind, times: [] as number[] };
    }),
  );
  for (let r = 0; r < ROUNDS; r++)
    for (let i = 0; i < builds.length; i++) {
      const at = r % 2 === 0 ? i : builds.length - 1 - i;
      for (const s of states[at]!) {
        gc?.();
        const t0 = performance.now();
        for (let n = 0; n < DECISIONS; n++) sink += s.d.decide(s.kind);
        s.times.push(((performance.now() - t0) * 1e3) / DECISIONS);
      }
    }
  states.forEach((byKind, i) =>
    byKind.forEach((s) => {
      let kept = 0;
      let path = '';
      for (let n = 0; n < 100; n++) {
        const c = s.d.chooser.choose(s.d.inputs(s.kind));
        if (!c.fresh) kept++;
        path = c.path.join(' / ');
      }
      results.push({
        matrix: f,
        kind: s.kind,
        build: builds[i]!.name,
        usPerDecision: s.times,
        medianUs: median(s.times),
        keptOf100: kept,
        path,
      });
    }),
  );
}

const fmt = (x: number): string => x.toFixed(1);
console.log(
  `the whole decision, us each (median of ${ROUNDS} rounds of ${DECISIONS}; min-max), gcn guards on ${opt.system}`,
);
console.log(
  `${'matrix'.padEnd(16)} ${'stream'.padEnd(5)} ${builds.map((b) => `${b.name.slice(0, 28).padStart(28)} kept`).join(' ')}${builds.length > 1 ? '   ratio' : ''}`,
);
for (const f of files)
  for (const kind of KINDS) {
    const rs = builds.map((b) => results.find((r) => r.matrix === f && r.kind === kind && r.build === b.name)!);
    const cells = rs.map(
      (r) =>
        `${`${fmt(r.medianUs)} (${fmt(Math.min(...r.usPerDecision))}-${fmt(Math.max(...r.usPerDecision))})`.padStart(28)} ${String(r.keptOf100).padStart(4)}`,
    );
    const ratio = rs.length > 1 ? `   ${(rs[0]!.medianUs / rs[1]!.medianUs).toFixed(2)}x` : '';
    console.log(`${f.padEnd(16)} ${kind.padEnd(5)} ${cells.join(' ')}${ratio}`);
  }
for (const f of files) console.log(`${f} path of a new pattern: ${results.find((r) => r.matrix === f)!.path}`);
console.log(`(sink ${sink % 7})`);
mkdirSync(join(root, 'bench', 'results'), { recursive: true });
writeFileSync(
  join(root, 'bench', 'results', 'decision-stream.json'),
  JSON.stringify({ system: opt.system, decisions: DECISIONS, rounds: ROUNDS, results }, null, 2),
);
