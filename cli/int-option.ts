/**
 * Whole-number options (--repeat, --threads, --jobs): one parse, so every
 * command refuses the same spellings. Number() alone would take '1e3',
 * '0x10', '10.0' and ' 5', which are not what anyone means by a count.
 */
import { usage } from './errors.js';

/**
 * An option's whole number, written in plain decimal digits, at least `min`
 * and at most `max`: else a usage error (exit 2) naming the flag and what it
 * got.
 */
export function positiveInt(flag: string, v: string, min: number, max = Number.MAX_SAFE_INTEGER): number {
  const n = /^[0-9]+$/.test(v) ? Number(v) : NaN;
  if (!Number.isSafeInteger(n) || n < min) throw usage(`${flag} expects an integer >= ${min}, got '${v}'`);
  if (n > max) throw usage(`${flag} expects an integer <= ${max}, got '${v}'`);
  return n;
}
