/**
 * The bad-input contract of docs/CLI.md for the program file and for the
 * projects `dype compile` and `dype hls` write, on the built command
 * (dist/cli/main.js) in a child process:
 *
 * - a program that cannot be read (missing, a directory) is DY3010 naming
 *   it, exit 1, in every command that reads one;
 * - a project that cannot be written where it goes (a directory where a file
 *   goes, a file where a folder goes) is DY3017 naming that path, and the
 *   -o directory holds exactly what it held before: no partial project, and
 *   no file that was there is lost (project-writer.ts's rollback, checked
 *   directly as well);
 * - `dype compile --system` is checked as `dype plan` checks it (DY3049,
 *   DY3010, DY3021) before any work, whichever targets are built.
 *
 * Each test works in a fresh temporary directory used as the working
 * directory, so paths in messages are short relative paths.
 */
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { writeProject } from '../../cli/project-writer.js';
import { cleanup, example, freshDir, REPO_ROOT, runCliAsync, stackFrames, type CliResult } from '../helpers/cli.js';

const SPMV = example('spmv.dy');

/** Every entry under `dir`: folders as 'path/', files as 'path = content'; sorted. */
function tree(dir: string, base = ''): string[] {
  return readdirSync(join(dir, base), { withFileTypes: true })
    .flatMap((e) => {
      const p = base === '' ? e.name : `${base}/${e.name}`;
      return e.isDirectory() ? [`${p}/`, ...tree(dir, p)] : [`${p} = ${readFileSync(join(dir, p), 'utf8')}`];
    })
    .sort();
}

class Sandbox {
  readonly dir = freshDir('dype-bad-project-');

  /** Makes the folders (relative to the sandbox). */
  mkdir(...paths: string[]): void {
    for (const p of paths) mkdirSync(join(this.dir, p), { recursive: true });
  }

  write(path: string, text: string): void {
    writeFileSync(join(this.dir, path), text);
  }

  tree(): string[] {
    return tree(this.dir);
  }

  run(args: readonly string[]): Promise<CliResult> {
    return runCliAsync(args, { cwd: this.dir });
  }

  /**
   * Runs `args` and checks: exit 1, no stack trace, exactly one stderr line
   * matching `want`, nothing on stdout, and the sandbox (the -o directory
   * with it) holding exactly what it held before, contents included.
   */
  async fails(args: readonly string[], want: RegExp | string): Promise<CliResult> {
    const before = this.tree();
    const r = await this.run(args);
    expect(r.status, `stderr: ${r.stderr}`).toBe(1);
    noStackTrace(r);
    expect(r.stdout).toBe('');
    const lines = r.stderr.split('\n').filter((l) => l !== '');
    expect(lines, r.stderr).toHaveLength(1);
    if (typeof want === 'string') expect(lines[0]).toBe(want);
    else expect(lines[0]).toMatch(want);
    expect(this.tree()).toEqual(before);
    return r;
  }

  dispose(): void {
    cleanup(this.dir);
  }
}

type Body = (s: Sandbox) => Promise<void>;
/** A test in its own sandbox; tests run concurrently since each spawns processes and waits. */
const test = (name: string, body: Body): void =>
  void it.concurrent(name, async () => {
    const s = new Sandbox();
    try {
      await body(s);
    } finally {
      s.dispose();
    }
  });

function noStackTrace(r: CliResult): void {
  const all = r.stdout + r.stderr;
  expect(stackFrames(all), all).toEqual([]);
  expect(all).not.toMatch(/internal error/i);
  expect(all).not.toMatch(/This is a bug in dype/);
}

/** Every command that reads a program, with what else it needs to get that far. */
const READERS: readonly (readonly string[])[] = [
  ['check'],
  ['ir'],
  ['plan'],
  ['run', '--input', 'x=@ones'],
  ['compile', '-o', 'out'],
  ['hls', '-o', 'out'],
];

describe('a program that cannot be read is DY3010 naming it (exit 1)', () => {
  for (const [cmd, ...rest] of READERS) {
    test(`dype ${cmd}: a missing file and a directory`, async (s) => {
      await s.fails(
        [cmd!, 'nope.dy', ...rest],
        'nope.dy: error DY3010: cannot read the program: no such file or directory',
      );
      s.mkdir('prog.dy');
      await s.fails([cmd!, 'prog.dy', ...rest], 'prog.dy: error DY3010: cannot read the program: it is a directory');
    });
  }
});

