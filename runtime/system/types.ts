/**
 * The system model as plain data: devices, the links between them and the
 * constraints a mapping must meet. Loaded from JSON (see ./load.ts, which
 * validates it); used by the planner and by the runtime's switching policy.
 * Units are in the field names: GB/s, GFLOP/s, us, ms, W, GB, MHz.
 */

export type DeviceKind = 'cpu' | 'gpu' | 'fpga';

export interface FpgaSpec {
  clockMHz: number;
  hbmChannels: number;
  channelBandwidthGBs: number;
  resources: { lut: number; ff: number; bram: number; uram: number; dsp: number };
  bitstreamLoadMs: number;
}

/** One kind of device; `count` identical instances are named `${id}${index}` (gpu0, gpu1). */
export interface DeviceSpec {
  id: string;
  kind: DeviceKind;
  name: string;
  count: number;
  /** Peak arithmetic throughput of one instance per dtype, GFLOP/s (GOP/s for integers). */
  peakGflops: { f32: number; f64: number; i32: number; i64: number };
  /** Sustainable memory bandwidth of one instance, GB/s. */
  memBandwidthGBs: number;
  /** Fixed cost of starting one kernel (launch, or FPGA kernel start), us. */
  launchOverheadUs: number;
  idlePowerW: number;
  activePowerW: number;
  memoryGB: number;
  /** Link between this device and host memory (absent for the host CPU itself). */
  hostLink?: { bandwidthGBs: number; latencyUs: number };
  /** CPUs: worker threads the executor uses. */
  threads?: number;
  fpga?: FpgaSpec;
}

/** A peer-to-peer path between two device kinds (all their instances), e.g. GPU <-> FPGA over PCIe. */
export interface PeerLink {
  a: string;
  b: string;
  bandwidthGBs: number;
  latencyUs: number;
}

export interface Constraints {
  powerCapW?: number;
  latencyBoundMs?: number;
}

export interface SystemSpec {
  name: string;
  description: string;
  devices: DeviceSpec[];
  /** Direct paths; a pair of devices without one stages transfers through host memory. */
  peerLinks: PeerLink[];
  constraints: Constraints;
  /** Where each number came from (free text per field path), carried into reports. */
  sources?: Record<string, string>;
}

/** One concrete device instance of a system. */
export interface DeviceInstance {
  name: string;
  spec: DeviceSpec;
}

export function instances(s: SystemSpec): DeviceInstance[] {
  return s.devices.flatMap((d) => Array.from({ length: d.count }, (_, i) => ({ name: `${d.id}${i}`, spec: d })));
}
