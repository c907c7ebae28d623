/**
 * A mapping and a stream of inputs as a task graph for the engine: per
 * input and stage, the copies in (parameters from host memory, values from
 * the stages that produced them, peer-to-peer or staged through the host),
 * each op's kernels on every instance of the stage (trip by trip, with the
 * exchanges a data-parallel split needs between them), and the copies of
 * kernel results home. Kernel service times are the cost model's per-op
 * estimates without its launch term; everything around them is the
 * simulation's own.
 */
import { callOverheadUs } from '../../runtime/catalogue/index.js';
import { bestOpTime, MODEL } from '../../runtime/plan/cost.js';
import { lastWriters } from '../../runtime/plan/dp.js';
import type { PlanProblem } from '../../runtime/plan/types.js';
import { instances, type DeviceSpec, type SystemSpec } from '../../runtime/system/types.js';
import type { Link, Task } from './engine.js';
import { SIM } from './params.js';
import type { SimStage } from './types.js';

export interface Topology {
  names: string[];
  specs: DeviceSpec[];
  links: Link[];
  up: Map<number, number>;
  down: Map<number, number>;
  /** The host's root complex (a link every PCIe transfer also crosses); absent when the system does not model one. */
  root: number | undefined;
  /** Peer path between two instances (unordered key), when the system has a peer link for their kinds. */
  peer: Map<string, number>;
  peerLatencyMs: Map<string, number>;
}

export function topology(sys: SystemSpec): Topology {
  const inst = instances(sys);
  const links: Link[] = [];
  const add = (name: string, gbs: number): number => links.push({ name, bytesPerMs: gbs * 1e6 }) - 1;
  const up = new Map<number, number>();
  const down = new Map<number, number>();
  inst.forEach((x, i) => {
    if (x.spec.kind === 'cpu' || !x.spec.hostLink) return;
    up.set(i, add(`${x.name} up`, x.spec.hostLink.bandwidthGBs));
    down.set(i, add(`${x.name} down`, x.spec.hostLink.bandwidthGBs));
  });
  const gbs = sys.devices.find((d) => d.kind === 'cpu')?.rootComplexGBs;
  const root = gbs === undefined ? undefined : add('root', gbs);
  const peer = new Map<string, number>();
  const peerLatencyMs = new Map<string, number>();
  inst.forEach((a, i) =>
    inst.forEach((b, j) => {
      if (j <= i) return;
      const l = sys.peerLinks.find(
        (p) => (p.a === a.spec.id && p.b === b.spec.id) || (p.a === b.spec.id && p.b === a.spec.id),
      );
      if (!l || a.spec.kind === 'cpu' || b.spec.kind === 'cpu') return;
      peer.set(`${i}:${j}`, add(`${a.name}<->${b.name}`, l.bandwidthGBs));
      peerLatencyMs.set(`${i}:${j}`, l.latencyUs / 1e3);
    }),
  );
  return { names: inst.map((x) => x.name), specs: inst.map((x) => x.spec), links, up, down, root, peer, peerLatencyMs };
}

const onHost = (t: Topology, i: number | undefined): boolean => i === undefined || t.specs[i]!.kind === 'cpu';

/** A PCIe transfer's links plus the root complex, when the system has one. */
const withRoot = (t: Topology, links: number[]): number[] => (t.root === undefined ? links : [...links, t.root]);

/**
 * Adds the transfers that move `bytes` from instance `from` to `to`
 * (undefined = host memory) after `deps`; returns the task that ends it.
 * Without a peer link the copy lands in host memory first (store and forward).
 */