describe('compile and hls write the project all or nothing', () => {
  test('compile: project.json is a directory', async (s) => {
    s.mkdir('proj/project.json');
    await s.fails(
      ['compile', SPMV, '-o', 'proj'],
      'proj/project.json: error DY3017: cannot write the project: expected a file here, found a directory; remove it or choose another -o',
    );
  });

  test('compile: hls/Makefile is a directory, beside files that were there', async (s) => {
    s.mkdir('proj/hls/Makefile', 'proj/wasm');
    s.write('proj/keep.txt', 'mine');
    // A file the project would replace stays as it was when the project is not written.
    s.write('proj/wasm/spmv.wasm', 'old');
    await s.fails(
      ['compile', SPMV, '-o', 'proj'],
      /^proj\/hls\/Makefile: error DY3017: cannot write the project: expected a file here, found a directory/,
    );
  });

  test('compile: a file where the project needs a folder', async (s) => {
    s.mkdir('proj');
    s.write('proj/project.json', '{"stale": true}\n');
    s.write('proj/wasm', 'a file');
    await s.fails(
      ['compile', SPMV, '-o', 'proj', '--targets', 'wasm'],
      /^proj\/wasm: error DY3017: cannot write the project: expected a directory here \(the project writes proj\/wasm\/spmv\.[a-z.]+\), found a file/,
    );
  });

  test('hls: Makefile is a directory', async (s) => {
    s.mkdir('hl/ex/Makefile');
    await s.fails(
      ['hls', SPMV, '-o', 'hl/ex'],
      'hl/ex/Makefile: error DY3017: cannot write the project: expected a file here, found a directory; remove it or choose another -o',
    );
  });

  test('a project that can be written still replaces the files it writes and keeps the others', async (s) => {
    s.mkdir('proj/wasm');
    s.write('proj/keep.txt', 'mine');
    s.write('proj/project.json', 'old');
    const r = await s.run(['compile', SPMV, '-o', 'proj', '--targets', 'wasm']);
    expect(r.status, r.stderr).toBe(0);
    const after = s.tree();
    expect(after).toContain('proj/keep.txt = mine');
    expect(after).not.toContain('proj/project.json = old');
    expect(after.some((l) => l.startsWith('proj/wasm/spmv.wasm = '))).toBe(true);
    expect(after.some((l) => l.includes('.dype-staging'))).toBe(false);
  });
});

describe('writeProject undoes a failure met while moving files into place', () => {
  test('files moved in are removed, files replaced are put back, folders made are removed', async (s) => {
    s.mkdir('out/old');
    s.write('out/keep.txt', 'mine');
    s.write('out/old/replaced.txt', 'before');
    const before = s.tree();
    const out = join(s.dir, 'out');
    // 'a' is written as a file, then 'a/b' needs it to be a folder: the checks before writing cannot see
    // that (neither exists), so the failure comes after 'old/replaced.txt', 'new/x.txt' and 'a' were moved.
    expect(() =>
      writeProject(
        out,
        new Map([
          ['old/replaced.txt', 'after'],
          ['new/deep/x.txt', 'x'],
          ['a', 'a file'],
          ['a/b', 'b'],
        ]),
      ),
    ).toThrow(/out\/a\/b: error DY3017: cannot write the project: a component of the path is not a directory$/);
    expect(s.tree()).toEqual(before);
  });

  test('an output directory the failed call created is removed', async (s) => {
    const out = join(s.dir, 'new', 'proj');
    expect(() =>
      writeProject(
        out,
        new Map([
          ['a', 'a file'],
          ['a/b', 'b'],
        ]),
      ),
    ).toThrow(/error DY3017/);
    expect(s.tree()).toEqual([]);
  });
});

describe('dype compile checks --system as dype plan does, before any work', () => {
  /** plan's error for this --system, then compile's (without --profile: no target reads the system). */
  async function same(s: Sandbox, system: string, want: RegExp): Promise<void> {
    const plan = await s.run(['plan', SPMV, '--system', system]);
    expect(plan.status, plan.stderr).toBe(1);
    expect(plan.stderr.trimEnd()).toMatch(want);
    await s.fails(['compile', SPMV, '-o', 'c9', '--system', system], plan.stderr.trimEnd());
    await s.fails(['compile', SPMV, '-o', 'c9', '--targets', 'wasm', '--system', system], plan.stderr.trimEnd());
  }

  test('an unknown preset is DY3049', async (s) => {
    await same(s, 'nope', /^--system nope: error DY3049: no system file or preset named 'nope'/);
  });

  test('a directory is DY3010', async (s) => {
    s.mkdir('sys');
    await same(s, 'sys', /^sys: error DY3010: cannot read the file: it is a directory$/);
  });

  test('a missing file is DY3010', async (s) => {
    await same(s, 'sys/none.json', /none\.json: error DY3010: cannot read the file: no such file or directory$/);
  });

  test('a bad value is DY3021', async (s) => {
    const sys = JSON.parse(readFileSync(join(REPO_ROOT, 'systems/paper-1g1f.json'), 'utf8')) as {
      devices: { memBandwidthGBs: number }[];
    };
    sys.devices[0]!.memBandwidthGBs = -20;
    s.write('bad.json', `${JSON.stringify(sys, null, 2)}\n`);
    await same(
      s,
      'bad.json',
      /^bad\.json:\d+: error DY3021: `devices\[0\]\.memBandwidthGBs`: expected a positive number/,
    );
  });
});
