/** Devices of the system-file tests (a host CPU, a GPU), a file's text of the two, and a CPU model block. */
export const MODEL = {
  nsPerNnz: 0.5,
  nsPerGather: 0.07,
  nsPerRow: 2.3,
  nsPerItem: 0.2,
  nsPerMiss: 50,
  nsPerByte: 0.05,
  cacheMB: 8,
};

export const HOST_CPU = {
  id: 'cpu',
  kind: 'cpu',
  name: 'host',
  count: 1,
  peakGflops: { f32: 100, f64: 50, i32: 50, i64: 25 },
  memBandwidthGBs: 20,
  launchOverheadUs: 5,
  idlePowerW: 10,
  waitingPowerW: 10,
  activePowerW: 50,
  memoryGB: 16,
  threads: 4,
};

export const GPU = {
  id: 'gpu',
  kind: 'gpu',
  name: 'g',
  count: 1,
  peakGflops: { f32: 1000, f64: 500, i32: 1000, i64: 250 },
  memBandwidthGBs: 900,
  launchOverheadUs: 5,
  idlePowerW: 30,
  waitingPowerW: 30,
  activePowerW: 200,
  memoryGB: 24,
  hostLink: { bandwidthGBs: 12, latencyUs: 10 },
};

/** The text of a system file of HOST_CPU and GPU, each with the fields given over it. */
export function system(cpu: Record<string, unknown> = {}, gpu: Record<string, unknown> = {}): string {
  const s = {
    name: 's',
    description: 'cpu and gpu',
    devices: [
      { ...HOST_CPU, ...cpu },
      { ...GPU, ...gpu },
    ],
  };
  return JSON.stringify(s, null, 2) + '\n';
}
