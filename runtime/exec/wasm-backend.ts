/**
 * The wasm backend of the stage engine: this machine's CPU running the
 * kernel's wasm module (codegen/wasm) op by op over buffers in one
 * WebAssembly.Memory, an op's parallel loop split across worker threads by
 * rows balanced by stored entries (runtime/wasm/threads.ts), and an op with
 * a spread form run in it where its gathered buffers reach the threshold
 * and most of its entries gather rows far from their own
 * (runtime/wasm/spread.ts), exactly as the whole-kernel executor does. One
 * device (the host CPU); copies in and out are plain memory copies.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { cpuImplOf, MIN_SPLIT_ROWS } from '../catalogue/index.js';
import { InputError } from '../errors.js';
import { fsReason } from '../io/files.js';
import { parseProjectJson } from '../native/project.js';
import { bytesOf, view } from '../wasm/layout.js';
import type { WasmBuffer, WasmManifest, WasmOp } from '../wasm/manifest.js';
import { instantiateKernel } from '../wasm/instantiate.js';
import {
  gatheredBuffers,
  hostSpreadFromBytes,
  spreadPays,
  spreadThreshold,
  type GatherPattern,
} from '../wasm/spread.js';
import { chunkCuts, type WasmThreadPool } from '../wasm/threads.js';
import { DeviceCallError, type BuiltFrom, type CallOptions, type DeviceBuffer, type StageBackend } from './backend.js';
import { Heap } from './heap.js';

const PAGE = 65536;

interface WasmBuf extends DeviceBuffer {
  readonly offset: number;
  freed: boolean;
}

type OpFn = (...args: number[]) => void;

export class WasmStageBackend implements StageBackend {
  readonly name = 'wasm' as const;
  readonly kind = 'cpu' as const;
  readonly deviceCount = 1;
  readonly queues = false;
  private readonly heap = new Heap();
  private readonly fns: OpFn[];
  /** Per op, its spread form (WasmOp.spread) where it has one and the threshold is finite, and the buffers it gathers. */
  private readonly spreadFns: (OpFn | undefined)[];
  private readonly gathered: number[][];

  private constructor(
    readonly manifest: WasmManifest,
    private readonly memory: WebAssembly.Memory,
    instance: WebAssembly.Instance,
    private pool: WasmThreadPool | undefined,
    private readonly spreadFrom: number,
    readonly builtFrom: BuiltFrom | undefined,
  ) {
    const fnOf = (name: string): OpFn => {
      const fn = instance.exports[name];
      if (typeof fn !== 'function') throw new Error(`wasm backend: the module exports no function '${name}'`);
      return fn as OpFn;
    };
    this.fns = manifest.ops.map((o) => fnOf(o.export));
    this.spreadFns = manifest.ops.map((o) =>
      o.spread && Number.isFinite(spreadFrom) ? fnOf(o.spread.export) : undefined,
    );
    this.gathered = manifest.ops.map((o) => gatheredBuffers(o, 'wasm backend'));
  }

  /** `spreadFromBytes`: as the whole-kernel executor's (WasmExecutorOptions), default twice the host's L2. */
  static async create(
    binary: Uint8Array,
    manifest: WasmManifest,
    opts: { threads?: number; spreadFromBytes?: number; builtFrom?: BuiltFrom } = {},
  ): Promise<WasmStageBackend> {
    const spreadFrom = spreadThreshold(opts.spreadFromBytes, hostSpreadFromBytes(), 'wasm backend');
    const { memory, instance, pool } = await instantiateKernel(binary, manifest, opts.threads ?? 1, 'wasm backend');
    return new WasmStageBackend(manifest, memory, instance, pool, spreadFrom, opts.builtFrom);
  }

  /** Whether op `handle` runs its spread form over these buffers: its gathered buffers' bytes reach the threshold. */
  private spreads(handle: number, buffers: readonly DeviceBuffer[], sizes: readonly number[], rows: number): boolean {
    if (!this.spreadFns[handle]) return false;
    const gathered = this.gathered[handle]!;
    return spreadPays(
      gathered,
      (q) => buffers[q]!.bytes,
      this.spreadFrom,
      () => this.gatherPattern(this.manifest.ops[handle]!, gathered, buffers, sizes, rows),
    );
  }

  /**
   * The pattern the op's row loop walks, read from its buffers: `rows` pointers and the indices of the rows
   * it gathers, whose count is the first gathered operand's first dim (from the sizes, else from its bytes
   * over its row's). Undefined where the buffers or sizes do not say.
   */
  private gatherPattern(
    o: WasmOp,
    gathered: readonly number[],
    buffers: readonly DeviceBuffer[],
    sizes: readonly number[],
    rows: number,
  ): GatherPattern | undefined {
    const bal = o.balanceBy;
    if (!bal || rows <= 0 || gathered.length === 0) return undefined;
    const p = this.balanceBuffer(o, bal.layout === 'csr' ? 'rowPtr' : 'colPtr');
    const i = this.balanceBuffer(o, bal.layout === 'csr' ? 'colIdx' : 'rowIdx');
    if (p < 0 || i < 0) return undefined;
    const P = buffers[p] as WasmBuf;
    const I = buffers[i] as WasmBuf;
    const w = bytesOf('index');
    if (P.bytes < (rows + 1) * w) return undefined;
    const dim = (d: string | number | undefined): number | undefined =>
      typeof d === 'number' ? d : d === undefined ? undefined : sizes[o.sizes.indexOf(d)];
    const g = o.buffers[gathered[0]!]!;
    const shape = this.manifest.values[g.of]?.shape ?? [];
    let gatheredRows = dim(shape[0]);
    if (gatheredRows === undefined && shape.length > 1) {
      let row = bytesOf(g.elem);
      for (const d of shape.slice(1)) row *= dim(d) ?? NaN;
      gatheredRows = Math.floor(buffers[gathered[0]!]!.bytes / row);
    }
    if (!(gatheredRows! > 0)) return undefined;
    const ptr = view(this.memory.buffer, 'index', P.offset, rows + 1) as Int32Array;
    const idx = view(this.memory.buffer, 'index', I.offset, Math.floor(I.bytes / w)) as Int32Array;
    return { ptr, at: (q) => idx[q] ?? NaN, gatheredRows: gatheredRows! };
  }

  get threads(): number {
    return this.pool?.threads ?? 1;
  }

  deviceName(): string {
    return `this CPU (wasm, ${this.threads} thread${this.threads === 1 ? '' : 's'})`;
  }

  alloc(dev: number, bytes: number): DeviceBuffer {
    if (dev !== 0) throw new DeviceCallError('wasm', 'alloc', -4, `no device ${dev} (the wasm backend has one)`);
    const offset = this.heap.alloc(bytes);
    const need = Math.ceil(this.heap.end / PAGE);
    const have = this.memory.buffer.byteLength / PAGE;
    if (need > have) {
      if (need > this.manifest.maxPages) {
        this.heap.free(offset);
        throw new DeviceCallError(
          'wasm',
          'alloc',
          -5,
          `${bytes} bytes do not fit: wasm memory holds at most ${this.manifest.maxPages * PAGE} bytes`,
          true,
        );
      }
      this.memory.grow(need - have);
    }
    const b: WasmBuf = { dev, bytes, offset, freed: false };
    return b;
  }

  free(buf: DeviceBuffer): void {
    const b = buf as WasmBuf;
    if (b.freed) return;
    b.freed = true;
    this.heap.free(b.offset);
  }

  private bytesView(b: WasmBuf, offset: number, bytes: number): Uint8Array {
    if (b.freed) throw new DeviceCallError('wasm', 'access', -6, 'the buffer was freed');
    if (offset < 0 || offset + bytes > b.bytes)
      throw new DeviceCallError(
        'wasm',
        'access',
        -6,
        `bytes [${offset}, ${offset + bytes}) lie outside a buffer of ${b.bytes}`,
      );
    return new Uint8Array(this.memory.buffer, b.offset + offset, bytes);
  }

  async upload(dst: DeviceBuffer, offset: number, src: ArrayBufferView): Promise<void> {
    this.bytesView(dst as WasmBuf, offset, src.byteLength).set(
      new Uint8Array(src.buffer, src.byteOffset, src.byteLength),
    );
  }

  async download(src: DeviceBuffer, offset: number, dst: ArrayBufferView): Promise<void> {
    new Uint8Array(dst.buffer, dst.byteOffset, dst.byteLength).set(
      this.bytesView(src as WasmBuf, offset, dst.byteLength),
    );
  }

  async copy(dst: DeviceBuffer, dstOffset: number, src: DeviceBuffer, srcOffset: number, bytes: number): Promise<void> {
    this.bytesView(dst as WasmBuf, dstOffset, bytes).set(this.bytesView(src as WasmBuf, srcOffset, bytes));
  }

  lookup(kernel: string, op: string, impl: string): number {
    const i = this.manifest.ops.findIndex((o) => o.op === op);
    if (kernel !== this.manifest.kernel || i < 0)
      throw new DeviceCallError(
        'wasm',
        'lookup',
        -3,
        `the wasm module of kernel ${this.manifest.kernel} has no op ${kernel}.${op}`,
      );
    const have = cpuImplOf(this.manifest.ops[i]!);
    if (impl !== have)
      throw new DeviceCallError('wasm', 'lookup', -3, `op ${op} of ${kernel} runs as ${have} on the CPU, not ${impl}`);
    return i;
  }

  implementations(kernel: string, op: string): string[] {
    const o = this.manifest.ops.find((x) => x.op === op);
    return kernel === this.manifest.kernel && o ? [cpuImplOf(o)] : [];
  }

  async launch(
    dev: number,
    handle: number,
    buffers: readonly DeviceBuffer[],
    sizes: readonly number[],
    lo: number,
    hi: number,
    opts?: CallOptions,
  ): Promise<void> {
    const o = this.manifest.ops[handle];
    if (dev !== 0 || !o) throw new DeviceCallError('wasm', 'launch', -3, `no op ${handle} on device ${dev}`);
    if (buffers.length !== o.buffers.length)
      throw new DeviceCallError(
        'wasm',
        'launch',
        -1,
        `op ${o.op} takes ${o.buffers.length} buffers, got ${buffers.length}`,
      );
    for (const b of buffers)
      if ((b as WasmBuf).freed) throw new DeviceCallError('wasm', 'launch', -6, `op ${o.op}: a buffer was freed`);
    const args = [...buffers.map((b) => (b as WasmBuf).offset), ...sizes.slice(0, o.sizes.length)];
    const rows =
      o.splittable && o.splitRange !== undefined
        ? typeof o.splitRange === 'number'
          ? o.splitRange
          : (sizes[o.sizes.indexOf(o.splitRange)] ?? 0)
        : 0;
    const spread = this.spreads(handle, buffers, sizes, rows);
    const fn = spread ? this.spreadFns[handle]! : this.fns[handle]!;
    const end = hi < 0 ? rows : Math.min(hi, rows);
    const threads = Math.min(this.pool?.threads ?? 1, opts?.threads ?? Infinity);
    if (this.pool && threads > 1 && end - lo >= MIN_SPLIT_ROWS) {
      const ptr = this.balancePointers(o, buffers, lo, end);
      const cuts = chunkCuts(end - lo, threads, ptr).map((c) => c + lo);
      this.pool.run(spread ? o.spread!.export : o.export, args, cuts, (a, b) => fn(...args, a, b), threads);
    } else fn(...args, lo, hi < 0 ? 0x7fffffff : hi);
  }

  /** The position in the op's buffers of the `role` buffer of the pattern its split balances by (-1: none). */
  private balanceBuffer(o: WasmOp, role: WasmBuffer['role']): number {
    const root = o.balanceBy?.root;
    return o.buffers.findIndex((b) => b.role === role && (this.manifest.roots[b.of] ?? b.of) === root);
  }

  /** Row pointers [lo, hi] of the pattern the op's split balances by (undefined: by rows). */
  private balancePointers(o: WasmOp, buffers: readonly DeviceBuffer[], lo: number, hi: number): Int32Array | undefined {
    if (!o.balanceBy) return undefined;
    const i = this.balanceBuffer(o, o.balanceBy.layout === 'csr' ? 'rowPtr' : 'colPtr');
    if (i < 0) return undefined;
    const b = buffers[i] as WasmBuf;
    return view(this.memory.buffer, 'index', b.offset + lo * bytesOf('index'), hi - lo + 1) as Int32Array;
  }

  async sync(): Promise<void> {}

  close(): void {
    this.pool?.close();
    this.pool = undefined;
  }
}

/** Loads `<dir>/<kernel>.wasm` and its manifest (the wasm target's output). */
export async function wasmStageBackendFromDir(
  dir: string,
  kernel: string,
  opts: { threads?: number; builtFrom?: BuiltFrom } = {},
): Promise<WasmStageBackend> {
  const read = (f: string): Buffer => {
    try {
      return readFileSync(join(dir, f));
    } catch (e) {
      throw new InputError(
        'DY3043',
        join(dir, f),
        undefined,
        `cannot read the compiled kernel: ${fsReason(e)} (build it with dype compile --targets wasm)`,
      );
    }
  };
  const binary = read(`${kernel}.wasm`);
  const manifestPath = join(dir, `${kernel}.manifest.json`);
  const manifest = parseProjectJson(
    read(`${kernel}.manifest.json`).toString('utf8'),
    manifestPath,
    'a wasm kernel manifest',
  ) as WasmManifest;
  return WasmStageBackend.create(new Uint8Array(binary), manifest, opts);
}
