/**
 * The stage engine: runs one kernel's ops stage by stage on the device
 * instances a partition gives each stage, over the backends that serve
 * their kinds. For each op it brings the regions the op reads to the
 * instance (only the rows it runs of a split op's own pattern), launches the
 * implementation the partition names, and records which copies now hold the
 * result: a stage split over k instances runs nnz-balanced row ranges on
 * each, and the next reader all-gathers the slices. Parameters stay
 * resident across inputs while their tensors are the same objects (a tensor
 * object stands for its values: `updated` is how a caller says it rewrote
 * them in place); each input in flight (a slot) has its own temporaries.
 * Results come home after the stage that last writes them.
 */
import { converged, recordTrips, type RepeatTrips } from '../converge.js';
import { longestRun } from '../native/abi.js';
import { InputError } from '../errors.js';
import { instances, type DeviceKind, type SystemSpec } from '../system/types.js';
import type { Tensor } from '../tensor.js';
import {
  grouping,
  permuteValues,
  ProgramLayout,
  type LayoutInputs,
  type Pattern,
  type RegionSpec,
  type View,
} from '../wasm/layout.js';
import type { WasmManifest, WasmOp, WasmStep } from '../wasm/manifest.js';
import { balancedCuts } from '../wasm/threads.js';
import { DeviceCallError, type BackendName, type CallOptions, type StageBackends } from './backend.js';
import { HOST, Mover, Value, type Place, type Traffic } from './values.js';

/** A device call that failed while running an op: which op, on which instance. */
export class StageFault extends Error {
  constructor(
    readonly op: string,
    readonly device: string,
    override readonly cause: DeviceCallError,
  ) {
    super(`op ${op} on ${device} (${cause.backend}): ${cause.message}`);
    this.name = 'StageFault';
  }
}

/** One stage of a partition as the engine runs it. */
export interface StagePlan {
  ops: readonly string[];
  kind: DeviceKind;
  /** Device instances (system names), one or more. */
  devices: readonly string[];
  /** The implementation (runtime/catalogue name) of each op. */
  impls: Readonly<Record<string, string>>;
  /** CPU stages: the threads each op's parallel loop runs on (the model's pick; absent: all the backend has). */
  threads?: Readonly<Record<string, number>>;
}

/** What really ran, and how long it took on this host's clock. */
export interface StageRun {
  ops: string[];
  devices: string[];
  backend: BackendName;
  /** Measured wall time of the stage: its transfers, launches and the wait for its devices. */
  ms: number;
  transferMs: number;
  computeMs: number;
  /** Bytes moved to the stage's devices (from the host or other devices), and results sent home. */
  bytesIn: number;
  bytesOut: number;
  /** Start and end on the engine's clock (ms since it was created). */
  startMs: number;
  endMs: number;
  /** Ops of a split stage that ran whole on its first instance (no parallel row loop to split). */
  unsplit: string[];
  /** Each op run of the stage (a repeat's ops once per trip), measured from its launch to its end. */
  opRuns: OpRun[];
  /** The repeat regions the stage ran: trips, and whether an `until` test stopped each. */
  repeats: RepeatTrips[];
  /** It ran while stages of other inputs ran (calls off the main thread): its times include waiting for the cores. */
  concurrent: boolean;
  /** CPU stages: the threads each op ran on (the plan's pick, capped at the backend's threads). */
  threads?: Record<string, number>;
}

export interface OpRun {
  op: string;
  impl: string;
  /** The instances it ran on (several: a split op, each its rows). */
  devices: string[];
  ms: number;
}

/** One input's bound facts: dims, patterns, regions, and per op its size arguments. */
export interface Prepared {
  inputs: LayoutInputs;
  dims: Map<string, number>;
  patterns: Map<string, Pattern>;
  regions: Map<string, RegionSpec>;
  /** Input regions with the parameter (tensor or scalar) each holds part of. */
  inputKeys: { key: string; owner: unknown }[];
  /** Per op: sizes in manifest order and the pattern's figures (runtime/native/abi.ts PATTERN_FIGURES; the launch's size arguments). */
  sizes: Map<string, number[]>;
  /** The tensor objects and scalars it was prepared for, in parameter order (what a new input is compared with). */
  entries: unknown[];
  /** What each entry held then (heldBy): the same object holding other arrays is another input. */
  held: (readonly unknown[] | undefined)[];
}

