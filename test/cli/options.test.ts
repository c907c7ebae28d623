/**
 * Options a new user gets wrong, through the built command (issue 16 item
 * 6): each gets one clear diagnostic with a DY code (exit 1) or a warning,
 * fails before doing the work, and leaves no file behind.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { presetNames } from '../../runtime/system/presets.js';
import { cleanup, example, freshDir, runCliAsync, stackFrames, type CliResult } from '../helpers/cli.js';
import { MATRIX_DIR } from '../io/data.js';

const work = freshDir('dype-options-');
afterAll(() => cleanup(work));
const HAVE_DATA = existsSync(MATRIX_DIR);
const KARATE = join(MATRIX_DIR, 'karate.mtx');

function clean(r: CliResult): void {
  const all = r.stdout + r.stderr;
  expect(stackFrames(all), all).toEqual([]);
  expect(all).not.toMatch(/internal error|EEXIST|ENOENT/);
}

describe.skipIf(!HAVE_DATA)('--system', () => {
  it.concurrent('a misspelled preset lists the presets (plan, run, compile)', async () => {
    const presets = presetNames();
    expect(presets).toEqual(['h200-cpu', 'paper-1g1f', 'paper-2g2f', 'this-machine']);
    const want = new RegExp(
      `^--system paper-3g3f: error DY3049: no system file or preset named 'paper-3g3f'; presets: ${presets.join(', ')} \\(or give the path of a system JSON file\\)$`,
      'm',
    );
    const out = join(work, 'preset-compile');
    const rs = await Promise.all([
      runCliAsync([
        'plan',
        example('spmv.dy'),
        '--input',
        `A=${KARATE}`,
        '--input',
        'x=@ones',
        '--system',
        'paper-3g3f',
      ]),
      runCliAsync([
        'run',
        example('spmv.dy'),
        '--input',
        `A=${KARATE}`,
        '--input',
        'x=@ones',
        '--system',
        'paper-3g3f',
      ]),
      runCliAsync([
        'compile',
        example('spmv.dy'),
        '-o',
        out,
        '--targets',
        'runtime',
        '--profile',
        `A=${KARATE}`,
        '--system',
        'paper-3g3f',
      ]),
    ]);
    for (const r of rs) {
      expect(r.status, r.stderr).toBe(1);
      clean(r);
      expect(r.stderr).toMatch(want);
    }
    expect(existsSync(out)).toBe(false);
  });

  it.concurrent('the presets --help names are the presets there are', async () => {
    const r = await runCliAsync(['plan', '--help']);
    expect(r.stdout.replace(/\s+/g, ' ')).toContain(
      `presets: ${['paper-1g1f', 'paper-2g2f', 'h200-cpu', 'this-machine'].join(', ')}`,
    );
    expect(['paper-1g1f', 'paper-2g2f', 'h200-cpu', 'this-machine'].sort()).toEqual(presetNames());
  });
});

describe('-o paths that cannot take the output fail at once, with DY3017', () => {
  // Each command gets 20 s: Node's recursive mkdir never returns under /proc, which hung compile, hls and eval.
  const cmds: [string, string[]][] = [
    ['compile', ['compile', example('spmv.dy'), '--targets', 'wasm']],
    ['hls', ['hls', example('spmv.dy')]],
    ['eval', ['eval', '--quick']],
    ['calibrate', ['calibrate', '--quick']],
  ];

  it.concurrent('-o /proc/x: a special file system that takes no new entries', async (ctx) => {
    if (!existsSync('/proc/self')) ctx.skip();
    const rs = await Promise.all(
      cmds.map(([, args]) => runCliAsync([...args, '-o', '/proc/x'], { timeoutMs: 20_000 })),
    );
    rs.forEach((r, i) => {
      expect(r.signal, `${cmds[i]![0]} did not finish`).toBeNull();
      expect(r.status, r.stderr).toBe(1);
      clean(r);
      expect(r.stdout).toBe('');
      // Said before any work: the flag and the path, and why.
      expect(r.stderr).toMatch(
        /^-o \/proc\/x: error DY3017: cannot (create the output directory|write the output file): \/proc takes no new entries/,
      );
    });
  });

  it.concurrent('-o naming an existing file where a directory goes', async () => {
    const file = join(work, 'a-file');
    writeFileSync(file, 'x');
    const rs = await Promise.all(
      cmds
        .filter(([c]) => c !== 'calibrate')
        .map(([, args]) => runCliAsync([...args, '-o', file], { timeoutMs: 20_000 })),
    );
    for (const r of rs) {
      expect(r.status, r.stderr).toBe(1);
      clean(r);
      expect(r.stderr).toBe(
        `-o ${file}: error DY3017: expected a directory, found a file (give a new or an existing directory)\n`,
      );
    }
    expect(readFileSync(file, 'utf8')).toBe('x');
  });

  it.concurrent(
    'calibrate -o: a directory, or a file in a missing directory, is refused before timing anything',
    async () => {
      const [dir, missing] = await Promise.all([
        runCliAsync(['calibrate', '--quick', '-o', work], { timeoutMs: 20_000 }),
        runCliAsync(['calibrate', '--quick', '-o', join(work, 'no', 'm.json')], { timeoutMs: 20_000 }),
      ]);
      expect(dir.status).toBe(1);
      expect(dir.stderr).toBe(`-o ${work}: error DY3017: expected a file, found a directory\n`);
      expect(missing.status).toBe(1);
      expect(missing.stderr).toMatch(
        /^-o .*m\.json: error DY3017: cannot write the output file: its directory .*no does not exist$/m,
      );
      for (const r of [dir, missing]) expect(r.stdout).toBe('');
    },
  );
});

describe.skipIf(!HAVE_DATA)('--threads above the cores', () => {
  it.concurrent('run caps it at the cores with a warning naming them', async () => {
    const cores = availableParallelism();
    const asked = 4 * cores + 1;
    const r = await runCliAsync([
      'run',
      example('spmv.dy'),
      '--input',
      `A=${KARATE}`,
      '--input',
      'x=@ones',
      '--threads',
      String(asked),
      '--json',
    ]);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).toBe(
      `--threads ${asked}: warning DY3050: this machine has ${cores} core${cores === 1 ? '' : 's'}; using ${cores} thread${cores === 1 ? '' : 's'} (threads beyond the cores add memory and switching, not speed)\n`,
    );
    expect((JSON.parse(r.stdout) as { threads: number }).threads).toBe(cores);
  });

  it.concurrent('at or below the cores: no warning', async () => {
    const r = await runCliAsync([
      'run',
      example('spmv.dy'),
      '--input',
      `A=${KARATE}`,
      '--input',
      'x=@ones',
      '--threads',
      String(availableParallelism()),
      '--json',
    ]);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).toBe('');
  });
});

describe('compile --targets that need profiles, without --profile', () => {
  it.concurrent('names the targets asked for, before compiling, and writes nothing', async () => {
    const cases: [string, string][] = [
      ['report', 'the report target needs'],
      ['runtime', 'the runtime target needs'],
      ['wasm,report,runtime', 'the report and runtime targets need'],
    ];
    const rs = await Promise.all(
      cases.map(([t], i) =>
        runCliAsync(['compile', example('spmv.dy'), '-o', join(work, `targets-${i}`), '--targets', t]),
      ),
    );
    rs.forEach((r, i) => {
      expect(r.status, r.stderr).toBe(1);
      clean(r);
      expect(r.stderr).toBe(
        `<command line>:1:1: error DY6300: ${cases[i]![1]} profile inputs: give --profile NAME=PATH (one or more sample matrices per sparse parameter)\n`,
      );
      expect(existsSync(join(work, `targets-${i}`))).toBe(false);
    });
  });
});

// Regression: --profile with --targets wasm was ignored unread (a missing file too), and 'wasm,,cuda' was taken.
describe('compile: --profile without a target that reads it, and an empty target', () => {
  it.concurrent('each a usage error before anything is written', async () => {
    const cases: [string[], RegExp][] = [
      [
        ['--targets', 'wasm', '--profile', 'A=nofile.mtx'],
        /--profile is read only by the targets that build guards \(runtime, report\); --targets wasm has none of them/,
      ],
      [['--targets', 'wasm,,cuda'], /--targets expects a comma-separated list of targets, got 'wasm,,cuda'/],
    ];
    const rs = await Promise.all(
      cases.map(([args], i) => runCliAsync(['compile', example('spmv.dy'), '-o', join(work, `unread-${i}`), ...args])),
    );
    rs.forEach((r, i) => {
      expect(r.status, r.stderr).toBe(2);
      expect(r.stderr).toMatch(cases[i]![1]);
      expect(existsSync(join(work, `unread-${i}`))).toBe(false);
    });
  });
});

describe.skipIf(!HAVE_DATA)('the timing line says what one cold run includes', () => {
  const args = ['run', example('spmv.dy'), '--input', `A=${KARATE}`, '--input', 'x=@ones', '--threads', '1'];
  it.concurrent('reference: no compilation (the interpreter compiles nothing)', async () => {
    const r = await runCliAsync([...args, '--backend', 'reference']);
    expect(r.status, r.stderr).toBe(0);
    const time = r.stdout.split('\n').find((l) => l.includes('time:'))!;
    expect(time).toMatch(
      /one cold run: binding and checking the inputs included; the interpreter compiles nothing; --repeat N times warm runs\)$/,
    );
  });
  it.concurrent("wasm: input copies and the first call's compilation", async () => {
    const r = await runCliAsync([...args, '--backend', 'wasm']);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toMatch(
      /time: .*\(one cold run: input copies into wasm memory and the engine's first-call compilation included; --repeat N times warm runs\)$/m,
    );
  });
});

describe.skipIf(!HAVE_DATA)('--json keys are snake_case', () => {
  /** Keys with a lower-case letter or digit followed by a capital (camelCase), anywhere in `v`. */
  const camelKeys = (v: unknown): string[] => {
    if (Array.isArray(v)) return v.flatMap(camelKeys);
    if (v === null || typeof v !== 'object') return [];
    return Object.entries(v).flatMap(([k, x]) => [...(/[a-z0-9][A-Z]/.test(k) ? [k] : []), ...camelKeys(x)]);
  };
  const input = ['--input', `A=${KARATE}`, '--input', 'x=@ones'];

  it.concurrent('run and plan, features included (rowLenCv was camelCase beside median_ms)', async () => {
    const [run, plan] = await Promise.all([
      runCliAsync(['run', example('spmv.dy'), ...input, '--threads', '1', '--json']),
      runCliAsync(['plan', example('spmv.dy'), ...input, '--json']),
    ]);
    for (const r of [run, plan]) {
      expect(r.status, r.stderr).toBe(0);
      const j = JSON.parse(r.stdout) as { features: { A: Record<string, unknown> } };
      expect(camelKeys(j)).toEqual([]);
      expect(j.features.A).toHaveProperty('row_len_cv');
      expect(j.features.A).toHaveProperty('top1_pct_nnz_share');
    }
    // The JSON keys docs/CLI.md lists stay.
    const j = JSON.parse(run.stdout) as { timing: Record<string, number | string> };
    expect(Object.keys(j.timing)).toEqual(['runs', 'median_ms', 'min_ms', 'clock']);
  });
});
