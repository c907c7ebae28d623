/**
 * Options a new user gets wrong, through the built command (issue 16 item
 * 6): each gets one clear diagnostic with a DY code (exit 1) or a warning,
 * fails before doing the work, and leaves no file behind.
 */
import { existsSync, readdirSync } from 'node:fs';
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
    const want = new RegExp(`^--system paper-3g3f: error DY3049: no system file or preset named 'paper-3g3f'; presets: ${presets.join(', ')} \\(or give the path of a system JSON file\\)$`, 'm');
    const out = join(work, 'preset-compile');
    const rs = await Promise.all([
      runCliAsync(['plan', example('spmv.dy'), '--input', `A=${KARATE}`, '--input', 'x=@ones', '--system', 'paper-3g3f']),
      runCliAsync(['run', example('spmv.dy'), '--input', `A=${KARATE}`, '--input', 'x=@ones', '--system', 'paper-3g3f']),
      runCliAsync(['compile', example('spmv.dy'), '-o', out, '--targets', 'runtime', '--profile', `A=${KARATE}`, '--system', 'paper-3g3f']),
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
    expect(r.stdout.replace(/\s+/g, ' ')).toContain(`presets: ${['paper-1g1f', 'paper-2g2f', 'h200-cpu', 'this-machine'].join(', ')}`);
    expect(['paper-1g1f', 'paper-2g2f', 'h200-cpu', 'this-machine'].sort()).toEqual(presetNames());
  });
});

void readdirSync;
