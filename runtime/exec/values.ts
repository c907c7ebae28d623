/**
 * Where each value lives: per region of the manifest (dense values, pattern
 * pointers and indices, sparse values), the copies of its current version,
 * on the host and on device instances, each with the byte ranges it holds
 * (a stage split over k instances leaves slices). Moving bytes goes the
 * cheapest way the backends offer: within one backend directly (peer to
 * peer), host to device, device to host, and between backends through the
 * host. Every byte moved is counted for the stage reports.
 */
import type { DeviceKind } from '../system/types.js';
import { bytesOf, type RegionSpec, type View } from '../wasm/layout.js';
import type { CallOptions, DeviceBuffer, StageBackend } from './backend.js';
import { add, missing, within, type Intervals } from './intervals.js';

/** A device instance the engine runs on: its name in the system, backend and device index. */
export interface Place {
  name: string;
  kind: DeviceKind;
  backend: StageBackend;
  dev: number;
}

interface Copy {
  buf?: DeviceBuffer;
  /** Host copies: the data. */
  data?: View;
  valid: Intervals;
}

export const HOST = 'host';

export class Value {
  readonly bytes: number;
  /** Location name (HOST or an instance) -> copy. */
  readonly copies = new Map<string, Copy>();

  constructor(
    readonly key: string,
    readonly spec: RegionSpec,
  ) {
    this.bytes = spec.length * bytesOf(spec.elem);
  }

  /** A new version was written at `at` (those byte ranges): every other copy is stale. */
  written(at: string, ranges: Intervals): void {
    for (const [loc, c] of this.copies) c.valid = loc === at ? ranges : [];
  }

  /** Adds ranges written at `at` to the current version (another slice of a split op). */
  alsoWritten(at: string, a: number, b: number): void {
    const c = this.copies.get(at)!;
    c.valid = add(c.valid, a, b);
  }

  holds(at: string, a = 0, b = this.bytes): boolean {
    const c = this.copies.get(at);
    return c !== undefined && missing(c.valid, a, b).length === 0;
  }

  hostData(): View {
    const c = this.copies.get(HOST);
    if (!c?.data) throw new Error(`internal: ${this.key} has no host copy`);
    return c.data;
  }

  /** Frees every device copy (not the host data). */
  freeDevices(places: ReadonlyMap<string, Place>, keep?: (loc: string) => boolean): void {
    for (const [loc, c] of [...this.copies]) {
      if (loc === HOST || keep?.(loc)) continue;
      if (c.buf) places.get(loc)!.backend.free(c.buf);
      this.copies.delete(loc);
    }
  }
}

/** Bytes moved, by direction, for one stage. */
export interface Traffic {
  inBytes: number;
  outBytes: number;
}

function newView(spec: RegionSpec): View {
  switch (spec.elem) {
    case 'f32':
      return new Float32Array(spec.length);
    case 'f64':
      return new Float64Array(spec.length);
    case 'i64':
      return new BigInt64Array(spec.length);
    default:
      return new Int32Array(spec.length);
  }
}

const bytesOfView = (v: View, a: number, b: number): Uint8Array => new Uint8Array(v.buffer, v.byteOffset + a, b - a);

export class Mover {
  constructor(
    private readonly places: ReadonlyMap<string, Place>,
    private readonly opts: () => CallOptions,
  ) {}

  /** The copy of `v` at `at`, allocated when missing (nothing valid in it yet). */
  copyAt(v: Value, at: string): Copy {
    let c = v.copies.get(at);
    if (c) return c;
    if (at === HOST) c = { data: newView(v.spec), valid: [] };
    else {
      const p = this.places.get(at)!;
      c = { buf: p.backend.alloc(p.dev, v.bytes), valid: [] };
    }
    v.copies.set(at, c);
    return c;
  }

  /**
   * Makes bytes [a, b) of the current version of `v` valid at `at`, taking
   * each missing piece from the nearest holder: a device of the same backend
   * (a peer copy), the host, or a device of another backend (through the host).
   */
  async ensure(v: Value, at: string, a: number, b: number, t: Traffic): Promise<void> {
    const dst = this.copyAt(v, at);
    // The common case, a resident value: one range covering it all.
    if (dst.valid.some(([x, y]) => x <= a && y >= b)) return;
    let gaps = missing(dst.valid, a, b);
    if (gaps.length === 0) return;
    const here = at === HOST ? undefined : this.places.get(at)!;
    const rank = (loc: string): number =>
      loc === HOST ? 1 : here && this.places.get(loc)!.backend === here.backend ? 0 : 2;
    const sources = [...v.copies.keys()].filter((l) => l !== at).sort((x, y) => rank(x) - rank(y));
    for (const src of sources) {
      for (const [x, y] of gaps)
        for (const [p, q] of within(v.copies.get(src)!.valid, x, y)) await this.move(v, src, at, p, q, t);
      gaps = missing(dst.valid, a, b);
      if (gaps.length === 0) return;
    }
    throw new Error(`internal: bytes [${gaps[0]![0]}, ${gaps[0]![1]}) of ${v.key} are held nowhere`);
  }

  private async move(v: Value, from: string, to: string, a: number, b: number, t: Traffic): Promise<void> {
    const src = v.copies.get(from)!;
    const dst = v.copies.get(to)!;
    const o = this.opts();
    if (from === HOST) {
      const p = this.places.get(to)!;
      await p.backend.upload(dst.buf!, a, bytesOfView(src.data!, a, b), o);
      t.inBytes += b - a;
    } else if (to === HOST) {
      const p = this.places.get(from)!;
      await p.backend.download(src.buf!, a, bytesOfView(dst.data!, a, b), o);
      t.outBytes += b - a;
    } else {
      const ps = this.places.get(from)!;
      const pd = this.places.get(to)!;
      if (ps.backend === pd.backend) {
        await pd.backend.copy(dst.buf!, a, src.buf!, a, b - a, o);
        t.inBytes += b - a;
      } else {
        // Different libraries share no address space here: staged through host memory.
        const host = this.copyAt(v, HOST);
        await ps.backend.download(src.buf!, a, bytesOfView(host.data!, a, b), o);
        host.valid = add(host.valid, a, b);
        await pd.backend.upload(dst.buf!, a, bytesOfView(host.data!, a, b), o);
        t.inBytes += b - a;
      }
    }
    dst.valid = add(dst.valid, a, b);
  }
}
