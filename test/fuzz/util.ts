/**
 * Shared pieces of the fuzz tests: picking with the project's deterministic
 * Rng, classifying what a case threw, and collecting failures so that one
 * run reports every distinct problem (with a reproducer) instead of the first.
 */
import { DiagnosticError } from '../../ir/diagnostics.js';
import { InputError } from '../../runtime/errors.js';
import { Rng } from '../../runtime/random.js';

export { Rng };

/**
 * The suites use fixed seeds and case counts. For a longer exploratory run,
 * DYPE_FUZZ_SCALE multiplies the case counts and DYPE_FUZZ_SEED shifts the
 * seeds, e.g. `DYPE_FUZZ_SCALE=10 DYPE_FUZZ_SEED=7 npx vitest run test/fuzz`.
 */
export const FUZZ_SCALE = Math.max(0.01, Number(process.env.DYPE_FUZZ_SCALE ?? '1') || 1);
export const FUZZ_SEED_OFFSET = Number.parseInt(process.env.DYPE_FUZZ_SEED ?? '0', 10) || 0;

export function pick<T>(rng: Rng, xs: readonly T[]): T {
  if (xs.length === 0) throw new Error('pick from an empty list');
  return xs[rng.int(xs.length)]!;
}

export function chance(rng: Rng, p: number): boolean {
  return rng.next() < p;
}

/** Weighted choice: [weight, value] pairs. */
export function weighted<T>(rng: Rng, table: readonly (readonly [number, T])[]): T {
  const total = table.reduce((a, [w]) => a + w, 0);
  let x = rng.next() * total;
  for (const [w, v] of table) {
    if ((x -= w) < 0) return v;
  }
  return table[table.length - 1]![1];
}

/** What an exception is, for the "diagnostics or InputError, nothing else" rule. */
export type Outcome = 'diagnostics' | 'input-error' | 'other';

export function classify(e: unknown): Outcome {
  if (e instanceof DiagnosticError) return 'diagnostics';
  if (e instanceof InputError) return 'input-error';
  return 'other';
}

export function describeError(e: unknown): string {
  if (e instanceof Error) {
    const frame = (e.stack ?? '').split('\n').find((l) => /^\s+at\s/.test(l) && !l.includes('node_modules')) ?? '';
    return `${e.name}: ${e.message.split('\n')[0]}${frame ? ` [${frame.trim()}]` : ''}`;
  }
  return `non-Error thrown: ${String(e)}`;
}

export interface Failure {
  /** Which check failed (e.g. 'compile', 'pipeline', 'round-trip'). */
  stage: string;
  /** Case number and mutations applied, to reproduce. */
  where: string;
  problem: string;
  input: string;
}

/**
 * Collects failures, keeping the first few of each distinct (stage, problem)
 * signature, with the smallest input seen for it.
 */
export class Failures {
  private readonly bySignature = new Map<string, Failure & { count: number }>();

  add(f: Failure): void {
    const sig = `${f.stage}: ${f.problem.replace(/\d+/g, 'N').slice(0, 160)}`;
    const prev = this.bySignature.get(sig);
    if (!prev) this.bySignature.set(sig, { ...f, count: 1 });
    else {
      prev.count++;
      if (f.input.length < prev.input.length) Object.assign(prev, { ...f, count: prev.count });
    }
  }

  get size(): number {
    return this.bySignature.size;
  }

  /** Distinct failures for an assertion message (inputs clipped). */
  report(): string[] {
    return [...this.bySignature.values()].map(
      (f) =>
        `[${f.stage}] x${f.count} ${f.problem}\n  at ${f.where}\n  input: ${JSON.stringify(f.input.length > 1200 ? `${f.input.slice(0, 1200)}...` : f.input)}`,
    );
  }

  /** Only the failures whose stage matches. */
  stages(): Set<string> {
    return new Set([...this.bySignature.values()].map((f) => f.stage));
  }
}

/** Replaces [start, end) of `s` with `insert`. */
export function splice(s: string, start: number, end: number, insert: string): string {
  return s.slice(0, start) + insert + s.slice(end);
}
