/**
 * Damaged JSON files reach the user as one clear error (docs/CLI.md): exit 1,
 * a stable code, the file and the line, no stack trace, never an internal
 * error (exit 70). A compiled project's own files (project.json, plan.json, a
 * wasm kernel's manifest) that are empty, cut short, binary or not an object
 * are DY3044 with the line and column where parsing failed; a system file
 * nested deeper than any stack (JSON.parse accepts it) is DY3021 at the
 * offending field's line; a device `count` past the bound (16) is DY3021 at
 * its line, at once instead of a planner that never finishes.
 *
 * Each test works on its own copy of one project compiled (with --profile,
 * so it has a plan.json) in beforeAll.
 */
import { cpSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  cleanup,
  example,
  freshDir,
  MM_COORD_REAL,
  REPO_ROOT,
  runCliAsync,
  stackFrames,
  writeLines,
  type CliResult,
} from '../helpers/cli.js';

const SPMV = example('spmv.dy');
const root = freshDir('dype-bad-json-');
const project = join(root, 'project');
afterAll(() => cleanup(root));

/** A good 3 x 3 matrix [[1,0,0],[0,2,0],[3,0,4]]. */
function goodA(dir: string): string {
  return writeLines(dir, 'A.mtx', [MM_COORD_REAL, '3 3 4', '1 1 1.0', '2 2 2.0', '3 1 3.0', '3 3 4.0']);
}

beforeAll(async () => {
  const a = goodA(root);
  const r = await runCliAsync(['compile', SPMV, '-o', project, '--profile', `A=${a}`], { timeoutMs: 120_000 });
  expect(r.status, r.stderr).toBe(0);
});

/** A fresh copy of the compiled project (and a matrix beside it) for one test. */
function copy(): { dir: string; proj: string; a: string } {
  const dir = freshDir('dype-bad-json-case-');
  const proj = join(dir, 'proj');
  cpSync(project, proj, { recursive: true });
  return { dir, proj, a: goodA(dir) };
}

function noStackTrace(r: CliResult): void {
  const all = r.stdout + r.stderr;
  expect(stackFrames(all), all).toEqual([]);
  expect(all).not.toMatch(/internal error/i);
  expect(all).not.toMatch(/This is a bug in dype/);
}

/** Exit 1, no stack trace, and a first stderr line matching `first`. */
function failsWith(r: CliResult, first: RegExp): void {
  expect(r.status, `stderr: ${r.stderr}`).toBe(1);
  noStackTrace(r);
  expect(r.stderr.split('\n')[0]).toMatch(first);
}

const esc = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Runs `body` on a fresh copy of the project, then removes the copy. */
const withCopy = (body: (c: { dir: string; proj: string; a: string }) => Promise<void>) => async (): Promise<void> => {
  const c = copy();
  try {
    await body(c);
  } finally {
    cleanup(c.dir);
  }
};

const runProject = (c: { proj: string; a: string }): Promise<CliResult> =>
  runCliAsync(['run', SPMV, '--project', c.proj, '--input', `A=${c.a}`, '--input', 'x=@ones'], { timeoutMs: 60_000 });

describe('a damaged project.json is DY3044 with its line, not an internal error', () => {
  it.concurrent(
    'empty: dype build and dype run --project',
    withCopy(async (c) => {
      const pj = join(c.proj, 'project.json');
      writeFileSync(pj, '');
      const re = new RegExp(
        `^${esc(pj)}:1: error DY3044: invalid JSON at column 1: .*expected a dype project description: recompile the project with dype compile$`,
      );
      failsWith(await runCliAsync(['build', c.proj, '--emulate'], { timeoutMs: 60_000 }), re);
      failsWith(await runProject(c), re);
    }),
  );

  it.concurrent(
    'cut short: the line and column where the text ends',
    withCopy(async (c) => {
      const pj = join(c.proj, 'project.json');
      const text = readFileSync(pj, 'utf8');
      const cut = text.slice(0, Math.floor(text.length / 2));
      writeFileSync(pj, cut);
      const lines = cut.split('\n');
      const r = await runProject(c);
      failsWith(
        r,
        new RegExp(
          `^${esc(pj)}:${lines.length}: error DY3044: invalid JSON at column ${lines[lines.length - 1]!.length + 1}: .*at the end of the file`,
        ),
      );
    }),
  );

  it.concurrent(
    'binary, and valid JSON that is not an object',
    withCopy(async (c) => {
      const pj = join(c.proj, 'project.json');
      writeFileSync(pj, Buffer.from([0x00, 0xff, 0xfe, 0x13, 0x80, 0x7b, 0x0a, 0x01]));
      failsWith(
        await runProject(c),
        new RegExp(`^${esc(pj)}:1: error DY3044: invalid JSON at column 1: expected a value`),
      );
      writeFileSync(pj, 'null\n');
      failsWith(
        await runCliAsync(['build', c.proj, '--emulate'], { timeoutMs: 60_000 }),
        new RegExp(`^${esc(pj)}: error DY3044: expected a dype project description \\(a JSON object\\), got null`),
      );
    }),
  );
});

