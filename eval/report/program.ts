/**
 * renderProgramReport(): report.html for one kernel of a program, for
 * `dype compile`. Per profile the guards were built from (each named): the
 * planner's Pareto set re-scored by the event simulation, the simulated
 * front with each objective's best on it, and the simulated pipeline of the
 * throughput pick, whose period is the table's simulated column. Then the
 * guards' figures and their decision map per objective, over the ranges
 * the guards were built for. Every time is modelled (the cost model or the
 * event simulation); nothing on this page is measured.
 */
import type { GuardPlan } from '../../runtime/guards/index.js';
import type { Binding } from '../../runtime/plan/bind.js';
import type { Mapping, Objective, PlanProblem, SparseFeatures } from '../../runtime/plan/types.js';
import type { SystemSpec } from '../../runtime/system/types.js';
import { energyIn } from '../../runtime/plan/figures.js';
import { simStages, simulate } from '../sim/index.js';
import { SIM } from '../sim/params.js';
import { bestPerObjective, onFront } from './front.js';
import type { MapSpan } from './map-axes.js';
import { page, table } from './page.js';
import { decisionMapSvg, frontSvg, timelineSvg } from './plots.js';

/** One profile: its name (the --profile values), the problem bound to it and the planner's Pareto set for it, best first. */
export interface ProfileView {
  name: string;
  problem: PlanProblem;
  mappings: readonly Mapping[];
}

export interface ProgramReportInput {
  /** The page's subject: the program, and the kernel when it is not the program's name (reportTitle). */
  title: string;
  sys: SystemSpec;
  objective: Objective;
  /** Every profile, in the order given. */
  profiles: readonly ProfileView[];
  /** The guards of each objective (the initial one first), with the table id of each of their partitions. */
  guards?: readonly { objective: Objective; plan: GuardPlan; ids?: readonly number[] }[];
  /** The partition table the objectives' guards share (id, label, the objectives picking it). */
  partitions?: readonly { id: number; label: string; objectives: readonly Objective[] }[];
  /** Binding for the decision map's inputs, needed with `guards` for the map. */
  bind?: (f: SparseFeatures) => Binding;
  /** What the decision map varies, over the guards' ranges; without it, fixed decades of synthetic inputs. */
  span?: MapSpan;
}

/** `gcn` for a kernel named as its program, else `prog, kernel k`. */
export const reportTitle = (program: string, kernel: string): string =>
  program === kernel ? program : `${program}, kernel ${kernel}`;

const pc = (x: number): string => `${x.toFixed(2)}%`;
const share = (x: number): string => `${(x * 100).toFixed(0)}%`;

/**
 * The guards' own figures: on the samples they were built from, and on
 * samples they never saw (runtime/guards/validate.ts): nested
 * cross-validation, each profile left out, the tree alone; then the
 * cross-validated grid the partitions and depth were chosen from.
 */
function guardFigures(g: GuardPlan, names: readonly string[]): string {
  const h = g.heldOut;
  const rows: string[][] = [
    [
      'training (the samples the guards were built from)',
      String(g.samples),
      pc(g.meanLossPct),
      share(g.trainingWithinTolerance),
      '-',
    ],
    ...(h
      ? [
          [
            `held out: ${h.folds}-fold nested cross-validation`,
            String(g.samples),
            pc(h.meanLossPct),
            share(h.withinTolerance),
            String(h.replanned),
          ],
          [
            'held out, the tree alone (no cost-model weighing, no re-plan: the C++ dispatch header)',
            String(g.samples),
            pc(h.treeOnly.meanLossPct),
            share(h.treeOnly.withinTolerance),
            '-',
          ],
          ...(h.byProfile ?? []).map((p) => [
            `held out: profile ${names[p.profile] ?? p.profile} left out`,
            String(p.samples),
            pc(p.meanLossPct),
            share(p.withinTolerance),
            String(p.replanned),
          ]),
        ]
      : [['held out: not judged (the guards were built with judge: false)', '-', '-', '-', '-']]),
  ];
  const intro = `<p>${g.partitions.length} partitions, chosen by ${g.model.folds}-fold cross-validated loss of the runtime's pick (every partition open to its cost model at every leaf); tree depth ${g.model.depth}, chosen by that of the tree alone; loss is each sample's pick against its own DP optimum (${g.objective}); tolerance ${share(g.lossTolerance)}. Held-out samples outside their fold's ranges are re-planned by the runtime (no loss).</p>`;
  const gridRows = g.model.grid.map((x) => [
    String(x.partitions),
    String(x.depth),
    pc(x.meanLossPct),
    share(x.withinTolerance),
    pc(x.treeMeanLossPct),
    x.partitions === g.model.partitions && x.depth === g.model.depth ? 'chosen' : '',
  ]);
  return `${intro}${table(['judged on', 'samples', 'mean loss', 'within tolerance', 're-planned'], rows, 1)}<details><summary>cross-validated grid</summary>${table(['partitions', 'depth', 'mean loss', 'within tolerance', 'the tree alone: mean loss', ''], gridRows, 0)}</details>`;
}

/** A profile's name with each file path cut to its base name, for plot titles: `A=karate.mtx f=16`. */
export const shortProfile = (name: string): string =>
  name
    .split(' ')
    .map((t) => t.replace(/=(?:.*[\\/])?([^\\/]+)$/, '=$1'))
    .join(' ');

