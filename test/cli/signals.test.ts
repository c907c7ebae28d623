/**
 * A stop signal during the writing of outputs (cli/outputs.ts holdSignals): the write finishes, every output or
 * none, no temporary file is left, and the process then ends by that signal. The child sends the signal to itself
 * in the middle of the write, so that the test does not depend on when a signal from outside lands.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cleanup, freshDir } from '../helpers/cli.js';

const OUTPUTS = resolve(import.meta.dirname, '..', '..', 'dist', 'cli', 'outputs.js');
const dir = freshDir('dype-signals-');
afterAll(() => cleanup(dir));

function writeWithSignal(signal: NodeJS.Signals, own = false): ReturnType<typeof spawnSync> {
  const script = `
    import { writeSync } from 'node:fs';
    import { writeAllAtomic } from ${JSON.stringify(OUTPUTS)};
    ${own ? `process.on(${JSON.stringify(signal)}, (s) => { console.log('own listener', s); setTimeout(() => process.exit(0), 50); });` : ''}
    writeAllAtomic([
      { path: 'a.txt', data: 'first\\n' },
      { path: 'b.txt', data: (fd) => {
          process.kill(process.pid, ${JSON.stringify(signal)});
          writeSync(fd, 'second, written after the signal\\n');
        } },
    ]);
    console.log('returned');`;
  return spawnSync(process.execPath, ['--input-type=module', '-e', script], {
    cwd: dir,
    encoding: 'utf8',
  });
}

describe('stop signals while outputs are written', () => {
  it.each(['SIGINT', 'SIGTERM'] as const)(
    '%s mid-write: both outputs whole, no temporary file, then the process ends by the signal',
    (sig) => {
      for (const f of readdirSync(dir)) cleanup(join(dir, f));
      const r = writeWithSignal(sig);
      expect(r.signal, `${r.stderr}`).toBe(sig);
      expect(r.stdout).toBe('returned\n');
      expect(readFileSync(join(dir, 'a.txt'), 'utf8')).toBe('first\n');
      expect(readFileSync(join(dir, 'b.txt'), 'utf8')).toBe('second, written after the signal\n');
      expect(readdirSync(dir).sort()).toEqual(['a.txt', 'b.txt']);
    },
  );

  // An application that links the runtime and handles the signal itself keeps its own handling.
  it('a signal the process already listens for goes to that listener, and is not raised again', () => {
    for (const f of readdirSync(dir)) cleanup(join(dir, f));
    const r = writeWithSignal('SIGINT', true);
    expect(r.signal).toBeNull();
    expect(r.status).toBe(0);
    expect(r.stdout).toBe('returned\nown listener SIGINT\n');
    expect(readdirSync(dir).sort()).toEqual(['a.txt', 'b.txt']);
  });
});
