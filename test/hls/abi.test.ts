/**
 * The native ABI library of the HLS projects (host/<program>_fpga_abi.cpp,
 * `make csim-lib`), in C simulation:
 *  - every example run op by op through the ABI only (the generated
 *    <kernel>_abi_check, linked against the library): whole on one device,
 *    and with every splittable op cut into 2 and 3 nnz-balanced row ranges
 *    on different emulated devices at once, the slices all-gathered with
 *    copy(); the written result against the reference interpreter, as
 *    csim.test.ts checks the host program. Matrices: karate, cora.cites
 *    (edge list, empty rows), Erdos971 (empty rows), adder_dcop_05 (one
 *    near-dense row, so some slices are short or empty), and the rectangular
 *    lp_ship04l (42 empty rows) for spmv and spmm;
 *  - the library loaded in process with koffi, as the runtime will: its
 *    identity, exports, op table, a row range writing only its rows, and the
 *    error codes (a buffer of another device, a copy past an allocation, an
 *    unknown implementation, a range on an op that is not splittable, a
 *    design limit thrown by a launch function, sizes past 32 bits);
 *  - the XRT build (`make xrt-lib`) by `make -n` only: no XRT here.
 * Projects are built two at a time (two cores) before the runs. Skipped
 * when the data directory or g++ is absent.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import koffi from 'koffi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compileProgram } from '../../cli/compile.js';
import { programHash } from '../../codegen/native/hash.js';
import { ABI_ERRORS, ABI_FUNCTIONS, ABI_VERSION, abiPrefix, type AbiFunction } from '../../runtime/native/abi.js';
import { example, runCliAsync } from '../helpers/cli.js';
import { makeCached } from '../helpers/make-cached.js';
import {
  HAVE_DATA,
  HAVE_GXX,
  MATRIX_DIR,
  exampleInputs,
  exampleKernel,
  expectCloseToReference,
  hostArgs,
  loadCsr,
  readArray,
  referenceResult,
} from './example-data.js';

const RUN = HAVE_DATA && HAVE_GXX;
const EXAMPLES = ['spmv', 'spmm', 'gcn', 'attention', 'pagerank', 'sssp'];
const MATRICES = ['karate.mtx', 'cora.cites', 'Erdos971.mtx', 'adder_dcop_05.mtx'];
const RECT = ['lp_ship04l.mtx'];
const ANY_SHAPE = new Set(['spmv', 'spmm']);
/** Whole on device 3; two slices on devices 1 and 0; three on 5, 2 and 7. */
const SPLITS = [
  { k: 1, devices: '3' },
  { k: 2, devices: '1,0' },
  { k: 3, devices: '5,2,7' },
];

// The emulated device count the library reads once (in this process and in the checks it spawns): the default.
process.env['DYPE_EMU_DEVICES'] = '8';