const label = (m: Mapping): string => m.stages.map((s) => `[${s.ops.join(' ')}]@${s.devices.join('+')}`).join(' -> ');
const mJ = (j: number): string => (j * 1e3).toPrecision(4);

/** One profile's table, front and timeline; the simulation runs the same stream length for all three. */
function profileSection(r: ProgramReportInput, v: ProfileView): { heading: string; body: string } {
  if (v.mappings.length === 0) throw new Error(`renderProgramReport: no mapping for profile ${v.name}`);
  const scored = v.mappings.map((m) => ({
    m,
    sim: simulate(r.sys, v.problem, simStages(r.sys, v.problem, m), { stream: SIM.streamLength }),
  }));
  // The front plots energy in the scope the mappings were planned for.
  const scope = v.mappings[0]!.energyScope;
  const pts = scored.map(({ sim }) => ({
    periodMs: sim.periodMs,
    energyJ: energyIn(scope, sim.deviceEnergyJ, sim.systemEnergyJ),
    latencyMs: sim.latencyMs,
  }));
  const front = onFront(pts);
  const best = bestPerObjective(pts);
  const bestFor = (i: number): string =>
    (['throughput', 'energy', 'latency'] as const).filter((o) => best[o] === i).join(', ');
  const rows = scored.map(({ m, sim }, i) => [
    String(i + 1),
    label(m),
    m.perInputMs.toPrecision(4),
    sim.periodMs.toPrecision(4),
    sim.latencyMs.toPrecision(4),
    `${mJ(m.deviceEnergyJ)} / ${mJ(m.systemEnergyJ)}`,
    `${mJ(sim.deviceEnergyJ)} / ${mJ(sim.systemEnergyJ)}`,
    front[i] ? 'yes' : 'no',
    bestFor(i),
  ]);
  const head = [
    'planner rank',
    'mapping',
    'ms per input, modelled (planner)',
    'period ms, modelled (event simulation)',
    'latency ms, modelled (event simulation)',
    'energy mJ device / system, modelled (planner)',
    'energy mJ device / system, modelled (event simulation)',
    'on the simulated front',
    'best for',
  ];
  const picks = (['throughput', 'energy'] as const).map((o) => ({
    name: `best ${o}`,
    periodMs: pts[best[o]]!.periodMs,
    energyJ: pts[best[o]]!.energyJ,
    label: label(scored[best[o]]!.m),
  }));
  const short = shortProfile(v.name);
  const note = `<p class="note">Planner rank is the cost model's order for the ${r.objective} objective; the event simulation (${SIM.streamLength} inputs in flight) re-scores each mapping, and the best per objective is chosen on the simulated figures. No figure on this page is measured.</p>`;
  return {
    heading: `Profile ${v.name}`,
    body: `${note}${table(head, rows, 2)}<div class="plots">${frontSvg({
      title: `${r.title}, ${short} on ${r.sys.name}`,
      scope,
      space: pts.map((p, i) => ({ ...p, label: label(scored[i]!.m) })),
      picks,
    })}${timelineSvg(`best throughput (planner rank ${best.throughput + 1})`, r.sys, v.problem, simStages(r.sys, v.problem, scored[best.throughput]!.m), SIM.streamLength)}</div>`,
  };
}

export function renderProgramReport(r: ProgramReportInput): string {
  if (r.profiles.length === 0) throw new Error('renderProgramReport: no profile to show');
  const sections = r.profiles.map((v) => profileSection(r, v));
  const names = r.profiles.map((v) => v.name);
  if (r.guards && r.guards.length > 0)
    sections.push({
      heading: 'Guards: training and held-out',
      body: r.guards
        .map(
          (g) =>
            `<h3>${g.objective}${g.objective === r.objective ? ' (initial)' : ''}</h3>${guardFigures(g.plan, names)}`,
        )
        .join(''),
    });
  if (r.guards && r.guards.length > 0 && r.bind) {
    const bind = r.bind;
    const rows = r.profiles[0]!.problem.ops.find((o) => o.sparse)?.sparse?.rows ?? 1 << 17;
    const maps = r.guards.map((g) =>
      decisionMapSvg({
        title: `${r.title}: partition picked (${g.objective}${g.objective === r.objective ? ', initial' : ''})`,
        guards: g.plan,
        bind,
        rows,
        ...(g.ids ? { ids: g.ids } : {}),
        ...(r.span ? { span: r.span } : {}),
      }),
    );
    const acc = table(
      ['objective', 'partitions', 'training accuracy', 'mean loss %', 'samples'],
      r.guards.map((g) => [
        `${g.objective}${g.objective === r.objective ? ' (initial)' : ''}`,
        g.plan.partitions.map((p) => String(g.ids?.[p.id] ?? p.id)).join(', '),
        `${(g.plan.trainingAccuracy * 100).toFixed(1)}%`,
        g.plan.meanLossPct.toFixed(2),
        String(g.plan.samples),
      ]),
      2,
    );
    const parts = r.partitions
      ? table(
          ['id', 'partition', 'guards of'],
          r.partitions.map((p) => [String(p.id), p.label, p.objectives.join(', ')]),
          3,
        )
      : '';
    sections.push({
      heading: r.guards.length > 1 ? 'Decision maps: the guards of each objective' : 'Decision map',
      body: `${parts}${acc}<div class="plots">${maps.join('')}</div>`,
    });
  }
  return page(`dype report: ${r.title}`, sections);
}