/**
 * What a tensor object holds, shallowly: its fields' values, a shape's sizes spread out (dense: format, sizes, data;
 * CSR: format, rows, cols, rowPtr, colIdx, values). A copy or a pattern made of a tensor stands for these: a caller
 * that puts other arrays (or sizes) in the same object gives another input, which must not reuse them (the same
 * object with another graph's arrays ran the old pattern with the new sizes: wrong results, an out-of-bounds fault,
 * or a crash in a native library). O(fields), not O(values): values rewritten in place are `updated`'s to say.
 */
export function heldBy(t: unknown): readonly unknown[] | undefined {
  if (typeof t !== 'object' || t === null) return undefined;
  return Object.values(t).flatMap((v) => (Array.isArray(v) ? (v as unknown[]) : [v]));
}

/** Whether two heldBy snapshots are the same fields, each the very same value. */
export function sameHeld(a: readonly unknown[] | undefined, b: readonly unknown[] | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  return a.length === b.length && a.every((v, i) => Object.is(v, b[i]));
}

/** What the engine needs of an op on every run, worked out once. */
interface OpFacts {
  keys: string[];
  outIdx: number;
  local: Set<string>;
  reads: string[];
}

interface ParamEntry {
  /** The tensor object or scalar the copies are of; RETIRED once its values changed under an input in flight. */
  owner: unknown;
  /** What the owner held when the copy was made (heldBy). */
  held: readonly unknown[] | undefined;
  value: Value;
  pins: number;
  /** The owner's values were rewritten in place: the next input to use it writes the host copy afresh. */
  stale?: boolean;
}

/** The owner of a copy no new input may use: it holds values its tensor no longer has. */
const RETIRED = Symbol('retired');

/** One input in flight: its temporaries and results, and the parameter copies it uses. */
export class Slot {
  readonly values = new Map<string, Value>();
  defined = new Set<string>();
  prep: Prepared | undefined;
  params = new Map<string, ParamEntry>();
}

export class KernelEngine {
  readonly L: ProgramLayout;
  readonly places = new Map<string, Place>();
  private readonly params = new Map<string, ParamEntry[]>();
  private readonly mover: Mover;
  private readonly lastWriter = new Map<string, string>();
  private readonly epoch = performance.now();
  private opts: CallOptions = {};
  private lastPatterns = new Map<string, { t: Tensor; held: readonly unknown[] | undefined; p: Pattern }>();

  constructor(
    readonly manifest: WasmManifest,
    backends: StageBackends,
    sys: SystemSpec,
  ) {
    this.L = new ProgramLayout(manifest);
    const byKind = new Map<DeviceKind, number>();
    for (const x of instances(sys)) {
      const be = backends[x.spec.kind];
      const dev = byKind.get(x.spec.kind) ?? 0;
      byKind.set(x.spec.kind, dev + 1);
      if (be && dev < be.deviceCount) this.places.set(x.name, { name: x.name, kind: x.spec.kind, backend: be, dev });
    }
    this.mover = new Mover(this.places, () => this.opts);
    for (const o of manifest.ops) this.lastWriter.set(o.result, o.op);
  }

  /** Whether calls go off the main thread (stages of different inputs overlap). */
  set concurrent(on: boolean) {
    this.opts = on ? { offThread: true } : {};
  }

  /** Time each op to its end (a sync after it where launches queue), for a history of op times. */
  timeOps = false;

  now(): number {
    return performance.now() - this.epoch;
  }

  place(name: string): Place {
    const p = this.places.get(name);
    if (!p)
      throw new InputError(
        'DY3041',
        `instance ${name}`,
        undefined,
        `no backend serves device instance ${name} (or its backend has fewer devices than the system)`,
      );
    return p;
  }

