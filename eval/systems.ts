/**
 * The system settings of the suite: the paper-style presets with one or two
 * GPUs and FPGAs, with and without peer-to-peer links, and under a power
 * cap that forbids running every accelerator at once; and an H200 beside
 * one socket of its host (no FPGA).
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
  // 1g1f idles at 147 W: 370 W allows one accelerator busy (GPU 352 W, FPGA 175 W), not both (380 W), and not the host CPU (452 W).
  { name: '1g1f-cap370', preset: 'paper-1g1f', p2p: true, powerCapW: 370 },
  // 2g2f idles at 194 W: 650 W allows both GPUs (604 W) or the host CPU (499 W), not every device (965 W).
  { name: '2g2f-cap650', preset: 'paper-2g2f', p2p: true, powerCapW: 650 },
  // An H200 SXM beside one Sapphire Rapids socket of its host, no FPGA: dype chooses between the host and the GPU.
  { name: 'h200', preset: 'h200-cpu', p2p: true },
];

const cache = new Map<string, SystemSpec>();

/** A change to the presets as loaded (`dype eval --sensitivity`); none otherwise. */
export type SystemVariant = (preset: string, s: SystemSpec) => SystemSpec;
let variant: SystemVariant | undefined;

/** Runs `body` with every setting's system changed by `v`, then restores the presets as written. */
export function withSystemVariant<T>(v: SystemVariant, body: () => T): T {
  const prev = variant;
  variant = v;
  cache.clear();
  try {
    return body();
  } finally {
    variant = prev;
    cache.clear();
  }
}

export function systemFor(s: Setting): SystemSpec {
  let sys = cache.get(s.name);
  if (!sys) {
    const loaded = loadSystemFile(join(repoRoot(), 'systems', `${s.preset}.json`));
    const base = variant ? variant(s.preset, loaded) : loaded;
    sys = applyOverrides(base, { ...(s.powerCapW !== undefined ? { powerCapW: s.powerCapW } : {}), noP2p: !s.p2p });
    cache.set(s.name, sys);
  }
  return sys;
}
