/**
 * A discrete-event engine over a task graph. Compute tasks hold one device
 * instance (a non-preemptive server; among waiting tasks the oldest input
 * goes first). Transfers first pay a fixed setup latency, then move their
 * bytes as a fluid over every link they cross: each link's bandwidth is
 * shared equally among the transfers on it, and a transfer moves at the
 * slowest of its shares. Delays take fixed time and hold nothing.
 */

export type Task =
  | { kind: 'compute'; deps: number[]; input: number; label: string; instance: number; ms: number }
  | {
      kind: 'transfer';
      deps: number[];
      input: number;
      label: string;
      links: number[];
      bytes: number;
      latencyMs: number;
      endpoints: number[];
    }
  | { kind: 'delay'; deps: number[]; input: number; label: string; ms: number };

export interface Link {
  name: string;
  /** Bytes per ms. */
  bytesPerMs: number;
}

export interface Timing {
  start: number;
  /** For transfers: when the setup latency ended and bytes began to move. */
  dataStart: number;
  end: number;
}

const EPS = 1e-12;

/** A binary min-heap of (time, task). */
class Timers {
  private at: number[] = [];
  private task: number[] = [];
  get size(): number {
    return this.at.length;
  }
  peek(): number {
    return this.at.length ? this.at[0]! : Infinity;
  }
  private less(i: number, j: number): boolean {
    return this.at[i]! < this.at[j]! || (this.at[i] === this.at[j] && this.task[i]! < this.task[j]!);
  }
  private swap(i: number, j: number): void {
    [this.at[i], this.at[j]] = [this.at[j]!, this.at[i]!];
    [this.task[i], this.task[j]] = [this.task[j]!, this.task[i]!];
  }
  push(at: number, task: number): void {
    this.at.push(at);
    this.task.push(task);
    for (let i = this.at.length - 1; i > 0;) {
      const up = (i - 1) >> 1;
      if (!this.less(i, up)) break;
      this.swap(i, up);
      i = up;
    }
  }
  pop(): number {
    const top = this.task[0]!;
    const last = this.at.length - 1;
    this.swap(0, last);
    this.at.pop();
    this.task.pop();
    for (let i = 0; ;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < this.at.length && this.less(l, m)) m = l;
      if (r < this.at.length && this.less(r, m)) m = r;
      if (m === i) break;
      this.swap(i, m);
      i = m;
    }
    return top;
  }
}

export function runTasks(tasks: readonly Task[], instanceCount: number, links: readonly Link[]): Timing[] {
  const n = tasks.length;
  const timing: Timing[] = tasks.map(() => ({ start: NaN, dataStart: NaN, end: NaN }));
  const waiting = new Int32Array(n);
  const succ: number[][] = tasks.map(() => []);
  tasks.forEach((t, i) => {
    waiting[i] = t.deps.length;
    for (const d of t.deps) {
      if (d >= i) throw new Error(`simulation: task ${i} depends on a later task ${d}`);
      succ[d]!.push(i);
    }
  });
  const queues: number[][] = Array.from({ length: instanceCount }, () => []);
  const busy: number[] = new Array<number>(instanceCount).fill(-1);
  // Timed completions of compute tasks, delays and transfer setup phases.
  const timers = new Timers();
  const flowing = new Map<number, number>(); // transfer -> bytes left
  let now = 0;
  let done = 0;

  const startCompute = (inst: number): void => {
    const q = queues[inst]!;
    if (busy[inst]! >= 0 || q.length === 0) return;
    let best = 0;
    for (let k = 1; k < q.length; k++) {
      const a = tasks[q[k]!]!;
      const b = tasks[q[best]!]!;
      if (a.input < b.input || (a.input === b.input && q[k]! < q[best]!)) best = k;
    }
    const id = q.splice(best, 1)[0]!;
    busy[inst] = id;
    timing[id]!.start = now;
    timers.push(now + (tasks[id] as { ms: number }).ms, id);
  };

  const ready = (id: number): void => {
    const t = tasks[id]!;
    if (t.kind === 'compute') {
      queues[t.instance]!.push(id);
      startCompute(t.instance);
    } else {
      timing[id]!.start = now;
      timers.push(now + (t.kind === 'delay' ? t.ms : t.latencyMs), id);
    }
  };

  const finish = (id: number): void => {
    timing[id]!.end = now;
    done++;
    const t = tasks[id]!;
    if (t.kind === 'compute') {
      busy[t.instance] = -1;
      startCompute(t.instance);
    }
    for (const s of succ[id]!) if (--waiting[s]! === 0) ready(s);
  };

  for (let i = 0; i < n; i++) if (waiting[i] === 0) ready(i);

  const users = new Int32Array(links.length);
  const rates = (): Map<number, number> => {
    users.fill(0);
    for (const id of flowing.keys()) for (const l of (tasks[id] as { links: number[] }).links) users[l]!++;
    const r = new Map<number, number>();
    for (const id of flowing.keys()) {
      let rate = Infinity;
      for (const l of (tasks[id] as { links: number[] }).links) rate = Math.min(rate, links[l]!.bytesPerMs / users[l]!);
      r.set(id, rate);
    }
    return r;
  };

  while (done < n) {
    const r = rates();
    let next = timers.peek();
    for (const [id, left] of flowing) next = Math.min(next, now + left / r.get(id)!);
    if (!Number.isFinite(next)) throw new Error('simulation: deadlock (no task can progress)');
    const dt = next - now;
    now = next;
    const finished: number[] = [];
    for (const [id, left] of flowing) {
      const rate = r.get(id)!;
      const rest = left - rate * dt;
      // Finished when what is left would take under a picosecond-scale step: rounding in `now + left / rate` must not stall the clock.
      if (rest <= EPS * Math.max(1, (tasks[id] as { bytes: number }).bytes) || rest / rate <= 1e-9) finished.push(id);
      else flowing.set(id, rest);
    }
    for (const id of finished) flowing.delete(id);
    const due: number[] = [];
    while (timers.size > 0 && timers.peek() <= now) due.push(timers.pop());
    due.sort((a, b) => a - b);
    for (const task of due) {
      const t = tasks[task]!;
      if (t.kind === 'transfer' && Number.isNaN(timing[task]!.dataStart)) {
        timing[task]!.dataStart = now;
        if (t.bytes > 0 && t.links.length > 0) flowing.set(task, t.bytes);
        else finished.push(task);
      } else finished.push(task);
    }
    finished.sort((a, b) => a - b);
    for (const id of finished) finish(id);
  }
  return timing;
}