  /** Binds an input; the very same tensor objects and scalars as the last input reuse its preparation. */
  prepare(inputs: LayoutInputs): Prepared {
    const entries = this.manifest.params.map((p) =>
      p.type.shape.length === 0 ? inputs.scalars.get(p.name) : inputs.tensors.get(p.name),
    );
    const held = entries.map(heldBy);
    const last = this.lastPrepared;
    if (
      last &&
      inputs.dims === last.inputs.dims &&
      entries.every((e, i) => Object.is(e, last.entries[i]) && sameHeld(held[i], last.held[i]))
    )
      return { ...last, inputs };
    const dims = this.L.bindDims(inputs);
    const patterns = this.L.patternsOf(inputs, (n, t) => {
      const kept = this.lastPatterns.get(n);
      return kept?.t === t && sameHeld(kept.held, heldBy(t)) ? kept.p : undefined;
    });
    this.lastPatterns = new Map(
      [...patterns].map(([n, p]) => {
        const t = inputs.tensors.get(n)!;
        return [n, { t, held: heldBy(t), p }];
      }),
    );
    const regions = this.L.regions(dims, patterns);
    const owner = (key: string): unknown => {
      const name = key.split(':')[1]!;
      return inputs.tensors.get(name) ?? inputs.scalars.get(name);
    };
    const sizes = new Map(
      this.manifest.ops.map((o) => {
        const root = this.L.sparseRootOf(o);
        const pat = root !== undefined ? patterns.get(root) : undefined;
        return [o.op, [...this.L.sizesOf(o, dims, patterns), ...patternFigures(pat)]];
      }),
    );
    const prep: Prepared = {
      inputs,
      dims,
      patterns,
      regions,
      inputKeys: this.L.inputKeys(regions).map((key) => ({ key, owner: owner(key) })),
      sizes,
      entries,
      held,
    };
    this.lastPrepared = prep;
    return prep;
  }

  private lastPrepared: Prepared | undefined;
  private readonly facts = new Map<string, OpFacts>();

  private factsOf(o: WasmOp): OpFacts {
    let f = this.facts.get(o.op);
    if (!f)
      this.facts.set(
        o.op,
        (f = {
          keys: this.L.keys.get(o.op)!,
          outIdx: o.buffers.findIndex((b) => b.name === o.out),
          local: new Set(o.rowLocal ?? []),
          reads: this.L.reads.get(o.op)!,
        }),
      );
    return f;
  }

  /** Binds a slot to an input: its parameter copies (resident ones reused) and a fresh set of defined values. */
  begin(slot: Slot, prep: Prepared): void {
    this.end(slot);
    slot.prep = prep;
    slot.defined = new Set(this.manifest.params.map((p) => p.name));
    const fresh = new Map<string, View>();
    // Resident copies whose tensor's values were rewritten in place: their host copy is written again, in place.
    const stale = new Map<string, ParamEntry>();
    const need = new Set<string>();
    for (const x of prep.inputKeys) {
      const e = this.L.writesParams ? undefined : this.paramEntry(x.key, x.owner, prep.regions.get(x.key)!);
      if (e?.stale) stale.set(x.key, e);
      if (!e || e.stale) need.add(x.key);
    }
    if (need.size > 0)
      this.L.writeInputs(
        prep.inputs,
        prep.patterns,
        (k) => need.has(k),
        (k) => {
          const old = stale.get(k);
          if (old) return old.value.hostData();
          const v = new Value(k, prep.regions.get(k)!);
          const data = this.mover.copyAt(v, HOST).data!;
          fresh.set(k, data);
          return data;
        },
      );
    // Every device copy is now out of date; each keeps its buffer and is filled again where an op next reads it.
    for (const e of stale.values()) {
      e.value.written(HOST, [[0, e.value.bytes]]);
      e.stale = false;
    }
    for (const { key: k, owner } of prep.inputKeys) {
      const spec = prep.regions.get(k)!;
      if (this.L.writesParams) {
        // A kernel that assigns a parameter changes its copy: every input gets its own.
        const v = this.slotValue(slot, k, spec);
        const host = this.mover.copyAt(v, HOST);
        host.data = fresh.get(k)!;
        v.written(HOST, [[0, v.bytes]]);
        continue;
      }
      let e = this.paramEntry(k, owner, spec);
      if (!e) {
        const v = new Value(k, spec);
        const host = this.mover.copyAt(v, HOST);
        host.data = fresh.get(k)!;
        host.valid = [[0, v.bytes]];
        e = { owner, held: heldBy(owner), value: v, pins: 0 };
        const list = this.params.get(k) ?? [];
        list.push(e);
        this.params.set(k, list);
      }
      e.pins++;
      slot.params.set(k, e);
      this.evict(k, e);
    }
  }

