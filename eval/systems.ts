/**
 * The system settings of the suite: the paper-style presets with one or two
 * GPUs and FPGAs, with and without peer-to-peer links, and under a power
 * cap that forbids running every accelerator at once.
 */
import { join } from 'node:path';
import { applyOverrides, loadSystemFile } from '../runtime/system/load.js';
import type { SystemSpec } from '../runtime/system/types.js';
import { repoRoot } from './paths.js';

export interface Setting {
  name: string;
  preset: string;
  p2p: boolean;
  powerCapW?: number;
}

export const SETTINGS: readonly Setting[] = [
  { name: '1g1f', preset: 'paper-1g1f', p2p: true },
  { name: '2g2f', preset: 'paper-2g2f', p2p: true },
  { name: '1g1f-no-p2p', preset: 'paper-1g1f', p2p: false },
  { name: '2g2f-no-p2p', preset: 'paper-2g2f', p2p: false },
  // 1g1f idles at 180 W: 400 W allows one accelerator busy, not both, and not the host CPU.
  { name: '1g1f-cap400', preset: 'paper-1g1f', p2p: true, powerCapW: 400 },
  // 2g2f idles at 260 W: 650 W allows both GPUs or the host CPU, not every device.
  { name: '2g2f-cap650', preset: 'paper-2g2f', p2p: true, powerCapW: 650 },
];

const cache = new Map<string, SystemSpec>();

export function systemFor(s: Setting): SystemSpec {
  let sys = cache.get(s.name);
  if (!sys) {
    const base = loadSystemFile(join(repoRoot(), 'systems', `${s.preset}.json`));
    sys = applyOverrides(base, { ...(s.powerCapW !== undefined ? { powerCapW: s.powerCapW } : {}), noP2p: !s.p2p });
    cache.set(s.name, sys);
  }
  return sys;
}
