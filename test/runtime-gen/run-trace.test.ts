/**
 * `dype run --trace FILE`: a Chrome trace-event file with the predicted
 * stages per device instance on the cost model's clock (pipelined over the
 * runs) and the measured runs on this host.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cleanup, example, freshDir, REPO_ROOT, runCliAsync } from '../helpers/cli.js';

const M = join(REPO_ROOT, '..', 'shared', 'data', 'matrices');
const dir = freshDir('dype-trace-');
afterAll(() => cleanup(dir));

interface Ev {
  name: string;
  ph: string;
  ts: number;
  dur?: number;
  pid: number;
  args?: Record<string, unknown>;
}

describe.skipIf(!existsSync(M))('dype run --trace', () => {
  it('writes stages and transfers per device on the model clock and the measured runs', async () => {
    const trace = join(dir, 'trace.json');
    const r = await runCliAsync([
      'run',
      example('gcn.dy'),
      '--backend',
      'wasm',
      '--input',
      `A=${join(M, 'cora.cites')}`,
      '--input',
      'X=@random',
      '--input',
      'W1=@random',
      '--input',
      'W2=@random',
      '--param',
      'f=16',
      '--param',
      'h=16',
      '--param',
      'c=7',
      '--system',
      'paper-1g1f',
      '--repeat',
      '3',
      '--threads',
      '1',
      '--json',
      '--trace',
      trace,
    ]);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    const out = JSON.parse(r.stdout) as {
      partition: { stages: { devices: string[]; ops: string[] }[] };
      timing: { runs: number };
    };
    const ev = (JSON.parse(readFileSync(trace, 'utf8')) as { traceEvents: Ev[] }).traceEvents;
    const names = new Map(
      ev.filter((e) => e.ph === 'M' && e.name === 'process_name').map((e) => [e.pid, String(e.args!['name'])]),
    );
    const devices = new Set(out.partition.stages.flatMap((s) => s.devices));
    for (const d of devices) expect([...names.values()]).toContain(d);
    expect([...names.values()]).toContain('this host (wasm, measured)');
    const compute = ev.filter(
      (e) => e.ph === 'X' && names.get(e.pid) !== 'this host (wasm, measured)' && !String(e.name).endsWith('in/out'),
    );
    // One compute slice per stage instance and run.
    expect(compute.length).toBe(out.timing.runs * out.partition.stages.reduce((a, s) => a + s.devices.length, 0));
    const measured = ev.filter((e) => e.ph === 'X' && names.get(e.pid) === 'this host (wasm, measured)');
    expect(measured).toHaveLength(out.timing.runs);
    for (const e of ev.filter((x) => x.ph === 'X')) expect(e.dur!).toBeGreaterThan(0);
  });
});
