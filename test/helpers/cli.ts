/**
 * Running the built `dype` command (dist/cli/main.js, built by `tsc` before
 * vitest runs) in a child process, plus small helpers for the files the CLI
 * tests write into fresh temporary directories.
 */
import { execFile, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root, resolved from this file (test/helpers/). */
export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const CLI = resolve(REPO_ROOT, 'dist/cli/main.js');
export const EXAMPLES = resolve(REPO_ROOT, 'examples');

export function example(name: string): string {
  return join(EXAMPLES, name);
}

export interface CliResult {
  status: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Runs `node dist/cli/main.js ...args` with cwd (default: the repository root). */
export function runCli(args: readonly string[], opts: { cwd?: string; timeoutMs?: number } = {}): CliResult {
  const r = spawnSync(process.execPath, [CLI, ...args], {
    cwd: opts.cwd ?? REPO_ROOT,
    encoding: 'utf8',
    timeout: opts.timeoutMs ?? 30_000,
    env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0' },
  });
  if (r.error) throw r.error;
  return { status: r.status, signal: r.signal, stdout: r.stdout, stderr: r.stderr };
}

/** Like runCli, without blocking, so that independent CLI tests can run concurrently. */
export function runCliAsync(
  args: readonly string[],
  opts: { cwd?: string; timeoutMs?: number } = {},
): Promise<CliResult> {
  return new Promise((resolvePromise, reject) => {
    execFile(
      process.execPath,
      [CLI, ...args],
      {
        cwd: opts.cwd ?? REPO_ROOT,
        encoding: 'utf8',
        timeout: opts.timeoutMs ?? 60_000,
        maxBuffer: 64 * 1024 * 1024,
        env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0' },
      },
      (err, stdout, stderr) => {
        if (err && typeof err.code !== 'number') {
          // Spawn failure or a kill (timeout): not an exit status.
          if (err.killed || err.signal)
            resolvePromise({
              status: null,
              signal: (err.signal as NodeJS.Signals | undefined) ?? null,
              stdout,
              stderr,
            });
          else reject(err);
          return;
        }
        resolvePromise({ status: err ? (err.code as number) : 0, signal: null, stdout, stderr });
      },
    );
  });
}

/** A fresh temporary directory; remove it with `cleanup`. */
export function freshDir(prefix = 'dype-cli-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

export function cleanup(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}

/** Writes `lines` joined by newlines (with a final newline) to dir/name and returns the path. */
export function writeLines(dir: string, name: string, lines: readonly string[]): string {
  const p = join(dir, name);
  writeFileSync(p, lines.join('\n') + '\n');
  return p;
}

/** Every entry of `dir`, dotfiles included, sorted. */
export function listDir(dir: string): string[] {
  return readdirSync(dir).sort();
}

/** Lines that look like a JavaScript stack frame ("    at f (file:...)"). */
export function stackFrames(text: string): string[] {
  return text.split('\n').filter((l) => /^\s+at\s/.test(l));
}

export const MM_COORD_REAL = '%%MatrixMarket matrix coordinate real general';
export const MM_ARRAY_REAL = '%%MatrixMarket matrix array real general';

/**
 * `dype compile` arguments for a project whose partitions all run on the CPU: the wasm kernels and the generated
 * runtime (its guards keep to the CPU, the one kind the targets serve), built on `system` (default the CPU-only
 * this-machine) from `profiles` (paths to the sample matrices of parameter `param`, default A).
 */
export function cpuRuntimeCompileArgs(
  file: string,
  out: string,
  profiles: readonly string[],
  o: { system?: string; param?: string } = {},
): string[] {
  return [
    'compile',
    file,
    '-o',
    out,
    '--targets',
    'wasm,runtime',
    '--system',
    o.system ?? 'this-machine',
    ...profiles.flatMap((p) => ['--profile', `${o.param ?? 'A'}=${p}`]),
  ];
}
