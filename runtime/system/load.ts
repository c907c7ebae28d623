/**
 * Reading system files. Every problem with a file becomes ONE InputError that
 * names the file, the line (the key's line for a field) and, in plain words,
 * what was expected there; never a stack trace or a zod dump.
 */

import type { z } from 'zod';
import { InputError, type DataErrorCode } from '../errors.js';
import { readInputFile } from '../io/files.js';
import { locateJsonError, scanJson, type JsonLocations, type JsonPath } from './json-locate.js';
import { DEVICE_ID_PATTERN, systemSchema, systemShapeSchema } from './schema.js';
import type { SystemSpec } from './types.js';

/** Reads and validates a system file; InputError DY3010 when it cannot be read, DY3018-DY3026 when it is wrong. */
export function loadSystemFile(path: string): SystemSpec {
  return parseSystem(readInputFile(path).toString('utf8'), path);
}

/** Validates the text of a system file; `file` names it in errors. */
export function parseSystem(text: string, file: string): SystemSpec {
  const src = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text; // a UTF-8 byte order mark
  let data: unknown;
  try {
    data = JSON.parse(src);
  } catch (err) {
    throw jsonError(src, file, err);
  }
  let where: JsonLocations;
  try {
    where = scanJson(src);
  } catch (err) {
    // JSON.parse accepted it, so the scanner should too; if not, report what it saw.
    throw jsonError(src, file, err);
  }
  const dup = where.duplicates[0];
  if (dup !== undefined)
    throw new InputError(
      'DY3019',
      file,
      dup.line,
      `field \`${formatPath(dup.path)}\` appears twice in one object (JSON would silently keep the last); keep one`,
    );

  const r = systemSchema.safeParse(data);
  if (!r.success) {
    // The first problem in the file. A missing field has no line of its own (it
    // gets its object's), so problems at fields that are there come first; and
    // a missing field whose object has an unknown one (a misspelling, most
    // likely) yields to the latter.
    const missing = (i: Issue): boolean =>
      i.code === 'invalid_type' && issuePath(i).length > 0 && !has(data, issuePath(i));
    const unknownIn = new Set(
      r.error.issues.filter((i) => i.code === 'unrecognized_keys').map((i) => JSON.stringify(issuePath(i))),
    );
    const issues = r.error.issues
      .filter((i) => !(missing(i) && unknownIn.has(JSON.stringify(issuePath(i).slice(0, -1)))))
      .map((issue, order) => ({ issue, order, missing: missing(issue) ? 1 : 0, line: issueLine(issue, where) }));
    issues.sort((x, y) => x.missing - y.missing || x.line - y.line || x.order - y.order);
    const first = issues[0]!;
    const { code, detail } = describeIssue(first.issue, data);
    throw new InputError(code, file, first.line, detail);
  }
  const spec: SystemSpec = r.data;
  ORIGINS.set(spec, { file, line: (path) => where.nearestLine(path) });
  return spec;
}

/** The file a system was read from, and the line of a field in it: for errors found after loading (DY3030). */
export interface SystemOrigin {
  file: string;
  line(path: JsonPath): number;
}

const ORIGINS = new WeakMap<SystemSpec, SystemOrigin>();

/** Where `sys` (or the system it was derived from, `derivedSystem`) was read from; undefined for one built in code. */
export function systemOrigin(sys: SystemSpec): SystemOrigin | undefined {
  return ORIGINS.get(sys);
}

/** `derived`, a copy of `from` with some figures changed, keeps `from`'s origin. */
export function derivedSystem(from: SystemSpec, derived: SystemSpec): SystemSpec {
  const o = ORIGINS.get(from);
  if (o !== undefined && derived !== from) ORIGINS.set(derived, o);
  return derived;
}

/** The InputError for text that JSON.parse rejected, at the line and column json-locate.ts finds. */
function jsonError(text: string, file: string, err: unknown): InputError {
  const { line, column, message } = locateJsonError(text, err);
  return new InputError('DY3018', file, line, `invalid JSON at column ${column}: ${message}`);
}

