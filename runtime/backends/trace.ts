/**
 * A Chrome trace-event timeline (the JSON array format Perfetto and
 * chrome://tracing open): one process per device instance, with a compute
 * track and a DMA track, plus a runtime process for switches and re-plans.
 * Times are the runtime's clock in ms (the cost model's for sim stages),
 * written as microseconds.
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
      this.events.push({ name: 'process_name', cat: '__metadata', ph: 'M', ts: 0, pid: p, tid: 0, args: { name: device } });
      this.events.push({ name: 'thread_name', cat: '__metadata', ph: 'M', ts: 0, pid: p, tid: 1, args: { name: 'compute' } });
      this.events.push({ name: 'thread_name', cat: '__metadata', ph: 'M', ts: 0, pid: p, tid: 2, args: { name: 'dma' } });
    }
    return p;
  }

  slice(device: string, track: 'compute' | 'dma', name: string, startMs: number, durMs: number, args?: Record<string, unknown>): void {
    if (!(durMs > 0)) return;
    this.events.push({ name, cat: track, ph: 'X', ts: startMs * 1e3, dur: durMs * 1e3, pid: this.pid(device), tid: track === 'compute' ? 1 : 2, ...(args ? { args } : {}) });
  }

  instant(device: string, name: string, atMs: number, args?: Record<string, unknown>): void {
    this.events.push({ name, cat: 'runtime', ph: 'i', s: 'p', ts: atMs * 1e3, pid: this.pid(device), tid: 1, ...(args ? { args } : {}) });
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
