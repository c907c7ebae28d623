/**
 * `dype calibrate --quick` end to end through the built CLI: it exits 0,
 * writes a system file loadSystemFile accepts, and reports the model error.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadSystemFile } from '../../runtime/system/load.js';
import { runCliAsync } from '../helpers/cli.js';
import { cleanupTmp, tmp } from './tmp.js';

afterAll(cleanupTmp);

describe('dype calibrate --quick', () => {
  it('writes a loadable system file and prints the error summary', async () => {
    const dir = tmp();
    const file = join(dir, 'm.json');
    const r = await runCliAsync(['calibrate', '--quick', '-o', file], { timeoutMs: 60_000 });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/fitted on \d+ runs/);
    expect(r.stdout).toMatch(/median absolute relative error [\d.]+%, worst [\d.]+%/);
    for (const m of ['bcsstk33', 'luxembourg_osm', 'ca-GrQc', 'cage8', 'adder_dcop_05']) expect(r.stdout).toContain(m);
    const sys = loadSystemFile(file);
    const cpu = sys.devices.find((d) => d.kind === 'cpu')!;
    expect(cpu.peakGflops.f32).toBeGreaterThan(0);
    expect(cpu.peakGflops.f64 / cpu.peakGflops.f32).toBeCloseTo(0.5, 2);
    expect(cpu.memBandwidthGBs).toBeGreaterThan(0);
    expect(cpu.launchOverheadUs).toBeGreaterThan(0);
    expect(sys.sources?.['devices[0].memBandwidthGBs']).toMatch(/^measured by dype calibrate on \d{4}-\d{2}-\d{2}/);
    expect(readFileSync(file, 'utf8').endsWith('\n')).toBe(true);
  });

  it('--json prints one object with the fit, the rows and the error summary', async () => {
    const r = await runCliAsync(['calibrate', '--quick', '--json', '--threads', '1'], { timeoutMs: 60_000 });
    expect(r.status).toBe(0);
    const j = JSON.parse(r.stdout) as { fitted: { threads: number; effGflops: number }; rows: { matrix: string; predictedMs: number; measuredMs: number }[]; error: { medianAbsRelError: number; worstAbsRelError: number }; system: unknown };
    expect(j.fitted.threads).toBe(1);
    expect(j.rows.length).toBe(10);
    expect(j.error.worstAbsRelError).toBeGreaterThanOrEqual(j.error.medianAbsRelError);
    expect(j.system).toBeDefined();
  });

  it('rejects a bad --threads with exit 2', async () => {
    const r = await runCliAsync(['calibrate', '--threads', '0']);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/--threads expects a positive integer/);
  });
});
