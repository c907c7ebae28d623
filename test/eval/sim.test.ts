/** The event simulation on known answers: link sharing, instance queues, fill and drain, energy accounting. */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { problemFor } from '../../eval/binding.js';
import { generatedInputs } from '../../eval/inputs.js';
import { runTasks, type Task } from '../../eval/sim/engine.js';
import { simulate, type SimStage } from '../../eval/sim/index.js';
import { workloads } from '../../eval/workloads.js';
import { loadSystemFile } from '../../runtime/system/load.js';
import { instances } from '../../runtime/system/types.js';
import { REPO_ROOT } from '../helpers/cli.js';

const link = { name: 'l', bytesPerMs: 1e6 };

describe('engine', () => {
  it('a transfer costs latency plus bytes over bandwidth; two on one link share it', () => {
    const one: Task[] = [
      { kind: 'transfer', deps: [], input: 0, label: 'a', links: [0], bytes: 1e6, latencyMs: 0.01, endpoints: [] },
    ];
    expect(runTasks(one, 0, [link])[0]!.end).toBeCloseTo(1.01, 9);
    const two: Task[] = [one[0]!, { ...(one[0] as Extract<Task, { kind: 'transfer' }>), label: 'b' }];
    const t = runTasks(two, 0, [link]);
    expect(t[0]!.end).toBeCloseTo(2.01, 9);
    expect(t[1]!.end).toBeCloseTo(2.01, 9);
    // A transfer over two links moves at the slower share: the second link is also used by another transfer.
    const three: Task[] = [
      { kind: 'transfer', deps: [], input: 0, label: 'x', links: [0, 1], bytes: 1e6, latencyMs: 0, endpoints: [] },
      { kind: 'transfer', deps: [], input: 0, label: 'y', links: [1], bytes: 1e6, latencyMs: 0, endpoints: [] },
    ];
    const u = runTasks(three, 0, [
      { name: 'fast', bytesPerMs: 4e6 },
      { name: 'slow', bytesPerMs: 1e6 },
    ]);
    expect(u[0]!.end).toBeCloseTo(2, 9);
    expect(u[1]!.end).toBeCloseTo(2, 9);
  });

  it('an instance serves one kernel at a time, the oldest input first', () => {
    const tasks: Task[] = [
      { kind: 'delay', deps: [], input: 1, label: 'late start', ms: 0 },
      { kind: 'compute', deps: [0], input: 1, label: 'b', instance: 0, ms: 3 },
      { kind: 'compute', deps: [], input: 0, label: 'a', instance: 0, ms: 2 },
      { kind: 'compute', deps: [2], input: 0, label: 'c', instance: 1, ms: 1 },
    ];
    const t = runTasks(tasks, 2, []);
    expect(t[2]!.start).toBe(0);
    expect(t[1]!.start).toBe(2);
    expect(t[1]!.end).toBe(5);
    expect(t[3]!.end).toBe(3);
  });
});

describe('simulate', () => {
  const sys = loadSystemFile(join(REPO_ROOT, 'systems', 'paper-1g1f.json'));
  const w = workloads().find((x) => x.name === 'spmv-chain')!;
  const input = generatedInputs().find((x) => x.name === 'erdos-renyi-128k-d8')!;
  const p = problemFor(w, input.features);
  const cpu = sys.devices.find((d) => d.kind === 'cpu')!;
  const gpu = sys.devices.find((d) => d.kind === 'gpu')!;
  const stages: SimStage[] = [
    { ops: [0], device: cpu, instances: ['cpu0'] },
    { ops: [1, 2], device: gpu, instances: ['gpu0'] },
  ];

  it('fill and drain: the period over a stream falls with its length toward the steady state', () => {
    const r1 = simulate(sys, p, stages, { stream: 1 });
    const r4 = simulate(sys, p, stages, { stream: 4 });
    const r16 = simulate(sys, p, stages, { stream: 16 });
    const r32 = simulate(sys, p, stages, { stream: 32 });
    expect(r1.periodMs).toBeCloseTo(r1.latencyMs, 9);
    expect(r4.periodMs).toBeLessThan(r1.periodMs);
    expect(r16.periodMs).toBeLessThan(r4.periodMs);
    // In the steady state each extra input adds the same time.
    const steady = (r32.makespanMs - r16.makespanMs) / 16;
    expect(steady).toBeGreaterThan(0);
    expect(r32.periodMs).toBeGreaterThanOrEqual(steady - 1e-9);
  });

  it('device energy: the used instances waiting over the makespan plus busy power; system energy adds the others idle', () => {
    const r = simulate(sys, p, stages, { stream: 8 });
    const used = new Set(stages.flatMap((s) => s.instances));
    const all = instances(sys);
    const waitW = all.filter((x) => used.has(x.name)).reduce((a, x) => a + x.spec.waitingPowerW, 0);
    const activeW = all.filter((x) => used.has(x.name)).reduce((a, x) => a + x.spec.activePowerW, 0);
    const restW = all.filter((x) => !used.has(x.name)).reduce((a, x) => a + x.spec.idlePowerW, 0);
    expect(restW).toBeGreaterThan(0);
    expect(r.deviceEnergyJ).toBeGreaterThan((waitW * r.periodMs) / 1e3);
    expect(r.deviceEnergyJ).toBeLessThan((activeW * r.periodMs) / 1e3);
    // The unused instances idle for the whole makespan: exactly their idle draw x the period per input.
    expect(r.systemEnergyJ - r.deviceEnergyJ).toBeCloseTo((restW * r.periodMs) / 1e3, 12);
    expect(r.peakPowerW).toBeLessThanOrEqual(activeW + restW);
  });

  it('splitting a repeat region over two instances pays an exchange per trip', () => {
    const sys2 = loadSystemFile(join(REPO_ROOT, 'systems', 'paper-2g2f.json'));
    const pr = workloads().find((x) => x.name === 'pagerank')!;
    const q = problemFor(pr, input.features);
    const gpu2 = sys2.devices.find((d) => d.kind === 'gpu')!;
    const split = simulate(sys2, q, [{ ops: [0, 1], device: gpu2, instances: ['gpu0', 'gpu1'] }], {
      stream: 2,
      trace: true,
    });
    const exchanges = split.trace!.filter((e) => e.label.includes('exchange'));
    // Per input and direction: one before the loop (the copy r = r0 leaves r in slices) and 19 between its 20 trips.
    expect(exchanges.length).toBe(2 * 2 * (1 + 19));
  });
});