  /**
   * The values of `owner` (a tensor object) were rewritten in place: every
   * copy of them is out of date. Its pattern's pointers and indices (`S:`
   * regions) stay: a rewritten pattern comes as a new object by contract. A
   * copy an input in flight uses keeps the values that input was admitted
   * with, and no later input finds it; the others are written again from the
   * tensor by the next input that uses it, into the buffers they have.
   */
  updated(owner: object): void {
    for (const [key, list] of this.params) {
      if (key.startsWith('S:')) continue;
      for (const e of list) {
        if (!Object.is(e.owner, owner)) continue;
        if (e.pins > 0) e.owner = RETIRED;
        else e.stale = true;
      }
    }
  }

  private paramEntry(key: string, owner: unknown, spec: RegionSpec): ParamEntry | undefined {
    const held = heldBy(owner);
    return this.params
      .get(key)
      ?.find(
        (e) =>
          Object.is(e.owner, owner) &&
          sameHeld(e.held, held) &&
          e.value.spec.length === spec.length &&
          e.value.spec.elem === spec.elem,
      );
  }

  /** Keeps, per parameter region, the copies in use and the newest; frees the device memory of the rest. */
  private evict(key: string, newest: ParamEntry): void {
    const list = this.params.get(key)!;
    const keep = list.filter((e) => e === newest || e.pins > 0);
    for (const e of list) if (!keep.includes(e)) e.value.freeDevices(this.places);
    this.params.set(key, keep);
  }

  /** Unpins a slot's parameters (its temporaries stay allocated for the next input). */
  end(slot: Slot): void {
    for (const e of slot.params.values()) e.pins--;
    slot.params.clear();
  }

  private slotValue(slot: Slot, key: string, spec: RegionSpec): Value {
    let v = slot.values.get(key);
    if (v && (v.spec.length !== spec.length || v.spec.elem !== spec.elem)) {
      v.freeDevices(this.places);
      v = undefined;
    }
    if (!v) slot.values.set(key, (v = new Value(key, spec)));
    return v;
  }

  private valueOf(slot: Slot, key: string): Value {
    const e = slot.params.get(key);
    if (e) return e.value;
    const spec = slot.prep!.regions.get(key);
    if (!spec) throw new Error(`internal: no region ${key}`);
    return this.slotValue(slot, key, spec);
  }

  /** Runs stage `stage` of the slot's input: the ops of the program it holds, repeats included. */
  async runStage(slot: Slot, stage: StagePlan): Promise<StageRun> {
    const places = stage.devices.map((d) => this.place(d));
    const backend = places[0]!.backend;
    if (places.some((p) => p.kind !== stage.kind || p.backend !== backend))
      throw new InputError(
        'DY3047',
        `stage [${stage.ops.join(', ')}]`,
        undefined,
        `instances ${stage.devices.join(', ')} are not all ${stage.kind} devices of one backend`,
      );
    const t: Traffic = { inBytes: 0, outBytes: 0 };
    const clock = { transferMs: 0 };
    const unsplit: string[] = [];
    const opRuns: OpRun[] = [];
    const start = this.now();
    const inStage = new Set(stage.ops);
    const log = new Map<string, RepeatTrips>();
    await this.walk(this.manifest.program, slot, stage, inStage, t, clock, unsplit, opRuns, log);
    for (const p of places)
      await p.backend.sync(p.dev, this.opts).catch((e: unknown) => {
        throw e instanceof DeviceCallError ? new StageFault(stage.ops.join('+'), p.name, e) : e;
      });
    // Results whose last writer ran here go home now.
    const t0 = performance.now();
    const out: Traffic = { inBytes: 0, outBytes: 0 };
    for (const r of this.manifest.results) {
      if (!inStage.has(this.lastWriter.get(r.name) ?? '') || !slot.defined.has(r.name)) continue;
      const v = this.valueOf(slot, this.resultKey(r.name));
      await this.mover.ensure(v, HOST, 0, v.bytes, out);
    }
    clock.transferMs += performance.now() - t0;
    const end = this.now();
    return {
      ops: [...stage.ops],
      devices: [...stage.devices],
      backend: backend.name,
      ms: end - start,
      transferMs: clock.transferMs,
      computeMs: end - start - clock.transferMs,
      bytesIn: t.inBytes,
      bytesOut: out.outBytes + t.outBytes,
      startMs: start,
      endMs: end,
      unsplit,
      opRuns,
      repeats: [...log.values()],
      concurrent: this.opts.offThread === true,
      ...(stage.kind === 'cpu'
        ? {
            threads: Object.fromEntries(
              stage.ops.map((op) => [op, Math.min(backend.threads ?? 1, stage.threads?.[op] ?? Infinity)]),
            ),
          }
        : {}),
    };
  }