/** `devices[1].memBandwidthGBs`; keys that are not plain names are quoted: `sources["a b"]`. */
export function formatPath(path: JsonPath): string {
  let out = '';
  for (const p of path) {
    if (typeof p === 'number') out += `[${p}]`;
    else if (/^[A-Za-z_$][\w$]*$/.test(p)) out += out === '' ? p : `.${p}`;
    else out += `[${JSON.stringify(p)}]`;
  }
  return out === '' ? '(the top level)' : out;
}

type Issue = z.core.$ZodIssue;

function issuePath(issue: Issue): (string | number)[] {
  return issue.path.filter((p): p is string | number => typeof p !== 'symbol');
}

function issueLine(issue: Issue, where: JsonLocations): number {
  const path = issuePath(issue);
  if (issue.code === 'unrecognized_keys' && issue.keys.length > 0) return where.nearestLine([...path, issue.keys[0]!]);
  return where.nearestLine(path);
}

function valueAt(data: unknown, path: JsonPath): unknown {
  let v = data;
  for (const p of path) {
    if (v === null || typeof v !== 'object') return undefined;
    v = (v as Record<string | number, unknown>)[p];
  }
  return v;
}

function has(data: unknown, path: JsonPath): boolean {
  if (path.length === 0) return true;
  const parent = valueAt(data, path.slice(0, -1));
  return (
    parent !== null &&
    typeof parent === 'object' &&
    Object.prototype.hasOwnProperty.call(parent, path[path.length - 1]!)
  );
}

/** Case-insensitively equal, or within two single-character edits. */
function similar(a: string, b: string): boolean {
  const x = a.toLowerCase();
  const y = b.toLowerCase();
  if (Math.abs(x.length - y.length) > 2) return false;
  let prev = Array.from({ length: y.length + 1 }, (_, j) => j);
  for (let i = 1; i <= x.length; i++) {
    const cur = [i];
    for (let j = 1; j <= y.length; j++)
      cur.push(Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + (x[i - 1] === y[j - 1] ? 0 : 1)));
    prev = cur;
  }
  return prev[y.length]! <= 2;
}