function move(
  tasks: Task[],
  t: Topology,
  from: number | undefined,
  to: number | undefined,
  bytes: number,
  deps: number[],
  input: number,
  label: string,
): number[] {
  if (bytes <= 0 || from === to || (onHost(t, from) && onHost(t, to))) return deps;
  const hop = (dev: number, dir: 'up' | 'down', d: number[]): number[] => {
    const spec = t.specs[dev]!;
    const link = (dir === 'up' ? t.up : t.down).get(dev)!;
    tasks.push({
      kind: 'transfer',
      deps: d,
      input,
      label,
      links: withRoot(t, [link]),
      bytes,
      latencyMs: (spec.hostLink?.latencyUs ?? 0) / 1e3,
      endpoints: [dev],
    });
    return [tasks.length - 1];
  };
  if (onHost(t, from)) return hop(to!, 'down', deps);
  if (onHost(t, to)) return hop(from!, 'up', deps);
  const key = from! < to! ? `${from}:${to}` : `${to}:${from}`;
  const p = t.peer.get(key);
  if (p !== undefined) {
    // Peer-to-peer DMA still crosses both devices' PCIe links and the root complex.
    tasks.push({
      kind: 'transfer',
      deps,
      input,
      label,
      links: withRoot(t, [t.up.get(from!)!, t.down.get(to!)!, p]),
      bytes,
      latencyMs: t.peerLatencyMs.get(key)!,
      endpoints: [from!, to!],
    });
    return [tasks.length - 1];
  }
  return hop(to!, 'down', hop(from!, 'up', deps));
}

/** How one op's rows split over k instances by nnz: the first instance also holds the longest row. */
function shares(p: PlanProblem, op: number, k: number): number[] {
  if (k === 1) return [1];
  const f = p.ops[op]!.sparse;
  const first = f && f.nnz > 0 ? Math.min(1, Math.max(1 / k, f.rowLenMax / f.nnz)) : 1 / k;
  return [first, ...Array.from({ length: k - 1 }, () => (1 - first) / (k - 1))];
}

export interface Built {
  tasks: Task[];
  /** Per input: the tasks that end it (results home). */
  ends: number[][];
  top: Topology;
}

