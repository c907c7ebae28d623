/**
 * A Chrome trace-event timeline (the JSON array format Perfetto and
 * chrome://tracing open): one process per device instance, with a compute
 * track and a DMA track, plus a runtime process for switches and re-plans.
 * Two clocks side by side: the cost model's (compute and dma tracks: where
 * the planner predicts each stage) and the measured one (wall time of each
 * stage as it ran, named with its backend); ms, written as microseconds.
 */
import { writeFileSync } from 'node:fs';

interface TraceEvent {
  name: string;
  cat: string;
  ph: 'X' | 'i' | 'M';
  ts: number;
  dur?: number;
  pid: number;
  tid: number;
  s?: 'g' | 'p' | 't';
  args?: Record<string, unknown>;
}

export class TraceRecorder {
  private readonly events: TraceEvent[] = [];
  private readonly pids = new Map<string, number>();

  private pid(device: string): number {
    let p = this.pids.get(device);
    if (p === undefined) {
      p = this.pids.size + 1;
      this.pids.set(device, p);
      this.events.push({
        name: 'process_name',
        cat: '__metadata',
        ph: 'M',
        ts: 0,
        pid: p,
        tid: 0,
        args: { name: device },
      });
      this.events.push({
        name: 'thread_name',
        cat: '__metadata',
        ph: 'M',
        ts: 0,
        pid: p,
        tid: 1,
        args: { name: 'compute (modelled)' },
      });
      this.events.push({
        name: 'thread_name',
        cat: '__metadata',
        ph: 'M',
        ts: 0,
        pid: p,
        tid: 2,
        args: { name: 'dma (modelled)' },
      });
      this.events.push({
        name: 'thread_name',
        cat: '__metadata',
        ph: 'M',
        ts: 0,
        pid: p,
        tid: 3,
        args: { name: 'measured' },
      });
    }
    return p;
  }

  /** A span: `compute` and `dma` are the cost model's clock; `measured` is wall time as a stage really ran. */
  slice(
    device: string,
    track: 'compute' | 'dma' | 'measured',
    name: string,
    startMs: number,
    durMs: number,
    args?: Record<string, unknown>,
  ): void {
    if (!(durMs > 0)) return;
    this.events.push({
      name,
      cat: track,
      ph: 'X',
      ts: startMs * 1e3,
      dur: durMs * 1e3,
      pid: this.pid(device),
      tid: track === 'compute' ? 1 : track === 'dma' ? 2 : 3,
      ...(args ? { args } : {}),
    });
  }

  instant(device: string, name: string, atMs: number, args?: Record<string, unknown>): void {
    this.events.push({
      name,
      cat: 'runtime',
      ph: 'i',
      s: 'p',
      ts: atMs * 1e3,
      pid: this.pid(device),
      tid: 1,
      ...(args ? { args } : {}),
    });
  }

  /** Drops every event but the process names (a warm-up the timeline should not show). */
  clear(): void {
    const kept = this.events.filter((e) => e.ph === 'M');
    this.events.length = 0;
    this.events.push(...kept);
  }

  get size(): number {
    return this.events.filter((e) => e.ph !== 'M').length;
  }

  toJSON(): { traceEvents: TraceEvent[]; displayTimeUnit: 'ms' } {
    return { traceEvents: this.events, displayTimeUnit: 'ms' };
  }

  write(path: string): void {
    writeFileSync(path, JSON.stringify(this.toJSON()));
  }
}

/** What the clock needs of a pipeline stage (a planner Stage has it). */
export interface ClockStage {
  ops: string[];
  devices: string[];
  computeMs: number;
  transferMs: number;
  timeMs: number;
  periodMs: number;
  variants?: Record<string, string>;
}

/**
 * Places one input's stages on the clock: each stage starts when the input
 * has left the previous stage and its device instances are free (`free`,
 * updated: an instance is free again one period later, so the next input
 * overlaps); transfers are drawn before compute. Returns when the input
 * entered and left the pipeline.
 */
export function placeStages(
  tr: TraceRecorder | undefined,
  free: Map<string, number>,
  stages: readonly ClockStage[],
  ready: number,
  name: string,
  args?: Record<string, unknown>,
): { start: number; end: number } {
  let start = Infinity;
  for (const st of stages) {
    const begin = Math.max(ready, ...st.devices.map((i) => free.get(i) ?? 0));
    start = Math.min(start, begin);
    for (const i of st.devices) {
      free.set(i, begin + st.periodMs);
      tr?.slice(i, 'dma', `${name} in/out`, begin, st.transferMs);
      tr?.slice(i, 'compute', `${name} ${st.ops.join('+')}`, begin + (st.timeMs - st.computeMs), st.computeMs, {
        ...(st.variants ? { variants: st.variants } : {}),
        ...args,
      });
    }
    ready = begin + st.timeMs;
  }
  return { start: Number.isFinite(start) ? start : ready, end: ready };
}
