/**
 * `--threads T` against the machine: more worker threads than cores only add
 * memory (each wasm worker holds its own instance) and switching, so T is
 * capped at the cores this process may use, with a warning on stderr.
 */
import { availableParallelism } from 'node:os';

export function capThreads(asked: number, warn: (s: string) => void = (s) => void process.stderr.write(s)): number {
  const cores = availableParallelism();
  if (asked <= cores) return asked;
  warn(
    `--threads ${asked}: warning DY3050: this machine has ${cores} core${cores === 1 ? '' : 's'}; using ${cores} thread${cores === 1 ? '' : 's'} (threads beyond the cores add memory and switching, not speed)\n`,
  );
  return cores;
}