/** A value as the error shows it: numbers and strings literally, containers by kind. */
function show(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v))
    return v.length === 0 ? 'an empty array' : `an array of ${v.length} entr${v.length === 1 ? 'y' : 'ies'}`;
  if (typeof v === 'object') return 'an object';
  if (typeof v === 'string') return JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}...` : v);
  return String(v);
}

const TYPE_WORDS: Record<string, string> = {
  number: 'a number',
  int: 'an integer',
  string: 'a string',
  boolean: 'true or false',
  object: 'an object ({ ... })',
  array: 'an array ([ ... ])',
  record: 'an object ({ ... })',
};

function bound(kind: 'min' | 'max', origin: string, limit: number | bigint, inclusive: boolean): string {
  const n = Number(limit);
  if (origin === 'array' || origin === 'set')
    return kind === 'min' ? `at least ${n} entr${n === 1 ? 'y' : 'ies'}` : `at most ${n} entr${n === 1 ? 'y' : 'ies'}`;
  if (origin === 'string')
    return kind === 'min' && n === 1
      ? 'a non-empty string'
      : `a string of ${kind === 'min' ? 'at least' : 'at most'} ${n} characters`;
  if (kind === 'min' && n === 0) return inclusive ? 'a number >= 0' : 'a positive number';
  return `a number ${kind === 'min' ? (inclusive ? '>=' : '>') : inclusive ? '<=' : '<'} ${n}`;
}

/** The diagnostic code and plain-words detail for one zod issue. */
function describeIssue(issue: Issue, data: unknown): { code: DataErrorCode; detail: string } {
  const path = issuePath(issue);
  const field = formatPath(path);
  const got = show(valueAt(data, path));
  switch (issue.code) {
    case 'unrecognized_keys': {
      const allowed = knownKeysAt(path);
      const absent = allowed.filter((k) => !has(data, [...path, k]));
      const key = issue.keys[0]!;
      const guess = absent.find((k) => similar(k, key));
      const more =
        issue.keys.length > 1
          ? ` (and ${issue.keys
              .slice(1)
              .map((k) => `\`${k}\``)
              .join(', ')})`
          : '';
      return {
        code: 'DY3019',
        detail: `unknown field \`${formatPath([...path, key])}\`${more}${guess !== undefined ? `; did you mean \`${guess}\`?` : allowed.length > 0 ? `; expected only: ${allowed.join(', ')}` : ''}`,
      };
    }
    case 'invalid_type': {
      const want = TYPE_WORDS[issue.expected] ?? issue.expected;
      if (path.length > 0 && !has(data, path))
        return { code: 'DY3020', detail: `missing field \`${field}\`: expected ${expectedAt(path, want)}` };
      if (path.length === 0) return { code: 'DY3021', detail: `expected a JSON object at the top level, got ${got}` };
      return { code: 'DY3021', detail: `\`${field}\`: expected ${want}, got ${got}` };
    }
    case 'too_small':
      return {
        code: 'DY3021',
        detail: `\`${field}\`: expected ${bound('min', issue.origin, issue.minimum, issue.inclusive ?? true)}, got ${got}`,
      };
    case 'too_big':
      return {
        code: 'DY3021',
        detail: `\`${field}\`: expected ${bound('max', issue.origin, issue.maximum, issue.inclusive ?? true)}, got ${got}`,
      };
    case 'invalid_value':
      return {
        code: 'DY3021',
        detail: `\`${field}\`: expected one of ${issue.values.map((v) => JSON.stringify(v)).join(', ')}, got ${got}`,
      };
    case 'invalid_format':
      if (issue.format === 'regex' && issue.pattern === String(DEVICE_ID_PATTERN))
        return {
          code: 'DY3021',
          detail: `\`${field}\`: expected a device id (a lower-case letter, then lower-case letters, digits or _), got ${got}`,
        };
      return {
        code: 'DY3021',
        detail: `\`${field}\`: expected ${issue.format === 'regex' ? `text matching ${issue.pattern}` : `a ${issue.format}`}, got ${got}`,
      };
    case 'custom': {
      const code = (issue.params as { code?: DataErrorCode } | undefined)?.code ?? 'DY3021';
      return {
        code,
        detail: path.length > 0 && !issue.message.includes(field) ? `\`${field}\`: ${issue.message}` : issue.message,
      };
    }
    default:
      return { code: 'DY3021', detail: `\`${field}\`: ${issue.message}, got ${got}` };
  }
}

type Def = {
  type: string;
  shape?: Record<string, unknown>;
  element?: unknown;
  innerType?: unknown;
  valueType?: unknown;
  entries?: Record<string, unknown>;
  checks?: { _zod: { def: { check: string; value?: number; inclusive?: boolean; format?: string } } }[];
};
const defOf = (schema: unknown): Def => (schema as { _zod: { def: Def } })._zod.def;

/** The schema of the value at `path` (optional and default wrappers removed), if the path fits the schema. */
function schemaAt(path: JsonPath): unknown {
  const unwrap = (x: unknown): unknown => {
    let cur = x;
    for (
      let d = defOf(cur);
      d.innerType !== undefined && (d.type === 'optional' || d.type === 'default');
      d = defOf(cur)
    )
      cur = d.innerType;
    return cur;
  };
  let cur: unknown = unwrap(systemShapeSchema);
  for (const p of path) {
    const d = defOf(cur);
    if (d.type === 'object' && typeof p === 'string' && d.shape?.[p] !== undefined) cur = unwrap(d.shape[p]);
    else if (d.type === 'array' && typeof p === 'number') cur = unwrap(d.element);
    else if (d.type === 'record') cur = unwrap(d.valueType);
    else return undefined;
  }
  return cur;
}

