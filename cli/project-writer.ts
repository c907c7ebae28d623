/**
 * Writing a generated project, all or nothing (docs/CLI.md: a command that
 * fails writes no output file):
 *
 * 1. Every destination is checked before anything is written: a directory
 *    or special file where the project writes a file, or a file where it
 *    needs a folder, is DY3017 naming that path.
 * 2. Every file is written into a staging folder inside the output
 *    directory (so that moving it into place is a rename on one file
 *    system), then moved into place; a file it replaces is first moved
 *    aside into the staging folder.
 * 3. If anything fails (a race, a permission, a full disk), everything is
 *    undone: the files moved into place are removed, the files they
 *    replaced are put back, the folders this call created are removed, and
 *    the staging folder goes; then DY3017 names the path that failed.
 *
 * Folders the project needs are created (one level at a time: Node's
 * recursive mkdir never returns under /proc); folders that existed are kept,
 * and the output directory, when this call created it, is removed again on
 * failure. An earlier project's files that this one does not write (`stale`)
 * go in the same step, so a recompile leaves the directory holding one
 * project.
 */
import { randomBytes } from 'node:crypto';
import {
  lstatSync,
  mkdirSync,
  readdirSync,
  renameSync,
  rmdirSync,
  rmSync,
  statSync,
  writeFileSync,
  type Stats,
} from 'node:fs';
import { dirname, join, normalize, resolve, sep } from 'node:path';
import { InputError } from '../runtime/errors.js';
import { fsReason, makeDirs } from '../runtime/io/files.js';
import { holdSignals } from '../runtime/io/signals.js';
import { checkOutputDir } from './output-path.js';

/** Refuses paths that would leave the project folder. */
function safeRelative(p: string): string {
  const n = normalize(p);
  if (
    n.startsWith('..') ||
    n.startsWith(sep) ||
    /^[A-Za-z]:/.test(n) ||
    n.split(sep).includes('..') ||
    n === '.' ||
    n === ''
  )
    throw new Error(`generated file path '${p}' is not inside the project`);
  return n;
}

/** The error for one path of the project that cannot be written. */
function projectError(what: string, path: string, detail: string): InputError {
  return new InputError('DY3017', path, undefined, `cannot write ${what}: ${detail}`);
}

/** stat that follows links; undefined when nothing is there. */
function statOrNothing(what: string, path: string): Stats | undefined {
  try {
    return statSync(path, { throwIfNoEntry: false });
  } catch (e) {
    throw projectError(what, path, fsReason(e));
  }
}

/**
 * Checks, before anything is written, that every file of the project can go
 * where it goes: each folder on its way is a folder or absent, and the file
 * itself is a regular file (replaced) or absent.
 */
function checkDestinations(what: string, outDir: string, rel: readonly string[]): void {
  const folders = new Map<string, boolean>(); // path -> exists (as a directory)
  for (const r of rel) {
    const parts = r.split(sep);
    let here = outDir;
    let present = true;
    for (const part of parts.slice(0, -1)) {
      here = join(here, part);
      let exists = folders.get(here);
      if (exists === undefined) {
        const st = statOrNothing(what, here);
        if (st !== undefined && !st.isDirectory())
          throw projectError(
            what,
            here,
            `expected a directory here (the project writes ${join(outDir, r)}), found a file; remove it or choose another -o`,
          );
        exists = st !== undefined;
        folders.set(here, exists);
      }
      if (!exists) {
        present = false;
        break;
      }
    }
    if (!present) continue;
    const dest = join(outDir, r);
    const st = statOrNothing(what, dest);
    if (st === undefined || st.isFile()) continue;
    throw projectError(
      what,
      dest,
      st.isDirectory()
        ? 'expected a file here, found a directory; remove it or choose another -o'
        : 'expected a regular file here, found a special file; remove it or choose another -o',
    );
  }
}

/** One file moved into place: where it went and where the file it replaced waits. */
interface Placed {
  dest: string;
  /** The replaced file, moved aside; undefined when there was none. */
  previous?: string;
  /** Whether the new file reached `dest`. */
  moved: boolean;
}

