/**
 * Every command's --help states the system it plans for without --system,
 * and that is the system it uses (issue 16 item 4): each command is run
 * without --system and its output compared with the stated default.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { historyRecord } from '../helpers/history-record.js';
import { afterAll, describe, expect, it } from 'vitest';
import { cleanup, example, freshDir, runCliAsync } from '../helpers/cli.js';
import { MATRIX_DIR } from '../io/data.js';

const HAVE_DATA = existsSync(MATRIX_DIR);

const work = freshDir('dype-defaults-');
afterAll(() => cleanup(work));

/** The preset `dype CMD --help` names as the --system default, and the reason it gives. */
async function statedDefault(cmd: string): Promise<{ system: string; why: string }> {
  const r = await runCliAsync([cmd, '--help']);
  expect(r.status).toBe(0);
  const help = r.stdout.replace(/\s+/g, ' ');
  const m = /--system <FILE\|PRESET> [^(]*\(default ([\w-]+)(?:, as dype plan)?: ([^;)]+)/.exec(help);
  expect(m, help).not.toBeNull();
  return { system: m![1]!, why: m![2]! };
}

async function json(args: string[]): Promise<Record<string, unknown>> {
  const r = await runCliAsync(args);
  expect(r.status, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as Record<string, unknown>;
}

describe.skipIf(!HAVE_DATA)('the default system each --help states is the one the command uses', () => {
  const A = `A=${join(MATRIX_DIR, 'karate.mtx')}`;

  it.concurrent('run: this machine, where it executes', async () => {
    const d = await statedDefault('run');
    expect(d.system).toBe('this-machine');
    expect(d.why).toMatch(/executes on this machine/);
    const j = await json(['run', example('spmv.dy'), '--input', A, '--input', 'x=@ones', '--threads', '1', '--json']);
    expect((j['partition'] as { system: string }).system).toBe(d.system);
  });

  it.concurrent("plan: the paper's two-GPU two-FPGA box", async () => {
    const d = await statedDefault('plan');
    expect(d.why).toMatch(/two GPUs and two FPGAs/);
    const j = await json(['plan', example('spmv.dy'), '--input', A, '--input', 'x=@ones', '--json']);
    expect(j['system']).toBe(d.system);
  });

  it.concurrent('ir: as plan', async () => {
    const d = await statedDefault('ir');
    expect(d.system).toBe((await statedDefault('plan')).system);
    // A graph large enough that the partition depends on the system.
    const args = [
      'ir',
      example('gcn.dy'),
      '--input',
      `A=${join(MATRIX_DIR, 'luxembourg_osm.mtx')}`,
      '--param',
      'f=64',
      '--param',
      'h=64',
      '--param',
      'c=16',
    ];
    const [plain, stated, other] = await Promise.all([
      runCliAsync(args),
      runCliAsync([...args, '--system', d.system]),
      runCliAsync([...args, '--system', 'paper-1g1f']),
    ]);
    expect(plain.status, plain.stderr).toBe(0);
    expect(plain.stdout).toBe(stated.stdout);
    expect(plain.stdout).not.toBe(other.stdout);
  });

  it.concurrent('compile: the one-GPU one-FPGA box, recorded in plan.json', async () => {
    const d = await statedDefault('compile');
    expect(d.why).toMatch(/one CPU, one GPU and one FPGA/);
    const out = join(work, 'compile');
    const r = await runCliAsync(['compile', example('spmv.dy'), '-o', out, '--targets', 'runtime', '--profile', A]);
    expect(r.status, r.stderr).toBe(0);
    const plan = JSON.parse(readFileSync(join(out, 'plan.json'), 'utf8')) as { system: { name: string } };
    expect(plan.system.name).toBe(d.system);
  });

  it.concurrent('calibrate --history: this machine, where the runs were measured', async () => {
    const d = await statedDefault('calibrate');
    // One run of this machine's CPU (an empty history is DY3048: it refits nothing).
    const h = join(work, 'one.jsonl');
    writeFileSync(h, `${JSON.stringify(historyRecord({}))}\n`);
    const j = await json(['calibrate', '--history', h, '--json']);
    expect(j['system']).toBe(d.system);
  });
});
