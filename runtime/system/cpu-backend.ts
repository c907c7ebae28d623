/**
 * A system as one CPU backend sees it. The host CPU may carry a fit per
 * backend (`cpuModel` for the backend `cpuModelBackend` names, the others in
 * `cpuBackendModels`): the wasm pool wakes a worker and walks a row at other
 * costs than the native library, so the threads an op is given, and what the
 * planner and the runtime's guards price a CPU stage at, must come from the
 * fit of the backend that runs it. Where the system has no fit of that
 * backend, the one it has serves, and `fit` says so: never silently.
 */
import { CPU_BACKENDS, type CpuBackendFit, type CpuBackendName, type DeviceSpec, type SystemSpec } from './types.js';
import { derivedSystem } from './load.js';

/** `name` as a CPU backend with a fit of its own, or undefined (the reference interpreter, a device backend). */
export function cpuBackendOf(name: string | undefined): CpuBackendName | undefined {
  return (CPU_BACKENDS as readonly (string | undefined)[]).includes(name) ? (name as CpuBackendName) : undefined;
}

export interface CpuFitChoice {
  device: DeviceSpec;
  /** Whose figures price the CPU, in words for a user (`dype run`'s "threads per op ... picked by"). */
  fit: string;
}

/** The host CPU with `backend`'s fit in `cpuModel` and `launchOverheadUs`; the other fits are dropped from it. */
export function cpuFitFor(d: DeviceSpec, backend: CpuBackendName): CpuFitChoice {
  const { cpuBackendModels: others, cpuModelBackend: own, history, ...base } = d;
  // Measured op times are the backend's that ran them: wasm's runs do not price the native library's ops.
  const mine = history?.filter((h) => h.backend === backend);
  const rest: DeviceSpec = mine && mine.length > 0 ? { ...base, history: mine } : base;
  if (!d.cpuModel) return { device: rest, fit: 'the roofline (no fitted model)' };
  if (own === backend) return { device: { ...rest, cpuModelBackend: own }, fit: `the ${backend} backend's fit` };
  const theirs = others?.[backend];
  if (theirs)
    return {
      device: {
        ...rest,
        cpuModelBackend: backend,
        launchOverheadUs: theirs.launchOverheadUs,
        cpuModel: theirs.cpuModel,
      },
      fit: `the ${backend} backend's fit`,
    };
  return {
    device: own === undefined ? rest : { ...rest, cpuModelBackend: own },
    fit:
      own === undefined
        ? `a fit of no named backend (no ${backend} fit in the system)`
        : `the ${own} backend's fit (no ${backend} fit in the system)`,
  };
}

/** The system with its host CPU priced by `backend`'s fit (cpuFitFor); the same object where nothing changes. */
export function systemForCpuBackend(sys: SystemSpec, backend: CpuBackendName): { system: SystemSpec; fit: string } {
  const i = sys.devices.findIndex((d) => d.kind === 'cpu');
  // Every loaded system has exactly one host CPU (./schema.ts, DY3024).
  if (i < 0) throw new Error(`internal: system ${sys.name} has no CPU device`);
  const cpu = sys.devices[i]!;
  const { device, fit } = cpuFitFor(cpu, backend);
  const same =
    device.cpuModel === cpu.cpuModel &&
    cpu.cpuBackendModels === undefined &&
    (device.history?.length ?? 0) === (cpu.history?.length ?? 0);
  return {
    system: same ? sys : derivedSystem(sys, { ...sys, devices: sys.devices.map((d, j) => (j === i ? device : d)) }),
    fit,
  };
}

/**
 * The host CPU with `fit` as `backend`'s (what `dype calibrate` writes): the top-level model where it is that
 * backend's or names none (then it names `backend`), else `cpuBackendModels[backend]`, the other fits kept.
 */
export function withCpuFit(d: DeviceSpec, backend: CpuBackendName, fit: CpuBackendFit): DeviceSpec {
  if (d.cpuModelBackend === undefined || d.cpuModelBackend === backend)
    return { ...d, cpuModelBackend: backend, launchOverheadUs: fit.launchOverheadUs, cpuModel: fit.cpuModel };
  return { ...d, cpuBackendModels: { ...d.cpuBackendModels, [backend]: fit } };
}

/** Where `backend`'s fit sits in a system file, under the device at `at` (`devices[0]`): for `sources` keys. */
export function cpuFitPath(d: DeviceSpec, backend: CpuBackendName, at: string): string {
  return d.cpuModelBackend === backend ? at : `${at}.cpuBackendModels.${backend}`;
}
