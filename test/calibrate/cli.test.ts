/**
 * `dype calibrate --quick` end to end through the built CLI: it exits 0,
 * writes a system file loadSystemFile accepts with the fitted CPU model, and
 * reports the model error on the held-out matrices at 1 and 2 threads (at 2,
 * each op on the threads the fitted model picks); `--backend` names the
 * backend timed (auto: native where the C compiler runs, as `dype run`).
 */
import { availableParallelism, totalmem } from 'node:os';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { haveCompiler } from '../helpers/cc.js';
import { snakeCase } from '../../cli/json-keys.js';
import { loadSystemFile } from '../../runtime/system/load.js';
import { runCliAsync } from '../helpers/cli.js';
import { cleanupTmp, tmp } from './tmp.js';

afterAll(cleanupTmp);

/** Keys with a lower-case letter or digit followed by a capital, anywhere in `v`. */
function camelKeys(v: unknown): string[] {
  if (Array.isArray(v)) return v.flatMap(camelKeys);
  if (v === null || typeof v !== 'object') return [];
  return Object.entries(v).flatMap(([k, x]) => [...(/[a-z0-9][A-Z]/.test(k) ? [k] : []), ...camelKeys(x)]);
}

describe('dype calibrate --quick', () => {
  it('writes a loadable system file and prints the error summary', async () => {
    const dir = tmp();
    const file = join(dir, 'm.json');
    const r = await runCliAsync(['calibrate', '--quick', '--threads', '2', '--backend', 'wasm', '-o', file], {
      timeoutMs: 90_000,
    });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/fitted on \d+ runs of the wasm backend/);
    expect(r.stdout).toMatch(/median absolute relative error [\d.]+%, worst [\d.]+%/);
    for (const m of ['bcsstk33', 'luxembourg_osm', 'ca-GrQc', 'cage8', 'adder_dcop_05']) expect(r.stdout).toContain(m);
    const sys = loadSystemFile(file);
    const cpu = sys.devices.find((d) => d.kind === 'cpu')!;
    // The hardware figures stay the preset's; the fitted model is added.
    expect(cpu.peakGflops.f64 / cpu.peakGflops.f32).toBeCloseTo(0.5, 2);
    expect(cpu.memBandwidthGBs).toBeGreaterThan(0);
    // This host's memory and name, not the preset's machine: the planner refuses inputs beyond memoryGB.
    expect(cpu.memoryGB).toBeCloseTo(totalmem() / 1e9, 1);
    const host = sys.measuredOn?.['devices[0].cpuBackendModels.wasm.cpuModel'];
    expect(host).toMatch(new RegExp(`${availableParallelism()} hardware threads, [\\d.]+ GB of memory$`));
    expect(sys.measuredOn?.['devices[0].memoryGB']).toBe(host);
    expect(sys.description).toMatch(
      /^The host CPU \(.*\)[^]*fitted the wasm backend's model and overhead, the threads and the memory on this host; the peak throughput and memory bandwidth are the preset this-machine's/,
    );
    // The preset's top-level fit is the native backend's: a wasm fit goes beside it, the native one kept.
    const preset = loadSystemFile(join(import.meta.dirname, '..', '..', 'systems', 'this-machine.json'));
    const presetCpu = preset.devices.find((d) => d.kind === 'cpu')!;
    expect(presetCpu.cpuModelBackend).toBe('native');
    expect(cpu.cpuModelBackend).toBe('native');
    expect(cpu.cpuModel).toEqual(presetCpu.cpuModel);
    expect(cpu.launchOverheadUs).toBe(presetCpu.launchOverheadUs);
    const fit = cpu.cpuBackendModels!.wasm!;
    const m = fit.cpuModel;
    expect(fit.launchOverheadUs).toBeGreaterThanOrEqual(0);
    expect(m.nsPerNnz + m.nsPerGather).toBeGreaterThan(0);
    expect(m.cacheMB).toBeGreaterThan(0);
    // The branch history in the form the model now reads first (runtime/plan/model.ts rowChangeBits), and no other.
    expect(m.branchHistoryChangeBits).toBeGreaterThan(0);
    expect(m.nsPerBranchMiss).toBeGreaterThanOrEqual(0);
    expect([m.branchHistoryBits, m.branchHistoryTrips, m.branchHistoryRows]).toEqual([undefined, undefined, undefined]);
    // Dense ops fitted too (GEMM and a map), with their error on shapes held out.
    expect(m.nsPerDenseFlop! + m.nsPerDenseByte! + m.nsPerDenseTrip!).toBeGreaterThan(0);
    // The trips are per block of the wasm kernels' columns: 4 vectors of 16 bytes (codegen/wasm/simd.ts).
    expect(m.denseBlockBytes).toBe(64);
    expect(sys.sources?.['devices[0].cpuBackendModels.wasm.cpuModel.denseBlockBytes']).toMatch(/WASM_BLOCK_BYTES/);
    expect(sys.sources?.['devices[0].cpuBackendModels.wasm.cpuModel.nsPerDenseFlop']).toMatch(
      /\(wasm GEMM and an elementwise map, f32/,
    );
    expect(r.stdout).toMatch(
      /dense ops \(GEMM, elementwise; fitted on \d+ shapes at 1 thread\): ns per flop [\d.e-]+, per byte [\d.e-]+, per loop trip [\d.e-]+ \(a block of 64 bytes of columns\)/,
    );
    expect(cpu.threads).toBe(2);
    expect(m.parallelEfficiency).toBeGreaterThanOrEqual(0);
    expect(m.parallelEfficiency).toBeLessThanOrEqual(1);
    expect(sys.sources?.['devices[0].cpuBackendModels.wasm.cpuModel']).toMatch(
      /^measured by dype calibrate on \d{4}-\d{2}-\d{2} \(wasm SpMV/,
    );
    expect(sys.sources?.['devices[0].cpuModel']).toBe(preset.sources?.['devices[0].cpuModel']);
    expect(r.stdout).toMatch(/model error on the same matrices, 2 threads:/);
    expect(readFileSync(file, 'utf8').endsWith('\n')).toBe(true);
  });

  it('--json prints one object with the fit, the rows and the error summary', async () => {
    const r = await runCliAsync(['calibrate', '--quick', '--json', '--threads', '1'], { timeoutMs: 90_000 });
    expect(r.status).toBe(0);
    const j = JSON.parse(r.stdout) as {
      fitted: {
        backend: string;
        backend_note?: string;
        threads: number;
        cpu_model: Record<string, number>;
        determined: Record<string, boolean>;
      };
      fit_rows: { kernel: string; threads: number }[];
      rows: { matrix: string; kernel: string; predicted_ms: number; measured_ms: number }[];
      error: { median_abs_rel_error: number; worst_abs_rel_error: number };
      rows_threads?: unknown;
      dense: { rows: { kernel: string; measured_ms: number; predicted_ms: number }[]; error: unknown };
      system: { devices: { cpuModel?: Record<string, number> }[] };
    };
    expect(j.dense.rows.map((r) => r.kernel)).toEqual(['gemm', 'gemm', 'map', 'map']);
    for (const r of j.dense.rows) expect(r.measured_ms > 0 && r.predicted_ms > 0).toBe(true);
    expect(j.fitted.threads).toBe(1);
    // auto, as dype run: the native library where the C compiler runs, else wasm with a note.
    expect(j.fitted.backend).toBe(haveCompiler() ? 'native' : 'wasm');
    if (j.fitted.backend === 'wasm') expect(j.fitted.backend_note).toMatch(/native backend is not available/);
    expect(j.fitted.cpu_model['parallel_efficiency']).toBeUndefined();
    expect(j.fitted.determined['parallel_efficiency']).toBe(false);
    expect(new Set(j.fit_rows.map((x) => x.kernel))).toEqual(new Set(['spmv', 'spmm16', 'spmm32', 'sddmm16']));
    expect(j.fit_rows.every((x) => x.threads === 1)).toBe(true);
    expect(j.rows.map((x) => `${x.matrix}/${x.kernel}`)).toEqual(
      ['bcsstk33', 'luxembourg_osm', 'ca-GrQc', 'cage8', 'adder_dcop_05'].flatMap((m) => [
        `${m}/spmv`,
        `${m}/spmm16`,
        `${m}/sddmm16`,
      ]),
    );
    expect(j.rows_threads).toBeUndefined();
    expect(j.error.worst_abs_rel_error).toBeGreaterThanOrEqual(j.error.median_abs_rel_error);
    // The report is snake_case like every --json output; the system file keeps its own (camelCase) format.
    const { system, ...report } = j;
    expect(camelKeys(report)).toEqual([]);
    const model = system.devices[0]!.cpuModel!;
    expect(Object.fromEntries(Object.entries(model).map(([k, v]) => [snakeCase(k), v]))).toEqual(j.fitted.cpu_model);
  });

  it('rejects a bad --threads or --backend with exit 2', async () => {
    const r = await runCliAsync(['calibrate', '--threads', '0']);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/--threads expects an integer >= 1, got '0'/);
    // Counts are plain decimal digits (Number() would read 1e3 and 0x2).
    for (const t of ['1e3', '0x2', '2.0']) {
      const x = await runCliAsync(['calibrate', '--threads', t]);
      expect(x.status, t).toBe(2);
      expect(x.stderr).toMatch(new RegExp(`--threads expects an integer >= 1, got '${t.replace('.', '\\.')}'`));
    }
    const h = await runCliAsync(['calibrate', '--history', 'h.jsonl', '--backend', 'native']);
    expect(h.status).toBe(2);
    expect(h.stderr).toMatch(/--quick, --threads and --backend do not apply/);
    const b = await runCliAsync(['calibrate', '--backend', 'reference']);
    expect(b.status).toBe(2);
    expect(b.stderr).toMatch(/--backend expects one of auto, native, wasm, got 'reference'/);
  });
});
