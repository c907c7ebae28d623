/**
 * lower-kernels: attaches to every kernel the kernel-level loop IR of each of
 * its tensor ops (ir/loops-lower.ts), repeat bodies included. The graph IR is
 * left as it was, so the pass can run anywhere after infer-types. The loops
 * are not part of the graph IR text (printModule); --print-ir-after=lower-kernels
 * shows them through ir/loops-printer.ts `printLoops`.
 */
import { lowerKernelLoops } from '../ir/loops-lower.js';
import { printLoops } from '../ir/loops-printer.js';
import type { Module } from '../ir/module.js';
import type { Pass } from './manager.js';

export const lowerKernelsPass: Pass = {
  name: 'lower-kernels',
  description: 'derive the kernel-level loop nest of every tensor op (loops over dense ranges and stored entries)',
  run: (m: Module): Module => ({ kernels: m.kernels.map((k) => ({ ...k, loops: lowerKernelLoops(k) })) }),
  print: printLoops,
};
