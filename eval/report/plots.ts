/**
 * Domain plots: a Pareto front of simulated mappings with the strategies'
 * picks, a decision map of the guards over density x row-length CV, and a
 * pipeline timeline from the simulation's trace.
 */
import { selectPartition, type GuardPlan } from '../../runtime/guards/index.js';
import type { Binding } from '../../runtime/plan/bind.js';
import type { EnergyScope } from '../../runtime/plan/figures.js';
import type { PlanProblem, SparseFeatures } from '../../runtime/plan/types.js';
import type { SystemSpec } from '../../runtime/system/types.js';
import { simulate, type SimStage } from '../sim/index.js';
import { colour, ganttSvg, gridSvg, scatterSvg, type Marker, type ScatterPoint } from './svg.js';
import { mapAxes, type MapSpan } from './map-axes.js';

export interface FrontInput {
  title: string;
  /** The energy scope plotted (energyJ below is that scope's). */
  scope: EnergyScope;
  space: readonly { periodMs: number; energyJ: number; label: string }[];
  picks: readonly { name: string; periodMs: number; energyJ: number; label: string }[];
}

export function frontSvg(f: FrontInput): string {
  const pts: ScatterPoint[] = f.space.map((s) => ({
    x: s.periodMs,
    y: s.energyJ * 1e3,
    title: `${s.label}: ${s.periodMs.toPrecision(3)} ms, ${(s.energyJ * 1e3).toPrecision(3)} mJ (${f.scope})`,
  }));
  const markers: Marker[] = f.picks.map((p, i) => ({
    name: p.name,
    colour: colour(i + 1),
    x: p.periodMs,
    y: p.energyJ * 1e3,
    title: p.label,
  }));
  return scatterSvg(
    f.title,
    'period per input (ms, modelled)',
    `${f.scope} energy per input (mJ, modelled)`,
    pts,
    markers,
  );
}

/** Features of a square matrix with `rows` rows at a density and row-length CV (shape of the rest from typical power-law data). */
export function syntheticFeatures(rows: number, density: number, cv: number): SparseFeatures {
  const mean = Math.max(density * rows, 1e-3);
  const nnz = Math.max(1, Math.round(mean * rows));
  return {
    rows,
    cols: rows,
    nnz,
    rowLenMean: nnz / rows,
    rowLenMax: Math.min(rows, Math.max(1, Math.ceil(mean * (1 + 3 * cv)))),
    rowLenCv: cv,
    emptyRowFraction: 0,
    top1PctNnzShare: Math.min(1, 0.01 * (1 + 3 * cv)),
    localityScore: 0.5,
  };
}

export interface DecisionMapInput {
  title: string;
  guards: GuardPlan;
  /** A binding for given sparse features (the workload's dims and scalars). */
  bind: (f: SparseFeatures) => Binding;
  rows: number;
  /** The id to show for each of the plan's partitions (a partition table's, when several objectives share one); default their own. */
  ids?: readonly number[];
  /** Span the axes over the guards' ranges of one sparse parameter, cells shaped like the nearest profile (map-axes.ts); without it, fixed decades of synthetic power-law inputs with `rows` rows. */
  span?: MapSpan;
}

/** Which partition the guards pick over log density x CV; grey where the input is outside the guards' ranges (the runtime re-plans). */
export function decisionMapSvg(d: DecisionMapInput): string {
  const axes = d.span ? mapAxes(d.guards, d.span) : undefined;
  const dens = axes?.densities ?? Array.from({ length: 16 }, (_, i) => 10 ** (-6 + (i * 4.5) / 15));
  const cvs = axes?.cvs ?? Array.from({ length: 12 }, (_, j) => (j * 4) / 11);
  const featuresAt = (x: number, y: number): SparseFeatures => (axes ? axes.at(x, y) : syntheticFeatures(d.rows, x, y));
  const cells = [];
  const used = new Set<number>();
  const idOf = (id: number): number => d.ids?.[id] ?? id;
  let outside = false;
  for (let i = 0; i < dens.length; i++)
    for (let j = 0; j < cvs.length; j++) {
      const dec = selectPartition(d.guards, d.bind(featuresAt(dens[i]!, cvs[j]!)));
      const here = axes?.profilesAt.get(`${i},${j}`);
      const v = dec.inRange ? idOf(dec.partition.id) : -1;
      if (v >= 0) used.add(v);
      else outside = true;
      cells.push({
        i,
        j,
        value: v,
        title: `density ${dens[i]!.toExponential(1)}, cv ${cvs[j]!.toFixed(2)}: ${dec.inRange ? `partition ${v} (${dec.partition.label})` : `re-plan (${dec.outOfRange.join('; ')})`}${here ? `; profile ${here.join(', ')}` : ''}`,
      });
    }
  const legend = d.guards.partitions
    .filter((p) => used.has(idOf(p.id)))
    .map((p) => ({ value: idOf(p.id), label: `${idOf(p.id)}: ${p.label}` }));
  if (outside) legend.push({ value: -1, label: "outside the guards' ranges: re-plan" });
  return gridSvg(
    d.title,
    axes ? `${d.span!.param} density (nnz / rows x cols), over the guards' range` : 'density (nnz / n^2)',
    axes ? `${d.span!.param} row-length CV, over the guards' range` : 'row-length CV',
    dens.map((x) => x.toExponential(axes ? 1 : 0)),
    cvs.map((x) => x.toFixed(axes ? 2 : 1)),
    cells,
    legend,
  );
}

export function timelineSvg(
  title: string,
  sys: SystemSpec,
  p: PlanProblem,
  stages: readonly SimStage[],
  /** Inputs in the simulated stream: the suite's own (SIM.streamLength), so the timeline's figures are the table's. */
  stream: number,
): string {
  const r = simulate(sys, p, stages, { stream, trace: true });
  const bars = (r.trace ?? []).map((e) => ({
    row: e.row,
    start: e.startMs,
    end: e.endMs,
    colour: colour(e.input),
    title: `input ${e.input}: ${e.label} (${e.kind}) ${e.startMs.toFixed(3)}-${e.endMs.toFixed(3)} ms`,
  }));
  return ganttSvg(
    `${title}: ${stream} inputs, modelled: period ${r.periodMs.toPrecision(4)} ms, ${(r.deviceEnergyJ * 1e3).toPrecision(4)} / ${(r.systemEnergyJ * 1e3).toPrecision(4)} mJ per input (device / system)`,
    bars,
  );
}