describe('a damaged plan.json or wasm manifest is DY3044 with its line', () => {
  it.concurrent(
    'plan.json cut short (V8 gives a position) and empty (it gives none)',
    withCopy(async (c) => {
      const plan = join(c.proj, 'plan.json');
      const text = readFileSync(plan, 'utf8');
      // Inside a string of the second line: "Unterminated string in JSON at position N".
      const at = text.indexOf('"', text.indexOf('\n') + 1) + 3;
      writeFileSync(plan, text.slice(0, at));
      failsWith(
        await runProject(c),
        new RegExp(`^${esc(plan)}:2: error DY3044: invalid JSON at column \\d+: .*; expected a dype plan: recompile`),
      );
      writeFileSync(plan, '');
      failsWith(await runProject(c), new RegExp(`^${esc(plan)}:1: error DY3044: invalid JSON at column 1: `));
    }),
  );

  it.concurrent(
    'plan.json of the right format and version whose fields are missing or of the wrong kind',
    withCopy(async (c) => {
      const plan = join(c.proj, 'plan.json');
      const good = JSON.parse(readFileSync(plan, 'utf8')) as Record<string, unknown>;
      const cases: [Record<string, unknown>, RegExp][] = [
        [{ format: good.format, version: good.version }, /expected `system` to be a system with `devices`/],
        [{ ...good, kernels: [] }, /expected `kernels` to be an object of kernels/],
        [{ ...good, kernels: { spmv: { objective: 'speed', guards: {} } } }, /`kernels\.spmv\.objective`.*"speed"/],
        [
          { ...good, kernels: { spmv: { objective: 'energy', guards: { energy: 1 } } } },
          /`kernels\.spmv\.guards\.energy`/,
        ],
      ];
      for (const [json, why] of cases) {
        writeFileSync(plan, JSON.stringify(json));
        const r = await runProject(c);
        failsWith(r, new RegExp(`^${esc(plan)}: error DY3044: `));
        expect(r.stderr.split('\n')[0]).toMatch(why);
      }
    }),
  );

  it.concurrent(
    'plan.json or the manifest that is there but cannot be read (a folder) is DY3010',
    withCopy(async (c) => {
      const plan = join(c.proj, 'plan.json');
      rmSync(plan);
      mkdirSync(plan);
      failsWith(await runProject(c), new RegExp(`^${esc(plan)}: error DY3010: cannot read the project's file: `));
    }),
  );

  it.concurrent(
    'the wasm kernel manifest',
    withCopy(async (c) => {
      const manifest = join(c.proj, 'wasm', 'spmv.manifest.json');
      writeFileSync(manifest, '{\n  "kernel": "spmv",\n  "exports": [1, 2,,]\n}\n');
      failsWith(
        await runProject(c),
        new RegExp(
          `^${esc(manifest)}:3: error DY3044: invalid JSON at column \\d+: .*; expected a wasm kernel manifest`,
        ),
      );
    }),
  );
});

describe('system files: any nesting, and a bounded device count (DY3021)', () => {
  const plan = (dir: string, sys: string): Promise<CliResult> =>
    runCliAsync(['plan', SPMV, '--input', `A=${goodA(dir)}`, '--system', sys], { cwd: dir, timeoutMs: 60_000 });

  it.concurrent('a field nested 5,000 and 200,000 levels deep gets the line of its key', async () => {
    const dir = freshDir('dype-bad-json-case-');
    try {
      for (const depth of [5_000, 200_000]) {
        writeFileSync(
          join(dir, 'deep.json'),
          `{\n  "description": "x",\n  "name": ${'['.repeat(depth)}${']'.repeat(depth)}\n}\n`,
        );
        failsWith(
          await plan(dir, 'deep.json'),
          /^deep\.json:3: error DY3021: `name`: expected a string, got an array of 1 entry$/,
        );
      }
      // Cut short deep inside: the JSON error, located.
      writeFileSync(join(dir, 'cut.json'), `{\n  "name": ${'['.repeat(100_000)}`);
      failsWith(await plan(dir, 'cut.json'), /^cut\.json:2: error DY3018: invalid JSON at column \d+: /);
    } finally {
      cleanup(dir);
    }
  });

  it.concurrent('a device count of a billion is refused at its line, at once', async () => {
    const dir = freshDir('dype-bad-json-case-');
    try {
      const text = readFileSync(join(REPO_ROOT, 'systems', 'paper-1g1f.json'), 'utf8');
      const sys = JSON.parse(text) as { devices: { count: number }[] };
      sys.devices[1]!.count = 1_000_000_000;
      const src = JSON.stringify(sys, null, 2);
      writeFileSync(join(dir, 'huge.json'), src);
      const line = src.split('\n').findIndex((l) => l.includes('"count": 1000000000')) + 1;
      const t0 = Date.now();
      const r = await plan(dir, 'huge.json');
      failsWith(
        r,
        new RegExp(
          `^huge\\.json:${line}: error DY3021: \`devices\\[1\\]\\.count\`: expected at most 16 instances of one device .*got 1000000000$`,
        ),
      );
      expect(Date.now() - t0).toBeLessThan(30_000);
    } finally {
      cleanup(dir);
    }
  });
});
