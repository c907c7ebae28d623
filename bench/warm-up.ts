/**
 * Not a bench: runs a call until V8 has optimised what it runs. An
 * executor's JavaScript (binding, the op calls) runs in V8's interpreter and
 * baseline tiers for its first calls, at 8-16 us a call more than once
 * optimised (a native SpMV on dnn_n1024-l1 took 28.5 us through the executor
 * over its first hundred calls and 13-14 us after, its library's launch
 * 11.5 us), and wasm tiers up from the baseline compiler as well: one
 * warm-up call left most timed calls in those tiers. The C baselines have no
 * such start.
 */
import { performance } from 'node:perf_hooks';

/** Calls `call` `calls` times, or for `ms` milliseconds if that comes first. */
export function warmUp(call: () => unknown, calls: number, ms: number): void {
  const t0 = performance.now();
  for (let n = 0; n < calls && performance.now() - t0 < ms; n++) call();
}
