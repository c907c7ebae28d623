/**
 * Cost of one pipeline stage: its ops on `count` instances of one device,
 * the transfers that bring its inputs in (from host memory or from the
 * stage that produced them, peer-to-peer where a link exists, else staged
 * through host memory) and send kernel results home, and the checks that
 * prune it (device memory, FPGA resources of one bitstream).
 */
import type { DeviceSpec, SystemSpec } from '../system/types.js';
import { fpgaEntry, type FpgaImpl } from '../catalogue/index.js';
import { MODEL, type VariantTime } from './cost.js';
import { fpgaProjectResources, resourceOverflow } from './fpga-designs.js';

/** GB for a message: two decimals, or three significant digits below 0.01 (a need of 4 kB is not '0.00 GB'). */
const gigabytes = (gb: number): string => (gb >= 0.01 ? gb.toFixed(2) : gb.toPrecision(3));
import type { PlanOp, PlanProblem } from './types.js';

/** A transfer's time and how many times its bytes cross the host's root complex. */
export interface Route {
  ms: number;
  /** 0 between host memory and the host CPU, 1 for one PCIe hop or a peer-to-peer copy, 2 when staged through host memory. */
  crossings: number;
}

/** The route of no transfer (shared: a planner asks for routes by the thousand). */
const NO_ROUTE: Route = Object.freeze({ ms: 0, crossings: 0 });

/** How `bytes` move from device `from` to device `to` (undefined = host memory). */
export function route(sys: SystemSpec, from: DeviceSpec | undefined, to: DeviceSpec | undefined, bytes: number): Route {
  if (bytes <= 0) return NO_ROUTE;
  const onHost = (d: DeviceSpec | undefined): boolean => d === undefined || d.kind === 'cpu';
  const hop = (d: DeviceSpec): number =>
    d.hostLink ? d.hostLink.latencyUs / 1e3 + (bytes / (d.hostLink.bandwidthGBs * 1e9)) * 1e3 : 0;
  if (onHost(from) && onHost(to)) return NO_ROUTE;
  if (onHost(from)) return { ms: hop(to!), crossings: 1 };
  if (onHost(to)) return { ms: hop(from!), crossings: 1 };
  const staged = hop(from!) + hop(to!);
  const peer = sys.peerLinks.find((l) => (l.a === from!.id && l.b === to!.id) || (l.a === to!.id && l.b === from!.id));
  // A runtime routes a transfer the faster way: over the peer link (which still crosses the root complex once), or staged through host memory (twice).
  const direct = peer ? peer.latencyUs / 1e3 + (bytes / (peer.bandwidthGBs * 1e9)) * 1e3 : Infinity;
  return direct < staged ? { ms: direct, crossings: 1 } : { ms: staged, crossings: 2 };
}

/** Time to move `bytes` from device `from` to device `to` (undefined = host memory). */
export function transferMs(
  sys: SystemSpec,
  from: DeviceSpec | undefined,
  to: DeviceSpec | undefined,
  bytes: number,
): number {
  return route(sys, from, to, bytes).ms;
}

/** Bytes crossing the root complex when `bytes` move along route r. */
const crossed = (r: Route, bytes: number): number => r.crossings * Math.max(0, bytes);

export interface StageEval {
  ok: boolean;
  /** Why it is infeasible, for error messages. */
  why?: string;
  computeMs: number;
  inMs: number;
  outMs: number;
  /**
   * All-gathers among the instances of a split stage (included in computeMs:
   * the instances wait for them). Zero when count = 1.
   */
  exchangeMs: number;
  /** A split stage's synchronisation after every op and trip (included in computeMs). Zero when count = 1. */
  syncMs: number;
  /** Bytes one input's copies in, out and among the instances move across the host's root complex. */
  rootBytes: number;
}

export interface StageContext {
  sys: SystemSpec;
  problem: PlanProblem;
  /** Device (spec) that produced each op's result, for ops in earlier stages. */
  producerDevice: (opId: string) => DeviceSpec | undefined;
  /** The op that finally writes each kernel result. */
  lastWriter: Map<string, string>;
  opById: ReadonlyMap<string, PlanOp>;
  /** bestOpTime (./cost.ts), or a cache of it. */
  opTime: (op: PlanOp, dev: DeviceSpec, count: number) => VariantTime;
}

