/** Running nvcc, make and cmake from the CUDA tests: presence checks and a small concurrent job pool. */
import { execFile, spawnSync } from 'node:child_process';

export function have(cmd: string): boolean {
  const r = spawnSync(cmd, ['--version'], { encoding: 'utf8' });
  return !r.error && r.status === 0;
}

export interface Run {
  cmd: string;
  status: number;
  output: string;
}

export function run(
  cmd: string,
  args: readonly string[],
  cwd: string,
  timeoutMs = 240_000,
  env: NodeJS.ProcessEnv = process.env,
): Promise<Run> {
  return new Promise((resolve) => {
    execFile(cmd, [...args], { cwd, timeout: timeoutMs, maxBuffer: 16 << 20, env }, (err, stdout, stderr) => {
      const status = err
        ? typeof (err as { code?: unknown }).code === 'number'
          ? (err as { code: number }).code
          : 1
        : 0;
      resolve({ cmd: `${cmd} ${args.join(' ')}`, status, output: `${stdout}${stderr}` });
    });
  });
}

/** Runs the jobs at most `width` at a time (the machine has two cores). */
export async function pool<T>(jobs: readonly (() => Promise<T>)[], width: number): Promise<T[]> {
  const out: T[] = new Array(jobs.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < jobs.length) {
      const n = next++;
      out[n] = await jobs[n]!();
    }
  };
  await Promise.all(Array.from({ length: Math.min(width, jobs.length) }, worker));
  return out;
}
