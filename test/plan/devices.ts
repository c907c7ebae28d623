/**
 * Hand-made devices and ops for the planner's tests: an EPYC-like host, an
 * A100-like GPU and a U280-like FPGA with waiting power equal to idle (so
 * their energy figures are those of the model before the waiting figure),
 * and an SpMV in the work counts annotate-cost gives it.
 */
import { typicalImpls } from '../helpers/impls.js';
import type { Dtype, PlanOp, SparseFeatures } from '../../runtime/plan/types.js';
import type { DeviceSpec, FpgaSpec, SystemSpec } from '../../runtime/system/types.js';

export const CPU: DeviceSpec = {
  id: 'cpu',
  kind: 'cpu',
  name: 'host',
  count: 1,
  peakGflops: { f32: 5734, f64: 2867, i32: 2867, i64: 1434 },
  memBandwidthGBs: 300,
  launchOverheadUs: 5,
  idlePowerW: 100,
  waitingPowerW: 100,
  activePowerW: 450,
  memoryGB: 512,
  threads: 64,
};
export const GPU: DeviceSpec = {
  id: 'gpu',
  kind: 'gpu',
  name: 'A100-like',
  count: 1,
  peakGflops: { f32: 19500, f64: 9700, i32: 19500, i64: 4875 },
  memBandwidthGBs: 1555,
  launchOverheadUs: 5,
  idlePowerW: 50,
  waitingPowerW: 50,
  activePowerW: 250,
  memoryGB: 40,
  hostLink: { bandwidthGBs: 25, latencyUs: 10 },
};
export const U280 = { lut: 1_304_000, ff: 2_607_000, bram: 2016, uram: 960, dsp: 9024 };
export const fpga = (resources: FpgaSpec['resources'], count = 1): DeviceSpec => ({
  id: 'fpga',
  kind: 'fpga',
  name: 'U280-like',
  count,
  peakGflops: { f32: 812, f64: 290, i32: 1354, i64: 406 },
  memBandwidthGBs: 460,
  launchOverheadUs: 30,
  idlePowerW: 30,
  waitingPowerW: 30,
  activePowerW: 75,
  memoryGB: 8,
  hostLink: { bandwidthGBs: 12, latencyUs: 10 },
  fpga: { clockMHz: 225, hbmChannels: 32, channelBandwidthGBs: 14.375, resources, bitstreamLoadMs: 1000 },
});
export const system = (devices: DeviceSpec[], peerLinks: SystemSpec['peerLinks'] = []): SystemSpec => ({
  name: 't',
  description: '',
  devices,
  peerLinks,
  constraints: {},
});

/** An SpMV y = A x over features `f`, in the work counts annotate-cost gives it. */
export function spmv(f: SparseFeatures, id = 'op0', dtype: Dtype = 'f32'): PlanOp {
  return {
    id,
    kind: 'spmv',
    result: `${id}_y`,
    dtype,
    impls: typicalImpls('spmv'),
    reads: [
      { value: 'A', from: { kind: 'param' } },
      { value: 'x', from: { kind: 'param' } },
    ],
    items: f.rows,
    flops: 2 * f.nnz,
    bytes: f.nnz * 8 + (f.rows + 1) * 4 + f.cols * 4 + f.rows * 4,
    gathers: f.nnz,
    loops: f.nnz,
    columns: 1,
    resultBytes: f.rows * 4,
    sparse: f,
    trips: 1,
  };
}
export const features = (rows: number, mean: number, cv: number, max: number, top1: number): SparseFeatures => ({
  rows,
  cols: rows,
  nnz: rows * mean,
  rowLenMean: mean,
  rowLenMax: max,
  rowLenCv: cv,
  emptyRowFraction: 0,
  top1PctNnzShare: top1,
});