/**
 * What a stage over a range of ops reads and writes, whatever device and instances run it and whatever the
 * input: for each op in order, the values it reads that no earlier op of the stage read (a parameter, or an
 * earlier stage's op), then its result; the ops that finally write a kernel result; the FPGA designs its
 * bitstream holds. It names values, not sizes, so one shape serves every problem bound from one spec: a runtime
 * prices a range on several devices, counts, producers' places and inputs, and evalStage walks it (the same sums in
 * the same order as a walk of the ops).
 */
export interface StageShape {
  items: readonly ShapeItem[];
  /** Positions in the stage's ops of those that finally write a kernel result, in the order of ctx.lastWriter. */
  writers: readonly number[];
  /** One design per op of the stage (codegen/hls emits one per op). */
  fpgaInstances: readonly FpgaImpl[];
  /** resourceOverflow of the designs on each FPGA device once checked; null where they fit. */
  overflow: WeakMap<DeviceSpec, ReturnType<typeof resourceOverflow> | null>;
}

type ShapeItem =
  | { kind: 'param'; name: string; sparse: boolean }
  | { kind: 'op'; id: string }
  /** The result of the op at this position of the stage. */
  | { kind: 'result'; at: number };

export function stageShape(ctx: Pick<StageContext, 'problem' | 'lastWriter'>, ops: readonly PlanOp[]): StageShape {
  const inStage = new Set(ops.map((o) => o.id));
  const seen = new Set<string>();
  const items: ShapeItem[] = [];
  ops.forEach((op, at) => {
    for (const r of op.reads) {
      const key = r.from.kind === 'param' ? `param:${r.value}` : `op:${r.from.id}`;
      if (seen.has(key)) continue;
      seen.add(key);
      if (r.from.kind === 'param')
        items.push({ kind: 'param', name: r.value, sparse: ctx.problem.sparseParams.has(r.value) });
      else if (!inStage.has(r.from.id)) items.push({ kind: 'op', id: r.from.id });
    }
    items.push({ kind: 'result', at });
  });
  const writers: number[] = [];
  for (const [, writer] of ctx.lastWriter) if (inStage.has(writer)) writers.push(ops.findIndex((o) => o.id === writer));
  return { items, writers, fpgaInstances: ops.flatMap((o) => o.impls.fpga.slice(0, 1)), overflow: new WeakMap() };
}

export function evalStage(
  ctx: StageContext,
  ops: readonly PlanOp[],
  dev: DeviceSpec,
  count: number,
  shape: StageShape = stageShape(ctx, ops),
): StageEval {
  // Which implementation each op runs as is the mapping's (dp.ts makeStage, from the same cached op times): a stage
  // priced for a partition that does not run needs only its figures.
  let compute = 0;
  for (const op of ops) compute += ctx.opTime(op, dev, count).ms;
  if (!Number.isFinite(compute)) {
    const op = ops.find((o) => !Number.isFinite(ctx.opTime(o, dev, count).ms))!;
    const why =
      op.impls[dev.kind].length === 0
        ? `${op.id} (${op.kind}) has no ${dev.kind} implementation in its program`
        : `${dev.id} cannot run ${op.id} (${op.kind}, ${op.dtype})`;
    return { ok: false, why, computeMs: Infinity, inMs: 0, outMs: 0, exchangeMs: 0, syncMs: 0, rootBytes: 0 };
  }
  const exchange = splitExchange(ctx.sys, ops, dev, count);
  const sync = splitSyncMs(ops, count);
  compute += exchange.ms + sync;
  let transfer = 0;
  let outbound = 0;
  let memory = 0;
  // Every instance of a split stage receives its own copy (its share of a sparse operand, the whole of anything else).
  let rootBytes = exchange.rootBytes;
  for (const it of shape.items) {
    if (it.kind === 'param') {
      // Sparse operands are split by rows across instances; dense ones are broadcast.
      const bytes = ctx.problem.paramBytes.get(it.name) ?? 0;
      const share = it.sparse ? bytes / count : bytes;
      const r = route(ctx.sys, undefined, dev, share);
      transfer += r.ms;
      rootBytes += count * crossed(r, share);
      memory += share;
    } else if (it.kind === 'op') {
      const producer = ctx.opById.get(it.id)!;
      const from = ctx.producerDevice(it.id);
      const r = route(ctx.sys, from, dev, producer.resultBytes);
      transfer += r.ms;
      rootBytes += count * crossed(r, producer.resultBytes);
      memory += producer.resultBytes;
    } else {
      const op = ops[it.at]!;
      memory += op.resultBytes / (op.sparse ? count : 1);
    }
  }
  for (const at of shape.writers) {
    const op = ops[at]!;
    const r = route(ctx.sys, dev, undefined, op.resultBytes / count);
    outbound += r.ms;
    rootBytes += count * crossed(r, op.resultBytes / count);
  }
  if (memory > dev.memoryGB * 1e9)
    return {
      ok: false,
      why: `needs ${gigabytes(memory / 1e9)} GB on ${dev.id}, which has ${dev.memoryGB} GB`,
      computeMs: Infinity,
      inMs: transfer,
      outMs: outbound,
      exchangeMs: exchange.ms,
      syncMs: sync,
      rootBytes,
    };
  if (dev.kind === 'fpga' && dev.fpga) {
    // One bitstream holds the shell and a kernel instance per op of the stage (codegen/hls emits one per op).
    let over = shape.overflow.get(dev);
    if (over === undefined) {
      over =
        resourceOverflow(
          fpgaProjectResources(shape.fpgaInstances.map((d) => fpgaEntry(d).resources())),
          dev.fpga.resources,
        ) ?? null;
      shape.overflow.set(dev, over);
    }
    if (over)
      return {
        ok: false,
        why: `kernels ${shape.fpgaInstances.join('+')} and the shell need ${over.need} ${over.kind.toUpperCase()} on ${dev.id}, which has ${over.have}`,
        computeMs: Infinity,
        inMs: transfer,
        outMs: outbound,
        exchangeMs: exchange.ms,
        syncMs: sync,
        rootBytes,
      };
  }
  return {
    ok: true,
    computeMs: compute,
    inMs: transfer,
    outMs: outbound,
    exchangeMs: exchange.ms,
    syncMs: sync,
    rootBytes,
  };
}