/** Undoes what was placed, best effort, newest first. */
function rollBack(placed: readonly Placed[], createdDirs: readonly string[]): void {
  for (const p of [...placed].reverse()) {
    try {
      if (p.moved) rmSync(p.dest, { force: true });
      if (p.previous !== undefined) renameSync(p.previous, p.dest);
    } catch {
      // Best effort: go on undoing the rest.
    }
  }
  for (const d of [...createdDirs].reverse()) rmSync(d, { recursive: true, force: true });
}

/**
 * Writes `files` under `outDir`, all or none (see above), and removes `stale` (paths relative to it: an earlier
 * project's files this one does not write) in the same step: moved aside with the replaced files, put back if the
 * write fails, and their directories removed where that leaves them empty.
 */
export function writeProject(
  outDir: string,
  files: ReadonlyMap<string, string | Uint8Array>,
  stale: readonly string[] = [],
  what = 'the project',
): void {
  holdSignals(() => placeProject(outDir, files, stale, what));
}

/** The checks writeProject makes before writing, alone: for a command to fail before its work, not after. */
export function checkProjectDestinations(outDir: string, paths: readonly string[], what = 'the project'): void {
  checkOutputDir(outDir);
  checkDestinations(what, outDir, paths.map(safeRelative));
}

function placeProject(
  outDir: string,
  files: ReadonlyMap<string, string | Uint8Array>,
  stale: readonly string[],
  what: string,
): void {
  checkOutputDir(outDir);
  const rel = [...files.keys()].map(safeRelative);
  const gone = stale.map(safeRelative);
  checkDestinations(what, outDir, rel);
  let created: string | undefined;
  try {
    created = makeDirs(outDir);
  } catch (e) {
    throw new InputError('DY3017', `-o ${outDir}`, undefined, `cannot create the output directory: ${fsReason(e)}`);
  }
  const stage = join(outDir, `.dype-staging-${process.pid}-${randomBytes(4).toString('hex')}`);
  const placed: Placed[] = [];
  const createdDirs: string[] = [];
  // The path the current step is about, for the error when it fails.
  let at = stage;
  try {
    mkdirSync(stage);
    let i = 0;
    for (const data of files.values()) {
      at = join(outDir, rel[i]!);
      writeFileSync(join(stage, `new-${i++}`), data);
    }
    i = 0;
    for (const r of rel) {
      const dest = join(outDir, r);
      at = dirname(dest);
      const made = makeDirs(at);
      if (made !== undefined) createdDirs.push(made);
      at = dest;
      const p: Placed = { dest, moved: false };
      placed.push(p);
      // lstat: a link there is moved aside and put back, not followed.
      const st = lstatSync(dest, { throwIfNoEntry: false });
      if (st !== undefined) {
        if (!st.isFile() && !st.isSymbolicLink())
          throw projectError(what, dest, st.isDirectory() ? 'it is a directory' : 'it is a special file');
        const previous = join(stage, `previous-${i}`);
        renameSync(dest, previous);
        p.previous = previous;
      }
      renameSync(join(stage, `new-${i++}`), dest);
      p.moved = true;
    }
    gone.forEach((r, j) => {
      const dest = join(outDir, r);
      at = dest;
      // Only a file or a link of the earlier project: a directory of the user's at that path is left alone.
      const st = lstatSync(dest, { throwIfNoEntry: false });
      if (st === undefined || !(st.isFile() || st.isSymbolicLink())) return;
      const previous = join(stage, `stale-${j}`);
      renameSync(dest, previous);
      placed.push({ dest, previous, moved: false });
    });
  } catch (e) {
    rollBack(placed, createdDirs);
    rmSync(stage, { recursive: true, force: true });
    // A directory this call created holds nothing else: remove it too, so a failure leaves nothing behind.
    if (created !== undefined) rmSync(created, { recursive: true, force: true });
    if (e instanceof InputError) throw e;
    throw projectError(what, at, fsReason(e));
  }
  rmSync(stage, { recursive: true, force: true });
  for (const r of gone) removeEmptyDirs(outDir, dirname(join(outDir, r)));
}

/** Removes `dir` and then its parents while they are empty, up to (not including) `root`. */
function removeEmptyDirs(root: string, dir: string): void {
  const top = resolve(root);
  for (let d = resolve(dir); d !== top && d.startsWith(top); d = dirname(d)) {
    try {
      if (readdirSync(d).length > 0) return;
      rmdirSync(d);
    } catch {
      return;
    }
  }
}