  private resultKey(name: string): string {
    const t = this.manifest.results.find((r) => r.name === name)!.type;
    return t.format === 'dense' || t.shape.length < 2 ? `D:${name}` : `V:${name}:${this.L.resultLayout(name)}`;
  }

  private async walk(
    steps: readonly WasmStep[],
    slot: Slot,
    stage: StagePlan,
    inStage: ReadonlySet<string>,
    t: Traffic,
    clock: { transferMs: number },
    unsplit: string[],
    runs: OpRun[],
    log: Map<string, RepeatTrips>,
  ): Promise<void> {
    for (const s of steps) {
      if (s.kind === 'op') {
        if (inStage.has(s.op)) runs.push(await this.runOp(slot, stage, this.L.opById.get(s.op)!, t, clock, unsplit));
        continue;
      }
      const body = opsOf(s.body);
      const here = body.filter((o) => inStage.has(o)).length;
      if (here === 0) continue;
      if (here !== body.length)
        throw new InputError(
          'DY3047',
          `stage [${stage.ops.join(', ')}]`,
          undefined,
          `cuts the repeat region ${s.id}: a repeat region runs within one stage`,
        );
      const n = this.repeatCount(s, slot);
      const u = s.until;
      // The test reads the watched value on the host: one copy home per trip when the stage is on a device.
      let before = u && n > 0 ? await this.hostCopy(slot, u.value, t, clock) : undefined;
      let trips = 0;
      let stopped = false;
      while (trips < n && !stopped) {
        await this.walk(s.body, slot, stage, inStage, t, clock, unsplit, runs, log);
        trips++;
        if (u) {
          const after = await this.hostCopy(slot, u.value, t, clock);
          stopped = converged(before!, after, u.within);
          before = after;
        }
      }
      recordTrips(log, s.id, n, u, trips, stopped);
    }
  }

  /** A host copy of dense value `name` as it is now (brought home if a device wrote it last). */
  private async hostCopy(
    slot: Slot,
    name: string,
    t: Traffic,
    clock: { transferMs: number },
  ): Promise<ArrayLike<number>> {
    const t0 = performance.now();
    const v = this.valueOf(slot, `D:${name}`);
    await this.mover.ensure(v, HOST, 0, v.bytes, t);
    clock.transferMs += performance.now() - t0;
    return v.hostData().slice() as ArrayLike<number>;
  }

  private repeatCount(s: Extract<WasmStep, { kind: 'repeat' }>, slot: Slot): number {
    if (typeof s.count === 'number') return s.count;
    const v = slot.prep!.inputs.scalars.get(s.count.param);
    if (v === undefined) this.L.fail(`--param ${s.count.param}`, `repeat count '${s.count.param}' is not given`);
    if (!Number.isSafeInteger(v) || v < 0)
      this.L.fail(`--param ${s.count.param}`, `repeat count must be a non-negative integer, got ${v}`);
    return v;
  }

  /** Row pointers of the pattern a split of `o` balances by, from the host's copy of the pattern. */
  private balancePtr(o: WasmOp, prep: Prepared): Int32Array | undefined {
    if (!o.balanceBy) return undefined;
    const pat = prep.patterns.get(o.balanceBy.root);
    return pat ? grouping(pat, o.balanceBy.layout).ptr : undefined;
  }

