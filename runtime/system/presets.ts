/**
 * The presets of the package's systems/ folder and how a `--system` argument
 * is found: an existing file is itself, else a preset name (with or without
 * `.json`); a name that is neither is InputError DY3049 listing the presets.
 */
import { existsSync, readdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { InputError } from '../errors.js';

const here = dirname(fileURLToPath(import.meta.url));

/** The systems/ folder: two levels up in the sources (runtime/system/), three when built (dist/runtime/system/). */
export function systemsDir(): string {
  for (const root of [join(here, '..', '..'), join(here, '..', '..', '..')]) {
    const d = join(root, 'systems');
    if (existsSync(join(d, 'README.md'))) return d;
  }
  return join(here, '..', '..', 'systems');
}

/** The preset names, sorted (the .json files of systems/). */
export function presetNames(): string[] {
  try {
    return readdirSync(systemsDir())
      .filter((f) => f.endsWith('.json'))
      .map((f) => f.slice(0, -'.json'.length))
      .sort();
  } catch {
    return [];
  }
}

/**
 * The path of the system file `arg` names: `arg` itself when it exists, else
 * the preset of that name. A bare name (no directory part) that is neither
 * is DY3049 listing the presets; a path that does not exist is returned as
 * it is, for the reader to report (DY3010).
 */
export function resolveSystemArg(arg: string, flag = '--system'): string {
  if (existsSync(arg)) return arg;
  const p = join(systemsDir(), arg.endsWith('.json') ? arg : `${arg}.json`);
  if (existsSync(p)) return p;
  if (!/[\\/]/.test(arg)) {
    const names = presetNames();
    throw new InputError(
      'DY3049',
      `${flag} ${arg}`,
      undefined,
      `no system file or preset named '${arg}'; presets: ${names.join(', ')} (or give the path of a system JSON file)`,
    );
  }
  return resolve(arg);
}
