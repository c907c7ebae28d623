/**
 * renderProgramReport(): report.html for one program, for `dype compile`.
 * The caller has bound the program to a profile (problem) and planned it;
 * this page shows the planner's Pareto set re-scored by the event
 * simulation, the guards' decision map per objective when guards were
 * built (with the partition table they share), and the simulated pipeline
 * of the first (best) mapping.
 */
import type { GuardPlan } from '../../runtime/guards/index.js';
import type { Binding } from '../../runtime/plan/bind.js';
import type { Mapping, Objective, PlanProblem, SparseFeatures } from '../../runtime/plan/types.js';
import type { SystemSpec } from '../../runtime/system/types.js';
import { energyIn } from '../../runtime/plan/figures.js';
import { simStages, simulate } from '../sim/index.js';
import { page, table } from './page.js';
import { decisionMapSvg, frontSvg, timelineSvg } from './plots.js';

export interface ProgramReportInput {
  /** Program or kernel name for the title. */
  title: string;
  sys: SystemSpec;
  problem: PlanProblem;
  objective: Objective;
  /** Mappings to show, best first (the planner's Pareto set). */
  mappings: readonly Mapping[];
  /** The guards of each objective (the initial one first), with the table id of each of their partitions. */
  guards?: readonly { objective: Objective; plan: GuardPlan; ids?: readonly number[] }[];
  /** The partition table the objectives' guards share (id, label, the objectives picking it). */
  partitions?: readonly { id: number; label: string; objectives: readonly Objective[] }[];
  /** Binding for synthetic features, needed with `guards` for the decision map. */
  bind?: (f: SparseFeatures) => Binding;
  /** What each profile the guards were built from is (for the left-out-profile rows). */
  profileNames?: readonly string[];
}

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
  const intro = `<p>${g.partitions.length} partitions, tree depth ${g.model.depth}, chosen by ${g.model.folds}-fold cross-validated loss; loss is each sample's pick against its own DP optimum (${g.objective}); tolerance ${share(g.lossTolerance)}. Held-out samples outside their fold's ranges are re-planned by the runtime (no loss).</p>`;
  const gridRows = g.model.grid.map((x) => [
    String(x.partitions),
    String(x.depth),
    pc(x.meanLossPct),
    share(x.withinTolerance),
    x.partitions === g.model.partitions && x.depth === g.model.depth ? 'chosen' : '',
  ]);
  return `${intro}${table(['judged on', 'samples', 'mean loss', 'within tolerance', 're-planned'], rows, 1)}<details><summary>cross-validated grid</summary>${table(['partitions', 'depth', 'mean loss', 'within tolerance', ''], gridRows, 0)}</details>`;
}

export function renderProgramReport(r: ProgramReportInput): string {
  if (r.mappings.length === 0) throw new Error('renderProgramReport: no mapping to show');
  const scored = r.mappings.map((m) => ({ m, sim: simulate(r.sys, r.problem, simStages(r.sys, r.problem, m)) }));
  const label = (m: Mapping): string => m.stages.map((s) => `[${s.ops.join(' ')}]@${s.devices.join('+')}`).join(' -> ');
  const mJ = (j: number): string => (j * 1e3).toPrecision(4);
  const rows = scored.map(({ m, sim }, i) => [
    String(i + 1),
    label(m),
    m.perInputMs.toPrecision(4),
    sim.periodMs.toPrecision(4),
    `${mJ(m.deviceEnergyJ)} / ${mJ(m.systemEnergyJ)}`,
    `${mJ(sim.deviceEnergyJ)} / ${mJ(sim.systemEnergyJ)}`,
  ]);
  // The front plots energy in the scope the mappings were planned for.
  const scope = r.mappings[0]!.energyScope;
  const simJ = (sim: (typeof scored)[number]['sim']): number => energyIn(scope, sim.deviceEnergyJ, sim.systemEnergyJ);
  const sections = [
    {
      heading: 'Pareto set',
      body: table(
        [
          'rank',
          'mapping',
          'planner ms per input',
          'simulated period ms',
          'planner energy mJ, device / system',
          'simulated energy mJ, device / system',
        ],
        rows,
        2,
      ),
    },
    {
      heading: 'Pareto front (simulated)',
      body: `<div class="plots">${frontSvg({ title: `${r.title} on ${r.sys.name}`, scope, space: scored.map(({ m, sim }) => ({ periodMs: sim.periodMs, energyJ: simJ(sim), label: label(m) })), picks: [{ name: 'best', periodMs: scored[0]!.sim.periodMs, energyJ: simJ(scored[0]!.sim), label: label(scored[0]!.m) }] })}</div>`,
    },
  ];
  if (r.guards && r.guards.length > 0)
    sections.push({
      heading: 'Guards: training and held-out',
      body: r.guards
        .map(
          (g) =>
            `<h3>${g.objective}${g.objective === r.objective ? ' (initial)' : ''}</h3>${guardFigures(g.plan, r.profileNames ?? [])}`,
        )
        .join(''),
    });
  if (r.guards && r.guards.length > 0 && r.bind) {
    const bind = r.bind;
    const rows = r.problem.ops.find((o) => o.sparse)?.sparse?.rows ?? 1 << 17;
    const maps = r.guards.map((g) =>
      decisionMapSvg({
        title: `${r.title}: partition picked (${g.objective}${g.objective === r.objective ? ', initial' : ''})`,
        guards: g.plan,
        bind,
        rows,
        ...(g.ids ? { ids: g.ids } : {}),
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
  sections.push({
    heading: 'Pipeline timeline (simulation)',
    body: `<div class="plots">${timelineSvg(`${r.title}, best mapping`, r.sys, r.problem, simStages(r.sys, r.problem, r.mappings[0]!))}</div>`,
  });
  return page(`dype report: ${r.title}`, sections);
}
