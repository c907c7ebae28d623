/**
 * The XRT build of the FPGA host (-DDYPE_XRT: what `make sw_emu | hw_emu | hw` builds) and of the ABI
 * library (`make xrt-lib`), against test/hls/xrt-shim: XRT's buffer model on the CPU (a host copy and a
 * card copy per buffer object, `sync` between them, kernels that see only the card copies), the kernels
 * being the C-simulation functions. There is no XRT here; this is what checks that the XRT path compiles,
 * moves to the card what the kernels read and reads back what they write: each example's XRT host gives
 * the C simulation's output bit for bit on a real matrix. gcn, pagerank and attention between them have
 * every design (spmv, spmm, sddmm, gemm, stream, generic). PageRank's repeat trips find its packed matrix
 * on the card (hls-templates/host/dype_xrt.h keep_on_card): it crosses the link once, not once a trip.
 * Skipped when the data directory or g++ is absent.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  eachProject,
  HAVE_DATA,
  HAVE_GXX,
  MATRIX_DIR,
  exampleInputs,
  exampleKernel,
  hostArgs,
  loadCsr,
} from './example-data.js';

const RUN = HAVE_DATA && HAVE_GXX;
const EXAMPLES = ['gcn', 'pagerank', 'attention'];
const SHIM = join(import.meta.dirname, 'xrt-shim');
const run = promisify(execFile);

const work = mkdtempSync(join(tmpdir(), 'dype-xrt-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** The test's source around the host program: the shim's kernel calls, dispatched by name to the C-simulation functions. */
function fixture(ex: string, kernels: string[]): string {
  return [
    `#include "host/${ex}_host.cpp"`,
    '#include <stdexcept>',
    '#include <type_traits>',
    'template <typename... A>',
    'void xrt_shim_call(const std::string& kernel, A... args) {',
    ...kernels.map(
      (k) =>
        `  if constexpr (std::is_invocable_v<decltype(${k}), A...>) if (kernel == "${k}") return (void)${k}(args...);`,
    ),
    '  throw std::runtime_error("xrt shim: no kernel " + kernel + " takes these arguments");',
    '}',
    '',
  ].join('\n');
}

const hosts = new Map<string, { csim: string; xrt: string }>();
beforeAll(async () => {
  if (!RUN) return;
  await eachProject(EXAMPLES, work, async (ex, proj) => {
    const kernels = readdirSync(proj).filter((d) => new RegExp(`^${ex}_op\\d+$`).test(d));
    writeFileSync(join(proj, 'xrt_fixture.cpp'), fixture(ex, kernels));
    const inc = ['-Icsim', '-Ihost', ...kernels.map((k) => `-I${k}`), `-I${SHIM}`];
    const flags = ['-std=c++17', '-O1', '-Wno-unknown-pragmas', '-Wno-unused-label', '-DDYPE_XRT', ...inc];
    await run('make', ['-s', '-C', proj, `build/csim/${ex}_host`], { timeout: 300_000 });
    await run(
      'g++',
      [...flags, '-o', 'xrt_host', 'xrt_fixture.cpp', ...kernels.map((k) => `${k}/${k}.cpp`), '-pthread'],
      {
        cwd: proj,
        timeout: 300_000,
      },
    );
    // The ABI library's XRT build: compiled (its launches are the host's; the kernels come from the xclbin).
    await run('g++', [...flags, '-fsyntax-only', `host/${ex}_fpga_abi.cpp`], { cwd: proj, timeout: 300_000 });
    hosts.set(ex, { csim: join(proj, 'build', 'csim', `${ex}_host`), xrt: join(proj, 'xrt_host') });
  });
}, 600_000);

describe.skipIf(!RUN)('the XRT host and ABI library over an XRT stand-in', () => {
  for (const ex of EXAMPLES)
    it(`${ex}: compiles, and gives the C simulation's output bit for bit`, { timeout: 120_000 }, async () => {
      const { csim, xrt } = hosts.get(ex)!;
      const dir = join(work, `${ex}-run`);
      mkdirSync(dir, { recursive: true });
      const file = 'jazz.mtx';
      const { files, params } = exampleInputs(ex, loadCsr(file), dir, join(MATRIX_DIR, file));
      const { out } = exampleKernel(ex);
      await run(csim, hostArgs(files, params, out, join(dir, 'csim.mtx')), { timeout: 120_000 });
      const r = await run(xrt, hostArgs(files, params, out, join(dir, 'xrt.mtx')), {
        timeout: 120_000,
        env: { ...process.env, DYPE_XCLBIN: 'shim.xclbin' },
      });
      expect(r.stderr).toMatch(/on the FPGA/);
      expect(readFileSync(join(dir, 'xrt.mtx'), 'utf8')).toBe(readFileSync(join(dir, 'csim.mtx'), 'utf8'));
      if (ex === 'pagerank') {
        // The SpMV inside the repeat: its packed matrix moves on the first trip and is found on the card after.
        const runs = /(pagerank_op\d+): (\d+) runs, \d+ scheduled stream cycles/.exec(r.stderr);
        const card =
          /(pagerank_op\d+): packed matrix (\d+) bytes moved to the card, (\d+) bytes found there already/.exec(
            r.stderr,
          );
        expect(runs && card, r.stderr).toBeTruthy();
        expect(card![1]).toBe(runs![1]);
        const trips = Number(runs![2]);
        expect(trips).toBeGreaterThan(5);
        expect(Number(card![3])).toBe(Number(card![2]) * (trips - 1));
      }
    });
});
