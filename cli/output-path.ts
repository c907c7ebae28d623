/**
 * Checking an output path before the work that fills it (`-o DIR` of
 * compile, hls and eval; `-o FILE` of calibrate): one DY3017 naming the
 * flag and the path, at once, rather than after minutes of work or as a raw
 * EEXIST. The checks create nothing that outlives them: writability is
 * probed by creating and removing an entry where the output will go, since
 * permission bits say nothing to root and nothing about special file
 * systems (/proc takes no new entries whatever the bits say).
 */
import { existsSync, mkdtempSync, rmdirSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { InputError } from '../runtime/errors.js';
import { fsReason } from '../runtime/io/files.js';

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

/** `dir` is an existing directory, or can be created, and takes new files. */
export function checkOutputDir(dir: string, flag = '-o'): void {
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
export function checkOutputFile(file: string, flag = '-o'): void {
  const where = `${flag} ${file}`;
  if (file.trim() === '') throw new InputError('DY3017', flag, undefined, 'expected a file name, got an empty path');
  if (existsSync(file) && statSync(file).isDirectory())
    throw new InputError('DY3017', where, undefined, 'expected a file, found a directory');
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
