/**
 * What the generated HLS projects must declare for real hardware, which C
 * simulation cannot see (issue 17): the accumulator's read-add-write
 * dependence at the distance the host packer keeps, derived from the pinned
 * adder and memory latencies in one place; a co-simulation depth on every
 * m_axi port; the write-back bounded by the tile's rows over a widened port;
 * set_part and each design's own clock; and a project that does not fit its
 * card refused (DY6207). Structural checks on the emitted text, no g++:
 * test/hls/csim.test.ts runs the same projects against the interpreter.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { compileProgram } from '../../cli/compile.js';
import { emitHlsProject } from '../../codegen/hls/project.js';
import { DEFAULT_PLATFORM } from '../../codegen/hls/view-model.js';
import { DiagnosticError } from '../../ir/diagnostics.js';
import {
  FPGA_DESIGN_DEFAULTS,
  FPGA_UNIT_COSTS,
  accSpacing,
  fpgaDesignResources,
  fpgaProjectResources,
  resourceOverflow,
} from '../../runtime/plan/fpga-designs.js';
import { example } from '../helpers/cli.js';

type Files = Awaited<ReturnType<typeof emitHlsProject>>;
const projects = new Map<string, Files>();
async function project(ex: string): Promise<Files> {
  if (!projects.has(ex)) {
    const { program } = compileProgram(example(`${ex}.dy`));
    projects.set(ex, await emitHlsProject({ ...program, file: `examples/${ex}.dy` }));
  }
  return projects.get(ex)!;
}
const text = (files: Files, path: string): string => {
  const t = files.get(path);
  if (t === undefined) throw new Error(`no ${path} in the project`);
  return String(t);
};

describe('generated HLS designs declare what hardware needs', () => {
  it('the accumulator hazard: dependent=true at the packer spacing, adder and URAM latencies pinned', async () => {
    const c = FPGA_DESIGN_DEFAULTS.spmv;
    expect(c.addLatency).toBe(accSpacing(c.faddLatency, c.accReadLatency));
    expect(FPGA_DESIGN_DEFAULTS.spmm.addLatency).toBe(c.addLatency);
    for (const [ex, op, adds] of [
      ['spmv', 'spmv_op0', true],
      ['sssp', 'sssp_op2', false],
    ] as const) {
      const files = await project(ex);
      const cpp = text(files, `${op}/${op}.cpp`);
      const h = text(files, `${op}/${op}.h`);
      const launch = text(files, `${op}/${op}_launch.h`);
      // The accumulator's chain is never declared away (the window halves' independence is real).
      expect(cpp).not.toMatch(/variable=acc[^\n]*dependent=false/);
      expect(cpp).toContain('#pragma HLS DEPENDENCE variable=win_');
      expect(cpp).toContain(
        `#pragma HLS DEPENDENCE variable=acc type=inter direction=RAW dependent=true distance=${op}_ADD_LATENCY`,
      );
      expect(cpp).toMatch(new RegExp(`BIND_STORAGE variable=acc type=ram_2p impl=uram latency=${c.accReadLatency}\\b`));
      expect(h).toContain(`#define ${op}_FADD_LATENCY ${c.faddLatency}`);
      expect(h).toContain(`#define ${op}_ACC_READ_LATENCY ${c.accReadLatency}`);
      expect(h).toContain(`#define ${op}_ADD_LATENCY (${op}_ACC_READ_LATENCY + ${op}_FADD_LATENCY + 1)`);
      // The host spaces equal slots by the kernel's own macro, not a number of its own.
      expect(launch).toMatch(new RegExp(`cached_pack\\(pack_cache, [^;]*, ${op}_ADD_LATENCY, ${op}_SHARE\\);`));
      // Shared long rows: the parts' running sums are taken up again no sooner than the chain allows.
      expect(h).toContain(`#define ${op}_SHARE ${c.sharedRows}`);
      expect(cpp).toContain(
        `#pragma HLS DEPENDENCE variable=part type=inter direction=RAW dependent=true distance=${op}_ADD_LATENCY`,
      );
      expect(cpp).toContain(`const int32_t n_fold = n_share > ${op}_ADD_LATENCY ? n_share : ${op}_ADD_LATENCY;`);
      const bind = `#pragma HLS BIND_OP variable=sum op=fadd impl=fulldsp latency=${op}_FADD_LATENCY`;
      if (adds) expect(cpp).toContain(bind);
      else expect(cpp).not.toContain('BIND_OP');
    }
  });

  it('over XRT the sparse-rows output comes back from the card (at once, or when read through the ABI library) and never goes to it (the write-back writes every row); buffers and kernel handle are kept per card', async () => {
    for (const [ex, op, out] of [
      ['spmv', 'spmv_op0', 'b_y'],
      ['spmm', 'spmm_op0', 'b_Y'],
      ['pagerank', 'pagerank_op2', 'b_r_next'],
    ] as const) {
      const launch = text(await project(ex), `${op}/${op}_launch.h`);
      expect(launch, op).toContain(`xrt::bo& bo_${out} = dype::output_on_card(card, `);
      // The kernel's handle is the card's, opened at its first launch there, not one a call.
      expect(launch, op).toContain(`xrt::kernel& krn = dype::kernel_of(card, X, "${op}");`);
      expect(launch, op).not.toContain('xrt::kernel krn(');
      expect(launch, op).toMatch(
        new RegExp(`if \\(w_hi > w_lo\\) dype::output_back\\(card, \\d+, X, const_cast<\\w+\\*>\\(${out}\\)`),
      );
      expect(launch, op).not.toContain(`bo_${out}.write(`);
      expect(launch, op).not.toContain(`bo_${out}.sync(XCL_BO_SYNC_BO_TO_DEVICE`);
    }
    // The other designs still send their outputs (their writes are not known to cover the range).
    const copy = text(await project('pagerank'), 'pagerank_op0/pagerank_op0_launch.h');
    expect(copy).toContain('bo_b_r.sync(XCL_BO_SYNC_BO_TO_DEVICE');
  });

  it('the write-back covers only the tile rows, YW rows a cycle over a widened port', async () => {
    for (const [ex, op, design] of [
      ['spmv', 'spmv_op0', 'spmv'],
      ['spmm', 'spmm_op0', 'spmm'],
    ] as const) {
      const files = await project(ex);
      const cpp = text(files, `${op}/${op}.cpp`);
      const c = FPGA_DESIGN_DEFAULTS[design];
      expect(text(files, `${op}/${op}.h`)).toContain(`#define ${op}_YW ${c.yPerCycle}`);
      expect(c.yPerCycle * (design === 'spmm' ? c.lanes : 1) * 32).toBe(512);
      expect(cpp).toContain(`for (int32_t g = 0; g < (tile_n + ${op}_YW - 1) / ${op}_YW; g++) {`);
      expect(cpp).toContain(`for (int32_t s = 0; s < tile_slots; s++) {`);
      expect(cpp).not.toMatch(new RegExp(`s < ${op}_ROW_SLOTS`));
      const out = /port=(b_\w+) bundle=\w+ offset=slave depth=\d+( max_widen_bitwidth=512)?/g;
      const ports = [...cpp.matchAll(out)].map((m) => [m[1], m[2] !== undefined] as const);
      expect(ports.length).toBeGreaterThan(1);
      expect(ports.every(([, wide]) => wide)).toBe(true);
    }
  });

  it('one dataflow process per HBM channel, each m_axi port read or written by one process', async () => {
    for (const [ex, op, design] of [
      ['spmv', 'spmv_op0', 'spmv'],
      ['spmm', 'spmm_op0', 'spmm'],
      ['sssp', 'sssp_op2', 'spmv'],
      ['gcn', 'gcn_op1', 'spmm'],
    ] as const) {
      const cpp = text(await project(ex), `${op}/${op}.cpp`);
      const CH = FPGA_DESIGN_DEFAULTS[design].channels;
      const top = cpp.slice(cpp.indexOf(`extern "C" void ${op}(`));
      const calls = [...top.matchAll(new RegExp(`^  (${op}_\\w+(?:<\\d+>)?)\\(([^;]*)\\);$`, 'gm'))].map((m) => ({
        fn: m[1]!,
        args: m[2]!.split(', '),
      }));
      // Meta, a reader and a compute process per channel, the window loader, the write-back.
      const computes = calls.filter((c) => c.fn.startsWith(`${op}_compute<`)).map((c) => c.fn);
      expect(computes, op).toEqual(Array.from({ length: CH }, (_, ch) => `${op}_compute<${ch}>`));
      expect(cpp, op).toContain(`template <int CH_ID>\nstatic void ${op}_compute(`);
      expect(calls.map((c) => c.fn).filter((f) => !computes.includes(f) && !/_read_\d+$/.test(f))).toEqual([
        `${op}_meta`,
        `${op}_load`,
        `${op}_write`,
      ]);
      // A channel's process holds its PEs' accumulators and window copies only, and reads only its own streams.
      expect(cpp, op).toMatch(new RegExp(`static \\w+ acc\\[${FPGA_DESIGN_DEFAULTS[design].pesPerChannel}\\]`));
      for (let ch = 0; ch < CH; ch++)
        expect(calls.find((c) => c.fn === `${op}_compute<${ch}>`)!.args.slice(0, 3), op).toEqual([
          `len_s[${ch}]`,
          `share_s[${ch}]`,
          `nz_s[${ch}]`,
        ]);
      const ports = [...top.matchAll(/port=(\w+) bundle=(\w+)/g)].map((m) => [m[1]!, m[2]!] as const);
      for (const [port] of ports) {
        const users = calls.filter((c) => c.args.includes(port)).map((c) => c.fn);
        expect(users, `${op} ${port}`).toHaveLength(1);
      }
      expect(new Set(ports.map(([, b]) => b)).size, op).toBe(ports.length);
    }
    // SSSP's epilogue min(d[i], acc) reads the window's buffer again: through a port of its own, from the write-back.
    const sssp = text(await project('sssp'), 'sssp_op2/sssp_op2.cpp');
    expect(sssp).toContain('port=ep_d bundle=hbmep_d');
    expect(sssp).toContain('b_d_next[row] = dype_min<float>(ep_d[row], acc_v);');
    expect(sssp).toMatch(/sssp_op2_load\(b_d, /);
    expect(sssp).toMatch(/sssp_op2_write\(res_s, share_w, part_s, b_d_next, ep_d, /);
    expect(text(await project('sssp'), 'connectivity_sssp.cfg')).toMatch(/sp=sssp_op2_1\.ep_d:HBM\[\d+\]/);
  });

  it('every m_axi port of every kernel has a co-simulation depth', async () => {
    for (const ex of ['gcn', 'attention', 'pagerank']) {
      const files = await project(ex);
      for (const [path, t] of files) {
        if (!/^(\w+)\/\1\.cpp$/.test(path) || path.startsWith('host/')) continue;
        const maxi = String(t)
          .split('\n')
          .filter((l) => l.includes('mode=m_axi'));
        expect(maxi.length, path).toBeGreaterThan(0);
        for (const l of maxi) expect(l, path).toMatch(/ depth=\d+/);
      }
    }
  });

  it('kernels whose names differ only in case get headers with their own include guards', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'dype-hls-case-'));
    try {
      const spmv = readFileSync(example('spmv.dy'), 'utf8');
      const file = join(dir, 'case.dy');
      writeFileSync(file, `${spmv.replace('kernel spmv', 'kernel P')}\n${spmv.replace('kernel spmv', 'kernel p')}`);
      const files = await emitHlsProject(compileProgram(file).program);
      const guards = ['P_op0/P_op0.h', 'p_op0/p_op0.h'].map((h) => /#ifndef (\w+)/.exec(text(files, h))![1]);
      expect(guards).toEqual(['DYPE_KERNEL_P_op0_H', 'DYPE_KERNEL_p_op0_H']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("run_hls.tcl sets the card's part and each design's own clock", async () => {
    const files = await project('gcn');
    const ops = JSON.parse(text(files, 'estimates.json')).kernels as Record<
      string,
      { design: string; clockMHz: number }
    >;
    const clocks = new Set<number>();
    for (const [op, est] of Object.entries(ops)) {
      const tcl = text(files, `${op}/run_hls.tcl`);
      expect(tcl).not.toContain('get_platform');
      expect(tcl).toContain(`set_part ${DEFAULT_PLATFORM.part}`);
      expect(est.clockMHz).toBe(FPGA_DESIGN_DEFAULTS[est.design as 'spmm' | 'gemm'].clockMHz);
      expect(tcl).toContain(`create_clock -period ${(1000 / est.clockMHz).toFixed(3)} -name default`);
      expect(text(files, `${op}/hls_config.cfg`)).toContain(`clock=${est.clockMHz}MHz`);
      clocks.add(est.clockMHz);
    }
    expect(clocks.size).toBe(2);
  });
});

describe('one resource table per kernel instance, the shell included', () => {
  it('counts every instance, its FIFOs and the shell once', () => {
    const spmm = fpgaDesignResources('spmm');
    const two = fpgaProjectResources([spmm, spmm]);
    expect(two.lut).toBe(FPGA_UNIT_COSTS.shell.lut + 2 * spmm.lut);
    expect(two.uram).toBe(2 * spmm.uram);
    // FIFOs are in the instance: a design with deeper streams costs more LUTs.
    const noFifo = fpgaDesignResources('spmm', { ...FPGA_DESIGN_DEFAULTS.spmm, channels: 0 });
    expect(noFifo.lut).toBeLessThan(spmm.lut);
    // The accumulators are one URAM per lane and dense lane (complete partitions): 4 x 8 x 8.
    expect(spmm.uram).toBe(4 * 8 * 8);
    expect(resourceOverflow(two, DEFAULT_PLATFORM.resources)).toBeUndefined();
  });

  it('every example project fits the U280 with its shell', async () => {
    for (const ex of ['spmv', 'spmm', 'gcn', 'attention', 'pagerank', 'sssp']) {
      const files = await project(ex);
      const ks = Object.values(JSON.parse(text(files, 'estimates.json')).kernels) as {
        resources: ReturnType<typeof fpgaDesignResources>;
      }[];
      expect(resourceOverflow(fpgaProjectResources(ks.map((k) => k.resources)), DEFAULT_PLATFORM.resources)).toBe(
        undefined,
      );
    }
  });

  it('DY6207: a project that does not fit its card is refused, naming the resource and the kernels', async () => {
    const { program } = compileProgram(example('gcn.dy'));
    const small = {
      ...DEFAULT_PLATFORM,
      name: 'half-u280',
      resources: { ...DEFAULT_PLATFORM.resources, lut: 652_000 },
    };
    const err = await emitHlsProject({ ...program, file: 'examples/gcn.dy' }, { platform: small }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(DiagnosticError);
    const d = (err as DiagnosticError).diagnostics;
    expect(d.map((x) => x.code)).toEqual(['DY6207']);
    expect(d[0]!.message).toMatch(
      /does not fit half-u280: .* need \d+ LUT, the card has 652000 \(kernels: gcn_op0 \d+/,
    );
    expect(d[0]!.span.file).toBe('examples/gcn.dy');
  });
});
