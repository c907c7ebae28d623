/**
 * The key style of every `--json` output: snake_case (`median_ms`,
 * `period_ms`, `energy_scope`), as docs/CLI.md lists the keys and most of the
 * outputs have it. Objects built elsewhere with camelCase fields (features,
 * calibration figures) pass through `snakeKeys` on the way out. An object
 * that is the content of a file format is left in that format: the system
 * file in `dype calibrate --json` (`system`) reads as a system file does.
 */

/** `rowLenCv` -> `row_len_cv`, `top1PctNnzShare` -> `top1_pct_nnz_share`, `cacheMB` -> `cache_mb`. */
export function snakeCase(key: string): string {
  return key
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .replace(/([A-Z])([A-Z][a-z])/g, '$1_$2')
    .toLowerCase();
}

/** `v` with every object key in snake_case, deeply; arrays and values as they are. */
export function snakeKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(snakeKeys);
  if (v === null || typeof v !== 'object' || ArrayBuffer.isView(v)) return v;
  return Object.fromEntries(Object.entries(v).map(([k, x]) => [snakeCase(k), snakeKeys(x)]));
}

/** Each value's keys in snake_case, the record's own keys (names of inputs, outputs) as they are. */
export function snakeValues(r: Readonly<Record<string, unknown>>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(r).map(([k, x]) => [k, snakeKeys(x)]));
}