  private async runOp(
    slot: Slot,
    stage: StagePlan,
    o: WasmOp,
    t: Traffic,
    clock: { transferMs: number },
    unsplit: string[],
  ): Promise<OpRun> {
    const prep = slot.prep!;
    const { keys, outIdx, local, reads } = this.factsOf(o);
    for (const v of reads)
      if (!slot.defined.has(v))
        this.L.fail(
          `kernel ${this.manifest.kernel}`,
          `'${v}' was never computed: the repeat that assigns it ran zero times`,
        );
    const impl = stage.impls[o.op];
    const threads = stage.threads?.[o.op];
    if (impl === undefined)
      throw new InputError(
        'DY3047',
        `stage [${stage.ops.join(', ')}]`,
        undefined,
        `names no implementation for ${o.op}`,
      );
    const rows = this.L.splitRows(o, prep.dims);
    const k = stage.devices.length;
    const split = k > 1 && o.splitWrites !== undefined && rows !== undefined && rows >= k;
    // Once per op, however many trips of a repeat run it.
    if (k > 1 && !split && !unsplit.includes(o.op)) unsplit.push(o.op);
    const ptr = this.balancePtr(o, prep);
    const cuts = split ? balancedCuts(rows!, k, ptr) : [0, -1];
    const runners = split ? stage.devices : stage.devices.slice(0, 1);
    const sizes = prep.sizes.get(o.op)!;
    const out = this.valueOf(slot, keys[outIdx]!);
    const writes: [string, number, number][] = [];
    const launches: Promise<void>[] = [];
    let opMs = 0;
    const fault =
      (at: string) =>
      (e: unknown): never => {
        throw e instanceof DeviceCallError ? new StageFault(o.op, at, e) : e;
      };
    for (let i = 0; i < runners.length; i++) {
      const at = runners[i]!;
      const place = this.place(at);
      const [lo, hi] = split ? [cuts[i]!, cuts[i + 1]!] : [0, -1];
      if (split && lo >= hi) continue;
      const bufs = [];
      const t0 = performance.now();
      for (let j = 0; j < o.buffers.length; j++) {
        const b = o.buffers[j]!;
        const v = j === outIdx ? out : this.valueOf(slot, keys[j]!);
        if (j !== outIdx) {
          let [a, z] = [0, v.bytes];
          if (split && local.has(b.name) && ptr) {
            const eb = v.bytes / Math.max(1, v.spec.length);
            [a, z] =
              b.role === 'rowPtr' || b.role === 'colPtr' ? [lo * eb, (hi + 1) * eb] : [ptr[lo]! * eb, ptr[hi]! * eb];
          }
          await this.mover.ensure(v, at, a, z, t).catch(fault(at));
        }
        try {
          bufs.push(this.mover.copyAt(v, at).buf!);
        } catch (e) {
          fault(at)(e);
        }
      }
      clock.transferMs += performance.now() - t0;
      let handle: number;
      try {
        handle = place.backend.lookup(this.manifest.kernel, o.op, impl);
      } catch (e) {
        return fault(at)(e);
      }
      const t1 = performance.now();
      const run = place.backend
        .launch(place.dev, handle, bufs, sizes, lo, hi, threads === undefined ? this.opts : { ...this.opts, threads })
        .then(() => (this.timeOps && place.backend.queues ? place.backend.sync(place.dev, this.opts) : undefined))
        .then(() => void (opMs = Math.max(opMs, performance.now() - t1)))
        .catch((e: unknown) =>
          fault(at)(
            e instanceof DeviceCallError
              ? e
              : new DeviceCallError(place.backend.name, 'launch', -8, (e as Error).message),
          ),
        );
      if (this.opts.offThread) launches.push(run);
      else await run;
      writes.push([at, ...this.writtenBytes(o, out, split, lo, hi, rows, ptr)]);
    }
    await Promise.all(launches);
    writes.forEach(([at, a, z], i) => (i === 0 ? out.written(at, [[a, z]]) : out.alsoWritten(at, a, z)));
    await this.afterOp(slot, o, keys[outIdx]!, t);
    return { op: o.op, impl, devices: writes.map((w) => w[0]), ms: opMs };
  }

