/**
 * The guarded runtime prices the host CPU by the fit of the CPU backend it
 * runs on (runtime/system/cpu-backend.ts): with a wasm backend, a system
 * whose wasm fit sits beside a native one predicts exactly as a system whose
 * only fit is that wasm one, and not as the native fit would.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeBackends } from '../../runtime/exec/index.js';
import type { CpuModelSpec, DeviceSpec, SystemSpec } from '../../runtime/system/types.js';
import { system } from './fixtures.js';
import { gcnFixture, runtimeFor, type Fixture } from './runtime-fixture.js';

let fx: Fixture;
beforeAll(async () => {
  fx = await gcnFixture();
}, 60_000);
afterAll(() => fx && closeBackends(fx.backends));

const FAST: CpuModelSpec = {
  nsPerNnz: 0.1,
  nsPerGather: 0.01,
  nsPerRow: 0.1,
  nsPerItem: 0.01,
  nsPerMiss: 0.1,
  nsPerByte: 0.001,
  cacheMB: 32,
  parallelEfficiency: 1,
  dispatchUsPerThread: 0,
};
const SLOW: CpuModelSpec = {
  ...FAST,
  nsPerNnz: 40,
  nsPerGather: 4,
  nsPerRow: 20,
  nsPerItem: 5,
  parallelEfficiency: 0.2,
};

function withCpu(patch: Partial<DeviceSpec>): SystemSpec {
  const base = system('paper-1g1f');
  return { ...base, devices: base.devices.map((d) => (d.kind === 'cpu' ? { ...d, ...patch } : d)) };
}

describe("the runtime's CPU fit", () => {
  it('is the running backend’s (wasm): the same predictions as that fit alone, not the native one', () => {
    expect(fx.backends.cpu?.name).toBe('wasm');
    const both = withCpu({
      cpuModel: FAST,
      cpuModelBackend: 'native',
      launchOverheadUs: 1,
      cpuBackendModels: { wasm: { launchOverheadUs: 40, cpuModel: SLOW } },
    });
    const wasmOnly = withCpu({ cpuModel: SLOW, cpuModelBackend: 'wasm', launchOverheadUs: 40 });
    const nativeOnly = withCpu({ cpuModel: FAST, cpuModelBackend: 'native', launchOverheadUs: 1 });
    const [a, b, c] = [both, wasmOnly, nativeOnly].map((s) => runtimeFor(fx, { system: s }));
    let cpuStages = 0;
    for (const g of fx.graphs.keys()) {
      const x = fx.inputs(g);
      const ea = a!.explain(x);
      expect(ea.selected.choices, g).toEqual(b!.explain(x).selected.choices);
      expect(ea.predicted.selected, g).toEqual(b!.explain(x).predicted.selected);
      const ec = c!.explain(x);
      // Where the native fit's pick runs a CPU stage, the two fits price it apart.
      if (ec.selected.choices.some((s) => s.device === 'cpu')) {
        cpuStages++;
        expect(ec.predicted.selected, g).not.toEqual(ea.predicted.selected);
      }
    }
    expect(cpuStages).toBeGreaterThan(0);
    for (const r of [a, b, c]) r!.close();
  });
});
