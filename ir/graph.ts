/**
 * The op graph of one region as a graphlib DAG: a node per op (repeat ops are
 * single nodes), an edge from the op that last wrote a value to each op that
 * reads it within one trip. Loop-carried reads (a value read before the
 * region writes it) are recorded separately, since they are not DAG edges.
 */
import { Graph } from '@dagrejs/graphlib';
import { tensorsRead } from './expr.js';
import { tensorOps, type Op } from './module.js';

export type OpGraph = Graph;

export interface RegionGraph {
  graph: OpGraph;
  /** Values each op reads (for repeat ops, everything its region reads). */
  reads: Map<string, Set<string>>;
  /** Values each op writes. */
  writes: Map<string, Set<string>>;
  /** Reads satisfied by a value from before the region or from the previous trip. */
  liveIn: Map<string, Set<string>>;
}

function opReads(op: Op): Set<string> {
  if (op.kind !== 'repeat') return tensorsRead(op.expr);
  const out = new Set<string>();
  for (const t of tensorOps(op.body)) for (const r of tensorsRead(t.expr)) out.add(r);
  if (op.count.kind === 'param') out.add(op.count.name);
  return out;
}

function opWrites(op: Op): Set<string> {
  return op.kind === 'repeat' ? new Set(tensorOps(op.body).map((t) => t.result)) : new Set([op.result]);
}

export function buildRegionGraph(ops: readonly Op[]): RegionGraph {
  const graph = new Graph({ directed: true, multigraph: false });
  const reads = new Map<string, Set<string>>();
  const writes = new Map<string, Set<string>>();
  const liveIn = new Map<string, Set<string>>();
  const lastWriter = new Map<string, string>();
  for (const op of ops) {
    graph.setNode(op.id, op);
    const r = opReads(op);
    const w = opWrites(op);
    reads.set(op.id, r);
    writes.set(op.id, w);
    const live = new Set<string>();
    for (const v of r) {
      const src = lastWriter.get(v);
      if (src !== undefined) {
        const prev = (graph.edge(src, op.id) as string[] | undefined) ?? [];
        graph.setEdge(src, op.id, [...prev, v]);
      } else live.add(v);
    }
    liveIn.set(op.id, live);
    for (const v of w) lastWriter.set(v, op.id);
  }
  return { graph, reads, writes, liveIn };
}

/** Ops of the region (by id) that read `value` after `fromIndex`, up to its next write. */
export function readersAfter(ops: readonly Op[], fromIndex: number, value: string): Op[] {
  const out: Op[] = [];
  for (let i = fromIndex + 1; i < ops.length; i++) {
    const op = ops[i]!;
    if (opReads(op).has(value)) out.push(op);
    if (opWrites(op).has(value)) break;
  }
  return out;
}

export { opReads, opWrites };