/** The fields the strict object at `path` accepts, for the "expected only" hint. */
function knownKeysAt(path: JsonPath): string[] {
  const schema = schemaAt(path);
  const d = schema === undefined ? undefined : defOf(schema);
  return d?.type === 'object' && d.shape !== undefined ? Object.keys(d.shape) : [];
}

/** What the schema wants at `path`, in words: "a positive number", "an object with fields ...". */
function expectedAt(path: JsonPath, fallback: string): string {
  const schema = schemaAt(path);
  if (schema === undefined) return fallback;
  const d = defOf(schema);
  switch (d.type) {
    case 'number': {
      const checks = (d.checks ?? []).map((c) => c._zod.def);
      const int = checks.some((c) => c.check === 'number_format');
      const min = checks.find((c) => c.check === 'greater_than');
      const noun = int ? 'integer' : 'number';
      if (min?.value === 0) return min.inclusive ? `a${int ? 'n' : ''} ${noun} >= 0` : `a positive ${noun}`;
      return int ? 'an integer' : 'a number';
    }
    case 'string':
      return 'a string';
    case 'enum':
      return `one of ${Object.values(d.entries ?? {})
        .map((v) => JSON.stringify(v))
        .join(', ')}`;
    case 'object':
      return `an object with fields ${Object.keys(d.shape ?? {}).join(', ')}`;
    case 'array':
      return 'an array';
    case 'record':
      return 'an object';
    default:
      return fallback;
  }
}

/** Options the CLI offers on top of a system file (`--power-cap W`, `--no-p2p`). */
export interface SystemOverrides {
  powerCapW?: number;
  noP2p?: boolean;
}

/**
 * A copy of `s` with the overrides applied: `powerCapW` replaces the power cap;
 * `noP2p` removes every peer link, so transfers between accelerators stage
 * through host memory. The source map records both. A bad power cap is
 * InputError DY3015 naming `--power-cap`.
 */
export function applyOverrides(s: SystemSpec, o: SystemOverrides): SystemSpec {
  const out: SystemSpec = { ...s, devices: s.devices, peerLinks: [...s.peerLinks], constraints: { ...s.constraints } };
  const sources: Record<string, string> = { ...(s.sources ?? {}) };
  if (o.powerCapW !== undefined) {
    if (!Number.isFinite(o.powerCapW) || o.powerCapW <= 0)
      throw new InputError(
        'DY3015',
        '--power-cap',
        undefined,
        `expected a positive number of watts, got ${o.powerCapW}`,
      );
    out.constraints.powerCapW = o.powerCapW;
    sources['constraints.powerCapW'] = `set by --power-cap ${o.powerCapW}`;
  }
  if (o.noP2p === true) {
    out.peerLinks = [];
    sources['peerLinks'] = 'removed by --no-p2p: transfers between devices stage through host memory';
  }
  if (o.powerCapW !== undefined || o.noP2p === true) out.sources = sources;
  return derivedSystem(s, out);
}

const fmt = (x: number): string => (Number.isInteger(x) ? String(x) : String(Number(x.toPrecision(3))));

/** One line: `paper-1g1f: cpu (2x AMD EPYC 7543), 1x gpu (...), 1x fpga (...); P2P gpu<->fpga 10 GB/s; no power cap`. */
export function systemSummary(s: SystemSpec): string {
  const devices = s.devices.map((d) => `${d.count}x ${d.id} (${d.name})`).join(', ');
  const links =
    s.peerLinks.length === 0
      ? 'no P2P (transfers stage through host memory)'
      : `P2P ${s.peerLinks.map((l) => `${l.a}<->${l.b} ${fmt(l.bandwidthGBs)} GB/s`).join(', ')}`;
  const cap = s.constraints.powerCapW !== undefined ? `power cap ${fmt(s.constraints.powerCapW)} W` : 'no power cap';
  const bound =
    s.constraints.latencyBoundMs !== undefined ? `; latency bound ${fmt(s.constraints.latencyBoundMs)} ms` : '';
  return `${s.name}: ${devices}; ${links}; ${cap}${bound}`;
}
