/** The shipped presets in systems/: they load, have the devices they describe, and say where each number comes from. */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { loadSystemFile } from '../../runtime/system/load.js';
import { instances, type SystemSpec } from '../../runtime/system/types.js';

const root = new URL('../../', import.meta.url);
const path = (name: string): string => new URL(`systems/${name}.json`, root).pathname;

const PRESETS: Record<string, { cpu: number; gpu: number; fpga: number; peerLinks: number }> = {
  'paper-1g1f': { cpu: 1, gpu: 1, fpga: 1, peerLinks: 1 },
  'paper-2g2f': { cpu: 1, gpu: 2, fpga: 2, peerLinks: 3 },
  'h200-cpu': { cpu: 1, gpu: 1, fpga: 0, peerLinks: 0 },
  'this-machine': { cpu: 1, gpu: 0, fpga: 0, peerLinks: 0 },
};

function countKind(s: SystemSpec, kind: string): number {
  return instances(s).filter((i) => i.spec.kind === kind).length;
}

/** Paths of every number under devices and peerLinks, except counts (which are not measurements). */
function numberPaths(v: unknown, path: string, out: string[]): string[] {
  if (typeof v === 'number') out.push(path);
  else if (Array.isArray(v)) v.forEach((x, i) => numberPaths(x, `${path}[${i}]`, out));
  else if (v !== null && typeof v === 'object')
    for (const [k, x] of Object.entries(v)) if (k !== 'count') numberPaths(x, path === '' ? k : `${path}.${k}`, out);
  return out;
}

describe('presets', () => {
  for (const [name, want] of Object.entries(PRESETS)) {
    describe(name, () => {
      const s = loadSystemFile(path(name));
      it('loads, with the expected devices', () => {
        expect(s.name).toBe(name);
        expect(countKind(s, 'cpu')).toBe(want.cpu);
        expect(countKind(s, 'gpu')).toBe(want.gpu);
        expect(countKind(s, 'fpga')).toBe(want.fpga);
        expect(s.peerLinks).toHaveLength(want.peerLinks);
      });
      it('is written with 2-space indentation', () => {
        const text = readFileSync(path(name), 'utf8');
        expect(text).toBe(JSON.stringify(JSON.parse(text), null, 2) + '\n');
      });
      it('gives a source for every number', () => {
        const sources = s.sources ?? {};
        const nums = numberPaths({ devices: s.devices, peerLinks: s.peerLinks }, '', []);
        expect(nums.length).toBeGreaterThanOrEqual(10);
        const covered = (p: string): boolean =>
          Object.keys(sources).some((k) => p === k || p.startsWith(`${k}.`) || p.startsWith(`${k}[`));
        expect(nums.filter((p) => !covered(p))).toEqual([]);
        for (const text of Object.values(sources)) expect(text.length).toBeGreaterThan(10);
      });
      it('is described in docs/COST-MODEL.md', () => {
        const doc = readFileSync(new URL('docs/COST-MODEL.md', root), 'utf8');
        expect(doc).toContain(`systems/${name}.json`);
        for (const text of Object.values(s.sources ?? {})) {
          // "(see `key`)" points at another source (the parameter table prints that one): it must exist.
          const see = /^\(see `([^`]+)`\)$/.exec(text);
          if (see) expect(Object.keys(s.sources ?? {})).toContain(see[1]);
          else expect(doc, 'docs/COST-MODEL.md repeats each source').toContain(text);
        }
      });
    });
  }

  it('FPGA channel bandwidths add up to the FPGA memory bandwidth', () => {
    for (const name of Object.keys(PRESETS))
      for (const d of loadSystemFile(path(name)).devices)
        if (d.fpga) expect(d.fpga.hbmChannels * d.fpga.channelBandwidthGBs).toBeCloseTo(d.memBandwidthGBs, 6);
  });

  it('paper presets: GPU<->FPGA peer-to-peer; instance names', () => {
    for (const name of ['paper-1g1f', 'paper-2g2f']) {
      const s = loadSystemFile(path(name));
      expect(s.peerLinks.some((l) => [l.a, l.b].sort().join() === 'fpga,gpu')).toBe(true);
    }
    expect(instances(loadSystemFile(path('paper-2g2f'))).map((i) => i.name)).toEqual([
      'cpu0',
      'gpu0',
      'gpu1',
      'fpga0',
      'fpga1',
    ]);
  });

  it('this-machine marks its figures for calibration', () => {
    const s = loadSystemFile(path('this-machine'));
    expect(s.sources?.['devices[0].memBandwidthGBs']).toMatch(/measured here with/);
    expect(Object.values(s.sources ?? {}).filter((t) => t.includes('calibrate')).length).toBeGreaterThanOrEqual(5);
  });
});