  /** The bytes of the out region an instance running rows [lo, hi) writes (all of it when not split). */
  private writtenBytes(
    o: WasmOp,
    out: Value,
    split: boolean,
    lo: number,
    hi: number,
    rows: number | undefined,
    ptr: Int32Array | undefined,
  ): [number, number] {
    if (!split) return [0, out.bytes];
    const eb = out.bytes / Math.max(1, out.spec.length);
    if (o.splitWrites === 'rows') {
      const perRow = out.spec.length / rows!;
      return [lo * perRow * eb, hi * perRow * eb];
    }
    return [ptr![lo]! * eb, ptr![hi]! * eb];
  }

  /** X.next becomes X; a sparse result read in another layout is permuted into it (on the host). */
  private afterOp(slot: Slot, o: WasmOp, outKey: string, t: Traffic): void | Promise<void> {
    let key = outKey;
    if (outKey.endsWith('.next')) {
      key = outKey.slice(0, -5);
      const a = this.valueOf(slot, key);
      const b = this.valueOf(slot, outKey);
      slot.values.set(key, b);
      slot.values.set(outKey, a);
    }
    slot.defined.add(o.result);
    const others = this.L.otherLayouts(o, (k) => slot.prep!.regions.has(k));
    if (others.length === 0) return;
    return (async () => {
      const src = this.valueOf(slot, key);
      await this.mover.ensure(src, HOST, 0, src.bytes, t);
      const pat = slot.prep!.patterns.get(this.manifest.roots[o.result] ?? o.result)!;
      for (const x of others) {
        const dst = this.valueOf(slot, x.key);
        permuteValues(pat, x.from, x.to, src.hostData(), this.mover.copyAt(dst, HOST).data!);
        dst.written(HOST, [[0, dst.bytes]]);
      }
    })();
  }

  /** The slot's results as runtime tensors (every result is on the host once its last stage ran). */
  async collect(slot: Slot): Promise<Map<string, Tensor>> {
    const prep = slot.prep!;
    const t: Traffic = { inBytes: 0, outBytes: 0 };
    const outputs = new Map<string, Tensor>();
    for (const r of this.manifest.results) {
      if (!slot.defined.has(r.name))
        this.L.fail(
          `kernel ${this.manifest.kernel}`,
          `'${r.name}' was never computed: the repeat that assigns it ran zero times`,
        );
      const v = this.valueOf(slot, this.resultKey(r.name));
      await this.mover.ensure(v, HOST, 0, v.bytes, t);
      outputs.set(
        r.name,
        this.L.readResult(r.name, r.type, prep.dims, prep.patterns, (k) => this.valueOf(slot, k).hostData()),
      );
    }
    return outputs;
  }

  /** Frees the device memory of values on instances outside `keep` (after a switch to a partition that does not use them). */
  retain(keep: ReadonlySet<string>, slots: readonly Slot[]): void {
    const drop = (loc: string): boolean => keep.has(loc);
    for (const list of this.params.values()) for (const e of list) e.value.freeDevices(this.places, drop);
    for (const s of slots) for (const v of s.values.values()) v.freeDevices(this.places, drop);
  }

  close(slots: readonly Slot[]): void {
    this.retain(new Set(), slots);
  }
}

function opsOf(steps: readonly WasmStep[]): string[] {
  return steps.flatMap((s) => (s.kind === 'op' ? [s.op] : opsOf(s.body)));
}

/**
 * The pattern figures launch() takes after an op's sizes (runtime/native/abi.ts PATTERN_FIGURES): the
 * longest row and column from whichever groupings the layout built (0, "not known", for one it did not),
 * an O(rows) pass kept with the pattern, which is itself kept while its tensor is.
 */
function patternFigures(p: Pattern | undefined): number[] {
  if (!p) return [0, 0, 0, 0, 0];
  let f = FIGURES.get(p);
  if (!f) {
    const run = (g: { ptr: Int32Array } | undefined): number => (g ? longestRun(g.ptr) : 0);
    f = [p.rows, p.cols, p.ri.length, run(p.groups.csr), run(p.groups.csc)];
    FIGURES.set(p, f);
  }
  return f;
}

const FIGURES = new WeakMap<Pattern, number[]>();