/**
 * The fixed cost of a split: after every op and trip the k > 1 instances
 * wait on each other (a cross-device event) before the next op may read
 * the slices. Without it the planner split small graphs whose halved
 * kernels saved less than the synchronisation costs (docs/EVALUATION.md).
 */
export function splitSyncMs(ops: readonly PlanOp[], count: number): number {
  if (count <= 1) return 0;
  return ops.reduce((a, op) => a + op.trips, 0) * (MODEL.splitSyncUs / 1e3);
}

/**
 * A stage split by rows over `count` instances leaves each value it computes
 * in slices, one per instance. An op that gathers (reads a dense operand at
 * data-dependent rows) needs that operand whole on every instance, so the
 * instances all-gather it: after an op whose result the next op gathers,
 * and after every trip but the last of a repeat region whose op gathers its
 * loop-carried result (PageRank, SSSP). Each instance sends its slice to
 * each of the others; sends from one instance are taken to go one after
 * another, different instances' in parallel.
 */
export function splitExchangeMs(sys: SystemSpec, ops: readonly PlanOp[], dev: DeviceSpec, count: number): number {
  return splitExchange(sys, ops, dev, count).ms;
}

/** The exchanges' time and the bytes they move across the root complex (k x (k - 1) slices per all-gather). */
function splitExchange(
  sys: SystemSpec,
  ops: readonly PlanOp[],
  dev: DeviceSpec,
  count: number,
): { ms: number; rootBytes: number } {
  if (count <= 1) return { ms: 0, rootBytes: 0 };
  let ms = 0;
  let rootBytes = 0;
  const allGather = (bytes: number, times: number): void => {
    const r = route(sys, dev, dev, bytes / count);
    ms += times * ((count - 1) * r.ms);
    rootBytes += times * count * (count - 1) * crossed(r, bytes / count);
  };
  let prev: PlanOp | undefined;
  for (const op of ops) {
    if (op.gathers > 0 && prev && op.reads.some((r) => r.from.kind === 'op' && r.from.id === prev!.id))
      allGather(prev.resultBytes, 1);
    // Inside a repeat region the value gathered is the loop-carried one: exchanged between trips.
    if (op.gathers > 0 && op.trips > 1) allGather(op.resultBytes, op.trips - 1);
    prev = op;
  }
  return { ms, rootBytes };
}

/** The FPGA designs a stage of these ops loads (each op has one), distinct, in op order. */
export function stageFpgaImpls(ops: readonly PlanOp[]): FpgaImpl[] {
  return [...new Set(ops.flatMap((o) => o.impls.fpga.slice(0, 1)))];
}
