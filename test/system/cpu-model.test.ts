/**
 * The CPU device's optional fitted model (`cpuModel`, written by dype
 * calibrate): files without it load as before, a full block loads, and a bad
 * block is one InputError naming the field and its line.
 */
import { describe, expect, it } from 'vitest';
import { loadSystemFile, parseSystem } from '../../runtime/system/load.js';
import { MODEL, system } from './devices.js';
import { fails } from './fails.js';

describe('cpuModel in a system file', () => {
  it('is optional: files without it (every shipped preset) load unchanged', () => {
    expect(parseSystem(system(), 'sys.json').devices[0]!.cpuModel).toBeUndefined();
    for (const p of ['paper-1g1f', 'paper-2g2f', 'h200-cpu']) {
      const s = loadSystemFile(new URL(`../../systems/${p}.json`, import.meta.url).pathname);
      expect(s.devices.find((d) => d.kind === 'cpu')!.cpuModel).toBeUndefined();
    }
  });

  it('loads a full block, the thread figures optional', () => {
    expect(parseSystem(system({ cpuModel: MODEL }), 'sys.json').devices[0]!.cpuModel).toEqual(MODEL);
    const full = { ...MODEL, parallelEfficiency: 0.8, dispatchUsPerThread: 12 };
    expect(parseSystem(system({ cpuModel: full }), 'sys.json').devices[0]!.cpuModel).toEqual(full);
  });

  it('the dense figures load together; one without the other is DY3021', () => {
    const dense = { ...MODEL, nsPerDenseFlop: 0.03, nsPerDenseByte: 0.06 };
    expect(parseSystem(system({ cpuModel: dense }), 'sys.json').devices[0]!.cpuModel).toEqual(dense);
    const e = fails(system({ cpuModel: { ...MODEL, nsPerDenseFlop: 0.03 } }));
    expect(e.code).toBe('DY3021');
    expect(e.detail).toContain('nsPerDenseFlop and nsPerDenseByte go together');
  });

  it('the dense loop trips load with their block and the dense rates; short of either is DY3021', () => {
    const dense = { ...MODEL, nsPerDenseFlop: 0.03, nsPerDenseByte: 0.06, nsPerDenseTrip: 0.4, denseBlockBytes: 128 };
    expect(parseSystem(system({ cpuModel: dense }), 'sys.json').devices[0]!.cpuModel).toEqual(dense);
    const { denseBlockBytes: _, ...noBlock } = dense;
    expect(fails(system({ cpuModel: noBlock })).detail).toContain('nsPerDenseTrip and denseBlockBytes go together');
    const { nsPerDenseFlop: _f, nsPerDenseByte: _b, ...noRates } = dense;
    const e = fails(system({ cpuModel: noRates }));
    expect(e.code).toBe('DY3021');
    expect(e.detail).toContain('nsPerDenseTrip is a term of the dense fit');
    expect(fails(system({ cpuModel: { ...dense, denseBlockBytes: 0.5 } })).code).toBe('DY3021');
  });

  it('the branch-miss figures load together; one without the other is DY3021', () => {
    const branch = { ...MODEL, nsPerBranchMiss: 7, branchHistoryChangeBits: 22_627, nsPerBlockEntry: 0.25 };
    expect(parseSystem(system({ cpuModel: branch }), 'sys.json').devices[0]!.cpuModel).toEqual(branch);
    // Fits made before the history was counted in bits weighed by changes keep loading, each in its own form.
    for (const older of [
      { ...MODEL, nsPerBranchMiss: 7, branchHistoryBits: 22_627 },
      { ...MODEL, nsPerBranchMiss: 7, branchHistoryTrips: 22_627 },
      { ...MODEL, nsPerBranchMiss: 7, branchHistoryRows: 16_000 },
    ])
      expect(parseSystem(system({ cpuModel: older }), 'sys.json').devices[0]!.cpuModel).toEqual(older);
    for (const bad of [
      { ...MODEL, nsPerBranchMiss: 7 },
      { ...MODEL, branchHistoryChangeBits: 22_627 },
      { ...MODEL, branchHistoryBits: 22_627 },
      { ...MODEL, branchHistoryTrips: 22_627 },
      { ...MODEL, branchHistoryRows: 16_000 },
    ]) {
      const e = fails(system({ cpuModel: bad }));
      expect(e.code).toBe('DY3021');
      expect(e.detail).toContain('nsPerBranchMiss goes with branchHistoryChangeBits');
    }
    for (const extra of [
      { branchHistoryRows: 16_000 },
      { branchHistoryTrips: 22_627 },
      { branchHistoryBits: 22_627 },
    ]) {
      const both = fails(system({ cpuModel: { ...branch, ...extra } }));
      expect(both.code).toBe('DY3021');
      expect(both.detail).toContain('are forms of one figure: give one');
    }
  });

  it('a missing coefficient is DY3020 naming it', () => {
    const { nsPerRow: _, ...partial } = MODEL;
    const e = fails(system({ cpuModel: partial }));
    expect(e.code).toBe('DY3020');
    expect(e.detail).toContain('devices[0].cpuModel.nsPerRow');
  });

  it('a negative coefficient or an efficiency above 1 names the field and its line', () => {
    const src = system({ cpuModel: { ...MODEL, nsPerMiss: -1 } });
    const e = fails(src);
    expect(e.code).toBe('DY3021');
    expect(e.line).toBe(src.split('\n').findIndex((l) => l.includes('"nsPerMiss": -1')) + 1);
    expect(fails(system({ cpuModel: { ...MODEL, parallelEfficiency: 1.5 } })).detail).toContain(
      'devices[0].cpuModel.parallelEfficiency',
    );
  });

  it('a misspelt field is DY3019', () => {
    expect(fails(system({ cpuModel: { ...MODEL, nsPerNz: 1 } })).code).toBe('DY3019');
  });

  it('belongs to the host CPU only (DY3025)', () => {
    const e = fails(system({}, { cpuModel: MODEL }));
    expect(e.code).toBe('DY3025');
    expect(e.detail).toContain('"cpuModel" is for the host CPU only');
  });
});
