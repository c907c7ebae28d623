/**
 * `--partition "<stages>"`: a partition written out. Stages are separated by
 * `|`, in program order; each is `DEVICE[*COUNT]:OPS`, where DEVICE is a
 * device id of the system, COUNT the instances it is split over (default 1)
 * and OPS a comma-separated list of op ids (`op1`), results (`H1`) or ranges
 * (`op0-op2`) that together are a contiguous run of the kernel's ops.
 * Example: `"cpu:op0|gpu:op1,op2,op3"`, `"gpu*2:T1-Y"`.
 */
import { InputError } from '../runtime/errors.js';
import type { StageChoice } from '../runtime/plan/dp.js';
import type { PlanSpec } from '../runtime/plan/types.js';
import type { SystemSpec } from '../runtime/system/types.js';

const bad = (text: string, why: string): InputError =>
  new InputError('DY3047', `--partition ${JSON.stringify(text)}`, undefined, why);

export function parsePartition(text: string, spec: PlanSpec, sys: SystemSpec): StageChoice[] {
  const ids = spec.ops.map((o) => o.id);
  const index = (name: string): number => {
    const byId = ids.indexOf(name);
    if (byId >= 0) return byId;
    // A result name stands for the op that computes it (the last one, for a value assigned twice).
    const byResult = spec.ops.map((o, i) => (o.result === name ? i : -1)).filter((i) => i >= 0);
    if (byResult.length > 0) return byResult[byResult.length - 1]!;
    throw bad(
      text,
      `no op or result '${name}' in kernel ${spec.kernel}; its ops are ${spec.ops.map((o) => `${o.id} (${o.result})`).join(', ')}`,
    );
  };
  const stages = text.split('|').map((s) => s.trim());
  const out: StageChoice[] = [];
  let next = 0;
  for (const st of stages) {
    const m = /^([a-z][a-z0-9_]*)(?:\*(\d+))?\s*:\s*(.+)$/.exec(st);
    if (!m) throw bad(text, `stage '${st}': expected DEVICE[*COUNT]:OPS, e.g. gpu:op1,op2 or gpu*2:op0-op3`);
    const [, device, countText, opsText] = m;
    const dev = sys.devices.find((d) => d.id === device);
    if (!dev)
      throw bad(
        text,
        `stage '${st}': system ${sys.name} has no device '${device}' (it has ${sys.devices.map((d) => d.id).join(', ')})`,
      );
    const count = countText === undefined ? 1 : Number(countText);
    if (!(count >= 1 && count <= dev.count))
      throw bad(text, `stage '${st}': ${device} has ${dev.count} instance(s); asked for ${countText}`);
    const picked: number[] = [];
    for (const part of opsText!.split(',').map((x) => x.trim())) {
      const r = /^([^-\s]+)\s*-\s*([^-\s]+)$/.exec(part);
      if (r) {
        const [a, b] = [index(r[1]!), index(r[2]!)];
        if (b < a) throw bad(text, `stage '${st}': range ${part} runs backwards`);
        for (let i = a; i <= b; i++) picked.push(i);
      } else picked.push(index(part));
    }
    const sorted = [...new Set(picked)].sort((a, b) => a - b);
    if (sorted[0] !== next || sorted.some((x, i) => x !== next + i))
      throw bad(
        text,
        `stage '${st}' must continue the kernel's ops in order from ${ids[next] ?? 'the end'}: stages hold contiguous runs of ${ids.join(', ')}`,
      );
    next += sorted.length;
    out.push({ start: sorted[0]!, end: next, device: dev.id, count });
  }
  if (next !== ids.length) throw bad(text, `ops ${ids.slice(next).join(', ')} are in no stage`);
  const over = instancesOver(out, sys);
  if (over !== undefined) throw bad(text, over);
  return out;
}

/**
 * Why a partition asks for more instances of a device than the system has, or undefined: each stage of a
 * pipeline runs on instances of its own (the next input's first stage runs beside this one's second), so the
 * stages on one device add up.
 */
export function instancesOver(choices: readonly StageChoice[], sys: SystemSpec): string | undefined {
  const asked = new Map<string, number>();
  for (const c of choices) asked.set(c.device, (asked.get(c.device) ?? 0) + c.count);
  for (const [device, n] of asked) {
    const have = sys.devices.find((d) => d.id === device)?.count ?? 0;
    if (n > have)
      return `its stages on ${device} ask for ${n} instance(s) in all and system ${sys.name} has ${have}: each stage runs on instances of its own, so put those ops in one stage or on other devices`;
  }
  return undefined;
}