export function buildTasks(sys: SystemSpec, p: PlanProblem, stages: readonly SimStage[], stream: number): Built {
  const top = topology(sys);
  const instIndex = new Map(top.names.map((nm, i) => [nm, i]));
  const writers = lastWriters(p);
  const resultOps = new Set(writers.values());
  const index = new Map(p.ops.map((o, i) => [o.id, i]));
  const stageOf = new Map<number, number>();
  stages.forEach((s, si) => s.ops.forEach((o) => stageOf.set(o, si)));
  const tasks: Task[] = [];
  const ends: number[][] = [];
  // computeDone[input][stage]: the join after the stage's last op for that input.
  const computeDone: number[][] = [];
  // opDone[input][op]: task ids after which the op's result (all trips, all instances) exists.
  for (let input = 0; input < stream; input++) {
    const opDone = new Map<number, number[]>();
    computeDone.push([]);
    const inputEnds: number[] = [];
    stages.forEach((st, si) => {
      const insts = st.instances.map((nm) => {
        const i = instIndex.get(nm);
        if (i === undefined) throw new Error(`simulation: no instance ${nm} in ${sys.name}`);
        return i;
      });
      const k = insts.length;
      const members = new Set(st.ops);
      // Buffer slots: this input's copies may start once input - stageBuffers has finished computing here.
      const slot = input >= SIM.stageBuffers ? [computeDone[input - SIM.stageBuffers]![si]!] : [];
      const inbound: number[] = [];
      const seen = new Set<string>();
      for (const o of st.ops) {
        for (const r of p.ops[o]!.reads) {
          const key = r.from.kind === 'param' ? `param:${r.value}` : `op:${r.from.id}`;
          if (seen.has(key)) continue;
          seen.add(key);
          if (r.from.kind === 'param') {
            const bytes = p.paramBytes.get(r.value) ?? 0;
            const share = p.sparseParams.has(r.value) ? bytes / k : bytes;
            for (const dst of insts)
              inbound.push(...move(tasks, top, undefined, dst, share, slot, input, `${r.value} in`));
          } else {
            const src = index.get(r.from.id)!;
            if (members.has(src)) continue;
            const ps = stages[stageOf.get(src)!]!;
            const srcInsts = ps.instances.map((nm) => instIndex.get(nm)!);
            const bytes = p.ops[src]!.resultBytes / srcInsts.length;
            const after = [...(opDone.get(src) ?? []), ...slot];
            // Every consumer instance gathers the whole value: each producer instance sends its slice.
            for (const dst of insts)
              for (const from of srcInsts)
                inbound.push(
                  ...move(
                    tasks,
                    top,
                    from,
                    dst,
                    bytes,
                    after,
                    input,
                    `${p.ops[src]!.result} ${top.names[from]}->${top.names[dst]}`,
                  ),
                );
          }
        }
      }
      tasks.push({
        kind: 'delay',
        deps: inbound.length > 0 ? inbound : slot,
        input,
        label: 'dispatch',
        ms: SIM.stageDispatchUs / 1e3,
      });
      let prev = [tasks.length - 1];
      if (input > 0) prev.push(computeDone[input - 1]![si]!);
      let lastProduced: number | undefined;
      for (const o of st.ops) {
        const op = p.ops[o]!;
        const dev = st.device;
        const launch = callOverheadUs(op, dev) / 1e3;
        const perTrip = bestOpTime(op, dev, 1).ms / op.trips - launch;
        const sh = shares(p, o, k);
        const readsPrev =
          lastProduced !== undefined &&
          op.reads.some((r) => r.from.kind === 'op' && index.get(r.from.id) === lastProduced);
        // A data-parallel split whose op gathers from a value the previous op left in slices needs it whole on every instance.
        if (k > 1 && readsPrev && op.gathers > 0)
          prev = exchange(
            tasks,
            top,
            insts,
            p.ops[lastProduced!]!.resultBytes,
            prev,
            input,
            p.ops[lastProduced!]!.result,
          );
        for (let trip = 0; trip < op.trips; trip++) {
          const parts = insts.map((inst, j) => {
            tasks.push({
              kind: 'compute',
              deps: prev,
              input,
              label: op.trips > 1 ? `${op.id} #${trip + 1}` : op.id,
              instance: inst,
              ms: perTrip * sh[j]! + launch + (k > 1 ? MODEL.splitSyncUs / 1e3 : 0),
            });
            return tasks.length - 1;
          });
          prev = parts;
          // Loop-carried values: split instances swap their slices before the next trip.
          if (k > 1 && trip + 1 < op.trips && op.gathers > 0)
            prev = exchange(tasks, top, insts, op.resultBytes, prev, input, op.result);
        }
        opDone.set(o, prev);
        lastProduced = o;
        if (resultOps.has(op.id))
          prev.forEach((_, j) => {
            const back = move(
              tasks,
              top,
              insts[j],
              undefined,
              op.resultBytes / k,
              [prev[j]!],
              input,
              `${op.result} out`,
            );
            inputEnds.push(...back);
          });
      }
      tasks.push({ kind: 'delay', deps: prev, input, label: 'stage done', ms: 0 });
      computeDone[input]![si] = tasks.length - 1;
    });
    ends.push(inputEnds.length > 0 ? inputEnds : computeDone[input]!.slice());
  }
  return { tasks, ends, top };
}

/** All-gather of a value split over instances: each sends its slice to every other. */
function exchange(
  tasks: Task[],
  top: Topology,
  insts: number[],
  bytes: number,
  deps: number[],
  input: number,
  value: string,
): number[] {
  const out: number[] = [];
  const k = insts.length;
  insts.forEach((from, a) =>
    insts.forEach((to, b) => {
      if (a === b) return;
      out.push(...move(tasks, top, from, to, bytes / k, [deps[a]!], input, `${value} exchange`));
    }),
  );
  return out.length > 0 ? [...out, ...deps] : deps;
}
