/**
 * Checking an output path before the work that fills it (`-o DIR` of
 * compile, hls and eval; `-o FILE` of calibrate): one DY3017 naming the
 * flag and the path, at once, rather than after minutes of work or as a raw
 * EEXIST. The checks create nothing that outlives them: writability is
 * probed by creating and removing an entry where the output will go, since
 * permission bits say nothing to root and nothing about special file
 * systems (/proc takes no new entries whatever the bits say).
 *
 * An output file is written through a temporary file and a rename
 * (cli/outputs.ts), which would replace whatever the path names: so an
 * existing destination must be a regular file (a named pipe, a device, a
 * socket or a directory is refused), and a symbolic link is followed to its
 * target, which is what gets replaced (`outputTarget`).
 */
import {
  existsSync,
  lstatSync,
  mkdtempSync,
  readlinkSync,
  realpathSync,
  rmdirSync,
  statSync,
  type Stats,
} from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { InputError } from '../runtime/errors.js';
import { fsReason, specialKind } from '../runtime/io/files.js';

function nearestExisting(path: string): string {
  let d = resolve(path);
  while (!existsSync(d) && dirname(d) !== d) d = dirname(d);
  return d;
}

/** Creates and removes a directory in `dir`; the reason when that fails. */
function probe(dir: string): string | undefined {
  try {
    rmdirSync(mkdtempSync(join(dir, '.dype-probe-')));
    return undefined;
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    // ENOENT in a directory that exists: a file system that takes no new entries.
    if (code === 'ENOENT') return `${dir} takes no new entries (a special file system such as /proc or /sys?)`;
    if (code === 'EROFS') return `${dir} is on a read-only file system`;
    return `${dir}: ${fsReason(e)}`;
  }
}

/**
 * Where an output file written by temporary file and rename really goes:
 * `path` itself when it does not exist yet or is a regular file; when it is
 * a symbolic link, the file it resolves to (so the link is written through,
 * not replaced by a regular file). `why` instead when the destination
 * cannot take the output: a directory, a named pipe, a device or a socket
 * (a rename would replace the special file and report success), a dangling
 * or looping symbolic link. Whether the directory takes new files is left
 * to the caller.
 */
export function outputTarget(path: string): { target: string } | { why: string } {
  let st: Stats;
  try {
    st = lstatSync(path);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return { target: path };
    return { why: fsReason(e) };
  }
  let target = path;
  let via = '';
  if (st.isSymbolicLink()) {
    let link = '';
    try {
      link = readlinkSync(path);
      target = realpathSync(path);
      st = statSync(target);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') return { why: `it is a symbolic link to ${link}, which does not exist` };
      if (code === 'ELOOP') return { why: 'it is a loop of symbolic links' };
      return { why: fsReason(e) };
    }
    via = `it is a symbolic link to ${target}, `;
  }
  if (st.isFile()) return { target };
  if (st.isDirectory()) return { why: via ? `${via}a directory` : 'it is a directory' };
  return { why: `${via || 'it is '}${specialKind(st)}, not a regular file` };
}

/**
 * How the command line spelled the output option (`-o`, `-oDIR`, `--output`, `--output=DIR`), so that a message names
 * the flag the user typed: the last one given, which is the value commander keeps.
 */
export function outputFlagGiven(argv: readonly string[] = process.argv): '-o' | '--output' {
  for (let i = argv.length - 1; i >= 0; i--) {
    const a = argv[i]!;
    if (a === '--') continue;
    if (a === '--output' || a.startsWith('--output=')) return '--output';
    if (a.startsWith('-o') && !a.startsWith('--')) return '-o';
  }
  return '-o';
}

/** `dir` is an existing directory, or can be created, and takes new files. */
export function checkOutputDir(dir: string, flag = outputFlagGiven()): void {
  const where = `${flag} ${dir}`;
  if (dir.trim() === '') throw new InputError('DY3017', flag, undefined, 'expected a directory, got an empty path');
  if (existsSync(dir)) {
    if (!statSync(dir).isDirectory())
      throw new InputError(
        'DY3017',
        where,
        undefined,
        'expected a directory, found a file (give a new or an existing directory)',
      );
    const why = probe(dir);
    if (why) throw new InputError('DY3017', where, undefined, `cannot write into the output directory: ${why}`);
    return;
  }
  const base = nearestExisting(dir);
  if (!statSync(base).isDirectory())
    throw new InputError(
      'DY3017',
      where,
      undefined,
      `cannot create the output directory: ${base} is a file, not a directory`,
    );
  const why = probe(base);
  if (why) throw new InputError('DY3017', where, undefined, `cannot create the output directory: ${why}`);
}

/** `file` is not a directory, its directory exists and takes new files. */
export function checkOutputFile(file: string, flag = outputFlagGiven()): void {
  const where = `${flag} ${file}`;
  if (file.trim() === '') throw new InputError('DY3017', flag, undefined, 'expected a file name, got an empty path');
  if (existsSync(file) && statSync(file).isDirectory())
    throw new InputError('DY3017', where, undefined, 'expected a file, found a directory');
  const t = outputTarget(file);
  if ('why' in t) throw new InputError('DY3017', where, undefined, `cannot write the output file: ${t.why}`);
  const dir = dirname(resolve(file));
  if (!existsSync(dir))
    throw new InputError(
      'DY3017',
      where,
      undefined,
      `cannot write the output file: its directory ${dirname(file)} does not exist`,
    );
  if (!statSync(dir).isDirectory())
    throw new InputError(
      'DY3017',
      where,
      undefined,
      `cannot write the output file: ${dirname(file)} is not a directory`,
    );
  const why = probe(dir);
  if (why) throw new InputError('DY3017', where, undefined, `cannot write the output file: ${why}`);
}