const work = mkdtempSync(join(tmpdir(), 'dype-hls-abi-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** A kernel whose one op is not splittable (a reduction to a scalar: no parallel top loop). */
const NOT_SPLITTABLE = 'kernel ns(x: dense<f32>[n]) -> (s: f32) {\n  s = sum(i: x[i]);\n}\n';

const project = (ex: string): string => join(work, ex);
const lib = (ex: string): string => join(project(ex), 'build', 'lib', `lib${ex}_fpga_csim.so`);

beforeAll(async () => {
  if (!RUN) return;
  writeFileSync(join(work, 'ns.dy'), NOT_SPLITTABLE);
  const queue = [...EXAMPLES, 'ns'];
  const worker = async (): Promise<void> => {
    for (let ex = queue.shift(); ex !== undefined; ex = queue.shift()) {
      const r = await runCliAsync(['hls', ex === 'ns' ? join(work, 'ns.dy') : example(`${ex}.dy`), '-o', project(ex)], {
        timeoutMs: 60_000,
      });
      if (r.status !== 0 || r.stderr !== '') throw new Error(`dype hls ${ex}: ${r.stderr}`);
      // The library is the one `dype build --emulate` makes (csim-lib), built once in a run: test/helpers/make-cached.ts.
      const lib = await makeCached(project(ex), 'csim-lib', [`build/lib/lib${ex}_fpga_csim.so`]);
      if (lib.status !== 0) throw new Error(`${lib.cmd}\n${lib.output}`);
      if (ex === 'ns') continue;
      const check = `build/csim/${ex}_abi_check`;
      const built = await makeCached(project(ex), check, [check]);
      if (built.status !== 0) throw new Error(`${built.cmd}\n${built.output}`);
    }
  };
  await Promise.all([worker(), worker()]);
}, 400_000);

describe.skipIf(!RUN)(
  'every example through the ABI library, whole and split over emulated devices, equals the interpreter',
  () => {
    for (const ex of EXAMPLES) {
      it(ex, { timeout: 300_000 }, () => {
        const { kernel, out } = exampleKernel(ex);
        const check = join(project(ex), 'build', 'csim', `${ex}_abi_check`);
        for (const file of [...MATRICES, ...(ANY_SHAPE.has(ex) ? RECT : [])]) {
          const dir = join(work, `${ex}-${file}`);
          mkdirSync(dir, { recursive: true });
          const { files, params } = exampleInputs(ex, loadCsr(file), dir, join(MATRIX_DIR, file));
          const ref = referenceResult(kernel, out, files, params);
          for (const { k, devices } of SPLITS) {
            const outPath = join(dir, `out-${k}.mtx`);
            const r = spawnSync(
              check,
              ['--split', String(k), '--devices', devices, ...hostArgs(files, params, out, outPath)],
              { encoding: 'utf8', timeout: 120_000 },
            );
            const what = `${ex} on ${file} over ${k} device(s)`;
            expect(r.status, `${what}: ${r.stderr}`).toBe(0);
            const summary = /on device\(s\) ([\d,]+) in [\d.]+ ms: (\d+) launches, (\d+) copies/.exec(r.stderr);
            expect(summary, r.stderr).not.toBeNull();
            expect(summary![1]).toBe(devices);
            // Every op of the examples is split (their manifests say what a range writes), so every launch is one of k.
            expect(Number(summary![2]) % k, what).toBe(0);
            if (k > 1) expect(Number(summary![3]), what).toBeGreaterThan(0);
            expectCloseToReference(what, readArray(outPath), ref);
          }
        }
      });
    }

    it(
      'a split over more devices than the library emulates fails with the ABI code, not a crash',
      { timeout: 60_000 },
      () => {
        const dir = join(work, 'few-devices');
        mkdirSync(dir, { recursive: true });
        const { files, params } = exampleInputs('spmv', loadCsr('karate.mtx'), dir, join(MATRIX_DIR, 'karate.mtx'));
        const r = spawnSync(
          join(project('spmv'), 'build', 'csim', 'spmv_abi_check'),
          ['--split', '3', ...hostArgs(files, params, 'y', join(dir, 'y.mtx'))],
          {
            encoding: 'utf8',
            env: { ...process.env, DYPE_EMU_DEVICES: '2' },
          },
        );
        expect(r.status).toBe(3);
        expect(r.stderr).toContain("alloc: device 2 is not one of this library's 2 devices");
        expect(r.stderr).toContain(`(code ${ABI_ERRORS.BAD_DEVICE})`);
      },
    );
  },
);

type Abi = Record<AbiFunction, (...args: unknown[]) => unknown>;

/** The library's ABI functions bound by koffi from the prototypes the runtime will use. */
function bind(ex: string): Abi {
  const handle = koffi.load(lib(ex));
  const prefix = abiPrefix(ex, 'fpga');
  const fns = {} as Abi;
  for (const [name, proto] of Object.entries(ABI_FUNCTIONS))
    fns[name as AbiFunction] = handle.func(proto.replace(`${name}(`, `${prefix}${name}(`));
  return fns;
}

/** Device memory holding `data`, on `dev`. */
function put(abi: Abi, dev: number, data: Float32Array | Int32Array): unknown {
  const out: unknown[] = [null];
  expect(abi.alloc(dev, data.byteLength, out)).toBe(0);
  expect(abi.upload(dev, out[0], 0, data, data.byteLength, null)).toBe(0);
  return out[0];
}

function get(abi: Abi, dev: number, p: unknown, n: number): Float32Array {
  const back = new Float32Array(n);
  expect(abi.download(dev, back, p, 0, n * 4, null)).toBe(0);
  return back;
}

describe.skipIf(!RUN)('the ABI library in process (koffi)', () => {
  // A 4 x 3 SpMV with an empty row (row 1): y = A x with x = (1, 2, 3).
  const ptr = new Int32Array([0, 2, 2, 3, 5]);
  const idx = new Int32Array([0, 2, 1, 0, 1]);
  const vals = new Float32Array([1, 2, 3, 4, 5]);
  const x = new Float32Array([1, 2, 3]);
  const want = [7, 0, 6, 14];
  const SENTINEL = -99;
  const spmvSizes = [4, 4, 3, 5, 2, 0]; // m; rows, cols, nnz, longest row, longest column (0: not known)

  it('says what it is, and exports the ABI functions and nothing else', () => {
    const abi = bind('spmv');
    expect(abi.abi_version()).toBe(ABI_VERSION);
    expect(abi.program()).toBe('spmv');
    expect(abi.program_hash()).toBe(programHash(compileProgram(example('spmv.dy')).program.module));
    expect(abi.backend()).toBe('fpga-csim');
    expect(abi.device_count()).toBe(8);
    expect(abi.device_name(7)).toMatch(/emulated FPGA 7/);
    expect(abi.device_name(8)).toBeNull();
    const nm = spawnSync('nm', ['-D', '--defined-only', lib('spmv')], { encoding: 'utf8' });
    expect(nm.status, nm.stderr).toBe(0);
    const exported = nm.stdout
      .trim()
      .split('\n')
      .map((l) => l.split(/\s+/).pop())
      .sort();
    expect(exported).toEqual(
      Object.keys(ABI_FUNCTIONS)
        .map((f) => `${abiPrefix('spmv', 'fpga')}${f}`)
        .sort(),
    );
  });

  it('looks ops up by kernel, op and FPGA implementation', () => {
    const abi = bind('gcn');
    expect(['op0', 'op1', 'op2', 'op3'].map((op) => abi.op_impls('gcn', op))).toEqual([
      'systolic-gemm',
      'sextans-spmm',
      'systolic-gemm',
      'sextans-spmm',
    ]);
    expect(abi.op_impls('gcn', 'op9')).toBeNull();
    const h = abi.op_lookup('gcn', 'op1', 'sextans-spmm') as number;
    expect(h).toBe(1);
    expect([abi.op_buffer_count(h), abi.op_size_count(h)]).toEqual([5, 7]);
    expect([abi.op_buffer_count(4), abi.op_size_count(-1)]).toEqual([-1, -1]);
    expect(abi.op_lookup('gcn', 'op1', 'warp-per-row')).toBe(ABI_ERRORS.BAD_VARIANT);
    expect(abi.error_text(ABI_ERRORS.BAD_VARIANT)).toBe(
      "op_lookup: op op1 of kernel gcn is implemented as 'sextans-spmm', not 'warp-per-row'",
    );
    expect(abi.op_lookup('gcn', 'op1', 'systolic-gemm')).toBe(ABI_ERRORS.BAD_VARIANT);
    expect(abi.op_lookup('gcn', 'op7', 'systolic-gemm')).toBe(ABI_ERRORS.BAD_VARIANT);
    expect(abi.op_lookup('pagerank', 'op1', 'sextans-spmm')).toBe(ABI_ERRORS.BAD_VARIANT);
  });

  it('a row range writes its rows only; the whole range writes the rest', () => {
    const abi = bind('spmv');
    const h = abi.op_lookup('spmv', 'op0', 'serpens-spmv');
    const y = put(abi, 2, new Float32Array(4).fill(SENTINEL));
    const bufs = [put(abi, 2, ptr), put(abi, 2, idx), put(abi, 2, vals), put(abi, 2, x), y];
    expect(abi.launch(2, h, bufs, spmvSizes, 1, 3, null)).toBe(0);
    expect(Array.from(get(abi, 2, y, 4))).toEqual([SENTINEL, want[1], want[2], SENTINEL]);
    expect(abi.launch(2, h, bufs, spmvSizes, 3, -1, null)).toBe(0);
    expect(Array.from(get(abi, 2, y, 4))).toEqual([SENTINEL, ...want.slice(1)]);
    expect(abi.launch(2, h, bufs, spmvSizes, 0, -1, null)).toBe(0);
    expect(Array.from(get(abi, 2, y, 4))).toEqual(want);
    // A range past the loop is clamped to nothing.
    expect(abi.launch(2, h, bufs, spmvSizes, 9, 12, null)).toBe(0);
    for (const b of bufs) expect(abi.free(2, b)).toBe(0);

    // GEMM rows: T = X W1 over rows [1, 2) of a 3 x 2 by 2 x 2 product.
    const g = bind('gcn');
    const T = put(g, 0, new Float32Array(6).fill(SENTINEL));
    const gb = [put(g, 0, new Float32Array([1, 2, 3, 4, 5, 6])), put(g, 0, new Float32Array([1, 0, 0, 1])), T];
    expect(g.launch(0, g.op_lookup('gcn', 'op0', 'systolic-gemm'), gb, [2, 2, 3, 0, 0, 0, 0, 0], 1, 2, null)).toBe(0);
    expect(Array.from(get(g, 0, T, 6))).toEqual([SENTINEL, SENTINEL, 3, 4, SENTINEL, SENTINEL]);
  });

  it('refuses a buffer of another device, and a transfer past an allocation', () => {
    const abi = bind('spmv');
    const h = abi.op_lookup('spmv', 'op0', 'serpens-spmv');
    const onOne = put(abi, 1, x);
    const bufs = [put(abi, 0, ptr), put(abi, 0, idx), put(abi, 0, vals), onOne, put(abi, 0, new Float32Array(4))];
    expect(abi.launch(0, h, bufs, spmvSizes, 0, -1, null)).toBe(ABI_ERRORS.BAD_DEVICE);
    expect(abi.error_text(ABI_ERRORS.BAD_DEVICE)).toBe(
      'launch spmv op0: buffer 3: the memory belongs to device 1, not 0',
    );
    // The same launch is fine on device 1 once every buffer is there.
    const copies = [0, 1, 2, 4].map(() => {
      const out: unknown[] = [null];
      expect(abi.alloc(1, 32, out)).toBe(0);
      return out[0];
    });
    expect(abi.copy(1, copies[0], 0, 0, bufs[0], 0, 20, null)).toBe(0);
    expect(abi.copy(1, copies[1], 0, 0, bufs[1], 0, 20, null)).toBe(0);
    expect(abi.copy(1, copies[2], 0, 0, bufs[2], 0, 20, null)).toBe(0);
    expect(abi.launch(1, h, [copies[0], copies[1], copies[2], onOne, copies[3]], spmvSizes, 0, -1, null)).toBe(0);
    expect(Array.from(get(abi, 1, copies[3], 4))).toEqual(want);
    // x holds 12 bytes: 8 bytes from offset 8 pass its end, whichever side.
    expect(abi.copy(0, bufs[4], 0, 1, onOne, 8, 8, null)).toBe(ABI_ERRORS.RANGE);
    expect(abi.error_text(ABI_ERRORS.RANGE)).toBe(
      'copy from device 1: 8 bytes at offset 8 pass the end of a 12-byte allocation on device 1',
    );
    expect(abi.copy(1, onOne, 8, 0, bufs[4], 0, 8, null)).toBe(ABI_ERRORS.RANGE);
    expect(abi.upload(1, onOne, 4, x, 12, null)).toBe(ABI_ERRORS.RANGE);
    expect(abi.copy(1, onOne, 0, 1, onOne, 0, 12, null)).toBe(0);
    // A buffer smaller than the sizes say is a range error too, before anything runs.
    expect(abi.launch(1, h, [copies[0], copies[1], copies[2], onOne, copies[3]], [4, 4, 5, 5, 2, 0], 0, -1, null)).toBe(
      ABI_ERRORS.RANGE,
    );
    // Memory and streams of one device are not another's.
    expect(abi.free(0, onOne)).toBe(ABI_ERRORS.BAD_DEVICE);
    const s: unknown[] = [null];
    expect(abi.stream_create(1, s)).toBe(0);
    expect(abi.sync(0, s[0])).toBe(ABI_ERRORS.BAD_DEVICE);
    expect(abi.launch(1, h, [copies[0], copies[1], copies[2], onOne, copies[3]], spmvSizes, 0, -1, s[0])).toBe(0);
    expect(abi.sync(1, s[0])).toBe(0);
    expect(abi.stream_destroy(1, s[0])).toBe(0);
    expect(abi.alloc(8, 4, [null])).toBe(ABI_ERRORS.BAD_DEVICE);
  });

  it('sizes and ranges it cannot run are codes; so is what a launch function throws', () => {
    const abi = bind('spmv');
    const h = abi.op_lookup('spmv', 'op0', 'serpens-spmv');
    const bufs = [
      put(abi, 0, ptr),
      put(abi, 0, idx),
      put(abi, 0, vals),
      put(abi, 0, x),
      put(abi, 0, new Float32Array(4)),
    ];
    expect(abi.launch(0, h, bufs, [4, 4, 3, 2 ** 31, 2, 0], 0, -1, null)).toBe(ABI_ERRORS.TOO_LARGE);
    expect(abi.launch(0, h, bufs, [4, 4, 3, -5, 2, 0], 0, -1, null)).toBe(ABI_ERRORS.BAD_SIZE);
    expect(abi.launch(0, h, bufs, [5, 4, 3, 5, 2, 0], 0, -1, null)).toBe(ABI_ERRORS.BAD_SIZE);
    expect(abi.error_text(ABI_ERRORS.BAD_SIZE)).toBe('launch spmv_op0: it runs 5 rows over a pattern of 4');
    expect(abi.launch(0, h, bufs, spmvSizes, -1, -1, null)).toBe(ABI_ERRORS.RANGE);
    expect(abi.launch(0, 7, bufs, spmvSizes, 0, -1, null)).toBe(ABI_ERRORS.BAD_VARIANT);

    // The GEMM design holds an inner dimension of at most 1024.
    const g = bind('gcn');
    const big = new Float32Array(2000).fill(1);
    const gb = [put(g, 0, big), put(g, 0, big), put(g, 0, new Float32Array(1))];
    expect(g.launch(0, g.op_lookup('gcn', 'op0', 'systolic-gemm'), gb, [2000, 1, 1, 0, 0, 0, 0, 0], 0, -1, null)).toBe(
      ABI_ERRORS.BACKEND,
    );
    expect(g.error_text(ABI_ERRORS.BACKEND)).toBe(
      'kernel gcn_op0: the inner dimension is 2000; the GEMM design holds at most 1024 on chip',
    );

    // An op that is not splittable runs whole only.
    const n = bind('ns');
    const hn = n.op_lookup('ns', 'op0', 'loop-nest');
    const s = put(n, 0, new Float32Array([SENTINEL]));
    const nb = [put(n, 0, x), s];
    expect(n.launch(0, hn, nb, [3, 0, 0, 0, 0, 0], 0, 2, null)).toBe(ABI_ERRORS.UNSUPPORTED);
    expect(n.launch(0, hn, nb, [3, 0, 0, 0, 0, 0], 1, -1, null)).toBe(ABI_ERRORS.UNSUPPORTED);
    expect(Array.from(get(n, 0, s, 1))).toEqual([SENTINEL]);
    expect(n.launch(0, hn, nb, [3, 0, 0, 0, 0, 0], 0, -1, null)).toBe(0);
    expect(Array.from(get(n, 0, s, 1))).toEqual([6]);
  });
});

describe.skipIf(!RUN)('the XRT build of the ABI library (make -n: no XRT here)', () => {
  it('compiles the same source with -DDYPE_XRT against XILINX_XRT, without the kernels', () => {
    const r = spawnSync('make', ['-n', '-C', project('gcn'), 'xrt-lib', 'XILINX_XRT=/opt/xrt-test'], {
      encoding: 'utf8',
    });
    expect(r.status, r.stderr).toBe(0);
    const cmd = r.stdout.split('\n').find((l) => l.includes('libgcn_fpga.so'))!;
    expect(cmd).toBeDefined();
    for (const flag of [
      '-DDYPE_XRT',
      '-fPIC',
      '-shared',
      '-pthread',
      '-fvisibility=hidden',
      '-Wl,--version-script=host/gcn_fpga_abi.map',
      '-I/opt/xrt-test/include',
      '-L/opt/xrt-test/lib',
      '-lxrt_coreutil',
      'host/gcn_fpga_abi.cpp',
    ])
      expect(cmd.split(/\s+/)).toContain(flag);
    expect(cmd).not.toMatch(/gcn_op\d\.cpp/);
  });
});
