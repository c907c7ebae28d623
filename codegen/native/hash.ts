/**
 * The program hash native libraries, plan.json and project.json carry, so
 * that the runtime refuses a library built from another program: sha256 of
 * the printed loop IR of every kernel (what every emitter prints from) and
 * the ABI version.
 */
import { createHash } from 'node:crypto';
import { printLoops } from '../../ir/loops-printer.js';
import type { Module } from '../../ir/module.js';
import { ABI_VERSION } from '../../runtime/native/abi.js';

export function programHash(m: Module): string {
  return createHash('sha256').update(`dype-abi ${ABI_VERSION}\n`).update(printLoops(m)).digest('hex');
}
