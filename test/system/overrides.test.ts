/** --power-cap and --no-p2p on a loaded system, and the one-line summary. */
import { describe, expect, it } from 'vitest';
import { InputError } from '../../runtime/errors.js';
import { applyOverrides, loadSystemFile, parseSystem, systemSummary } from '../../runtime/system/load.js';
import { measureMemoryBandwidth } from '../../runtime/system/measure.js';

const load = (name: string) => loadSystemFile(new URL(`../../systems/${name}.json`, import.meta.url).pathname);

describe('applyOverrides', () => {
  it('power cap replaces the constraint and is recorded in sources', () => {
    const s = load('paper-2g2f');
    const o = applyOverrides(s, { powerCapW: 600 });
    expect(o.constraints.powerCapW).toBe(600);
    expect(o.sources?.['constraints.powerCapW']).toContain('--power-cap 600');
    expect(o.peerLinks).toEqual(s.peerLinks);
    expect(s.constraints.powerCapW).toBeUndefined(); // the input is not changed
    expect(applyOverrides(o, { powerCapW: 300 }).constraints.powerCapW).toBe(300);
  });
  it('no-p2p removes every peer link', () => {
    const s = load('paper-2g2f');
    const o = applyOverrides(s, { noP2p: true });
    expect(o.peerLinks).toEqual([]);
    expect(o.sources?.['peerLinks']).toContain('--no-p2p');
    expect(s.peerLinks.length).toBe(3);
    expect(o.devices).toEqual(s.devices);
  });
  it('both at once; nothing given changes nothing', () => {
    const s = load('paper-1g1f');
    const o = applyOverrides(s, { powerCapW: 450.5, noP2p: true });
    expect(o.constraints.powerCapW).toBe(450.5);
    expect(o.peerLinks).toEqual([]);
    expect(applyOverrides(s, {})).toEqual(s);
  });
  it('the result is still a valid system file', () => {
    const o = applyOverrides(load('paper-2g2f'), { powerCapW: 800, noP2p: true });
    expect(parseSystem(JSON.stringify(o, null, 2), 'o.json')).toEqual(o);
  });
  it('a bad power cap is InputError DY3015 naming --power-cap', () => {
    for (const w of [0, -5, Number.NaN, Number.POSITIVE_INFINITY]) {
      try {
        applyOverrides(load('paper-1g1f'), { powerCapW: w });
        throw new Error('expected an InputError');
      } catch (e) {
        expect(e).toBeInstanceOf(InputError);
        expect((e as InputError).code).toBe('DY3015');
        expect((e as InputError).file).toBe('--power-cap');
      }
    }
  });
});

describe('systemSummary', () => {
  it('one line naming devices, links and the power cap', () => {
    const line = systemSummary(load('paper-2g2f'));
    expect(line).not.toContain('\n');
    expect(line).toMatch(
      /^paper-2g2f: 1x cpu \(.*\), 2x gpu \(NVIDIA A100 40GB PCIe\), 2x fpga \(.*\); P2P gpu<->fpga 3.5 GB\/s, .*; no power cap$/,
    );
    const capped = systemSummary(applyOverrides(load('paper-1g1f'), { powerCapW: 500, noP2p: true }));
    expect(capped).toContain('no P2P (transfers stage through host memory)');
    expect(capped).toContain('power cap 500 W');
  });
});

describe('measureMemoryBandwidth', () => {
  it('returns positive rates for a small run', () => {
    const r = measureMemoryBandwidth({ mb: 4, reps: 2 });
    expect(r.threads).toBe(1);
    expect(r.sumGBs).toBeGreaterThan(0);
    expect(r.copyGBs).toBeGreaterThan(0);
    expect(Number.isFinite(r.sumGBs) && Number.isFinite(r.copyGBs)).toBe(true);
  });
});
