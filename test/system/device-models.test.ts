/**
 * The optional GPU and FPGA model blocks of a system file (`gpuModel`,
 * `fpgaModel`; docs/COST-MODEL.md): files without them load as before, full
 * blocks load, and each bad block is one InputError naming the field and
 * its line.
 */
import { describe, expect, it } from 'vitest';
import { parseSystem } from '../../runtime/system/load.js';
import { GPU, HOST_CPU } from './devices.js';
import { fails } from './fails.js';

const GPU_MODEL = {
  effectiveBandwidthGBs: 800,
  sparseFloorUs: 15,
  queuedLaunchUs: 3,
  laneStepNs: 70,
  residentWarps: 4096,
  rowChainNs: 1500,
  searchStepNs: 300,
  l2CacheMB: 6,
};
const FPGA_MODEL = { effectiveBandwidthGBs: 400 };

function system(
  gpu: Record<string, unknown> = {},
  fpga: Record<string, unknown> = {},
  cpu: Record<string, unknown> = {},
): string {
  const s = {
    name: 's',
    description: 'cpu, gpu and fpga',
    devices: [
      { ...HOST_CPU, ...cpu },
      { ...GPU, waitingPowerW: 60, ...gpu },
      {
        id: 'fpga',
        kind: 'fpga',
        name: 'f',
        count: 1,
        peakGflops: { f32: 800, f64: 300, i32: 1300, i64: 400 },
        memBandwidthGBs: 460,
        launchOverheadUs: 50,
        idlePowerW: 20,
        waitingPowerW: 25,
        activePowerW: 45,
        memoryGB: 8,
        hostLink: { bandwidthGBs: 10, latencyUs: 10 },
        fpga: {
          clockMHz: 225,
          hbmChannels: 32,
          channelBandwidthGBs: 14.375,
          resources: { lut: 1, ff: 1, bram: 1, uram: 1, dsp: 1 },
          bitstreamLoadMs: 1000,
        },
        ...fpga,
      },
    ],
  };
  return JSON.stringify(s, null, 2) + '\n';
}

const lineOf = (src: string, text: string): number => src.split('\n').findIndex((l) => l.includes(text)) + 1;

describe('gpuModel and fpgaModel in a system file', () => {
  it('are optional', () => {
    const s = parseSystem(system(), 'sys.json');
    expect(s.devices[1]!.gpuModel).toBeUndefined();
    expect(s.devices[2]!.fpgaModel).toBeUndefined();
  });

  it('load when whole', () => {
    const s = parseSystem(system({ gpuModel: GPU_MODEL }, { fpgaModel: FPGA_MODEL }), 'sys.json');
    expect(s.devices[1]!.gpuModel).toEqual(GPU_MODEL);
    expect(s.devices[2]!.fpgaModel).toEqual(FPGA_MODEL);
  });

  it('a missing figure is DY3020 naming it', () => {
    const { l2CacheMB: _, ...partial } = GPU_MODEL;
    const e = fails(system({ gpuModel: partial }));
    expect(e.code).toBe('DY3020');
    expect(e.detail).toContain('devices[1].gpuModel.l2CacheMB');
  });

  it('a misspelt field is DY3019 with a suggestion', () => {
    const { sparseFloorUs: _, ...rest } = GPU_MODEL;
    const e = fails(system({ gpuModel: { ...rest, sparseFlorUs: 1 } }));
    expect(e.code).toBe('DY3019');
    expect(e.detail).toContain('did you mean `sparseFloorUs`');
  });

  it('a negative or zero figure names the field and its line', () => {
    const src = system({ gpuModel: { ...GPU_MODEL, effectiveBandwidthGBs: 0 } });
    const e = fails(src);
    expect(e.code).toBe('DY3021');
    expect(e.line).toBe(lineOf(src, '"effectiveBandwidthGBs": 0'));
  });

  it('a sustained bandwidth above the datasheet peak is DY3021 at its line', () => {
    const src = system({}, { fpgaModel: { effectiveBandwidthGBs: 4600 } });
    const e = fails(src);
    expect(e.code).toBe('DY3021');
    expect(e.detail).toContain('devices[2].fpgaModel.effectiveBandwidthGBs');
    expect(e.detail).toContain('at most memBandwidthGBs (460');
    expect(e.line).toBe(lineOf(src, '"effectiveBandwidthGBs": 4600'));
  });

  it('a sparse floor below the launch overhead is DY3021 at its line', () => {
    const src = system({ launchOverheadUs: 20, gpuModel: GPU_MODEL });
    const e = fails(src);
    expect(e.code).toBe('DY3021');
    expect(e.detail).toContain('devices[1].gpuModel.sparseFloorUs');
    expect(e.line).toBe(lineOf(src, '"sparseFloorUs": 15'));
  });

  it('each belongs to its own kind (DY3025)', () => {
    expect(fails(system({}, {}, { gpuModel: GPU_MODEL })).detail).toContain(
      '"gpuModel" is for a device of kind "gpu" only, not one of kind "cpu"',
    );
    expect(fails(system({ fpgaModel: FPGA_MODEL })).detail).toContain(
      '"fpgaModel" is for a device of kind "fpga" only, not one of kind "gpu"',
    );
    expect(fails(system({}, { gpuModel: GPU_MODEL })).code).toBe('DY3025');
  });
});
