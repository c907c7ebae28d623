/**
 * A history file: one JSON record per line (HistoryRecord), appended as ops
 * run, read back by `dype calibrate --history`. Appends are single writes
 * of whole lines, so a history survives a crash with at most its last line
 * cut, which reading reports.
 */
import { closeSync, existsSync, fstatSync, ftruncateSync, openSync, readSync, rmSync } from 'node:fs';
import { writeAllSync } from '../io/mtx-write.js';
import { holdSignals } from '../io/signals.js';
import { OPTIONAL_FEATURES, REQUIRED_FEATURES } from '../plan/types.js';
import { DEVICE_KINDS } from '../system/schema.js';
import { InputError, valueKind } from '../errors.js';
import { fsReason, readInputFile } from '../io/files.js';
import { HISTORY_VERSION, type HistoryRecord } from './types.js';

export class HistoryLog {
  /** Whether the file's first record was checked to be of this build's version (once, at the first append). */
  private checked = false;

  constructor(readonly path: string) {}

  /**
   * Appends whole records or nothing: a write cut short (a full disk) is undone by truncating the file back to its
   * size before, and a file this call created is removed, so that no history ends in a cut record that every later
   * read refuses.
   */
  append(records: readonly HistoryRecord[]): void {
    if (records.length === 0) return;
    holdSignals(() => this.appendHeld(records));
  }

  /** Refuses to add this build's records to a history of another version's, which no build could then read whole. */
  private checkVersion(): void {
    const v = firstVersion(this.path);
    if (v !== undefined && v !== HISTORY_VERSION)
      throw new InputError(
        'DY3017',
        this.path,
        1,
        `the history holds records of version ${String(v)}, and this build writes version ${HISTORY_VERSION}: record into a new file (a history an older build wrote is recorded again)`,
      );
  }

  private appendHeld(records: readonly HistoryRecord[]): void {
    const existed = existsSync(this.path);
    if (existed && !this.checked) this.checkVersion();
    this.checked = true;
    let fd: number | undefined;
    let before = 0;
    try {
      fd = openSync(this.path, 'a');
      before = fstatSync(fd).size;
      writeAllSync(fd, records.map((r) => `${JSON.stringify(r)}\n`).join(''));
    } catch (e) {
      if (fd !== undefined) {
        try {
          ftruncateSync(fd, before);
        } catch {
          // The error below names the cause; a file that cannot be truncated is left as the write left it.
        }
      }
      if (fd !== undefined && !existed) rmSync(this.path, { force: true });
      throw new InputError('DY3017', this.path, undefined, `cannot append to the history: ${fsReason(e)}`);
    } finally {
      if (fd !== undefined) closeSync(fd);
    }
  }
}

/** How much of the file's start is read for its first record's version. */
const HEAD_BYTES = 4096;

/** The version of a history's first record, where its first line is one (a record of either version fits HEAD_BYTES). */
function firstVersion(path: string): unknown {
  let fd: number | undefined;
  try {
    fd = openSync(path, 'r');
    const head = Buffer.alloc(HEAD_BYTES);
    const n = readSync(fd, head, 0, HEAD_BYTES, 0);
    const line = head
      .subarray(0, n)
      .toString('utf8')
      .replace(/^\uFEFF/, '')
      .split('\n', 1)[0]!;
    const r: unknown = JSON.parse(line);
    return typeof r === 'object' && r !== null && !Array.isArray(r) ? (r as { v?: unknown }).v : undefined;
  } catch {
    // Unreadable or no record on the first line: the append says why, or the reader, at that line.
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

const FIELDS: (keyof HistoryRecord)[] = [
  'system',
  'device',
  'instance',
  'kind',
  'backend',
  'kernel',
  'op',
  'opKind',
  'impl',
  'dtype',
  'split',
  'trips',
  'items',
  'flops',
  'bytes',
  'gathers',
  'loops',
  'columns',
  'ms',
  'concurrent',
];

/** Every record of a history file; a malformed line is one error naming file and line. */
export function readHistory(path: string): HistoryRecord[] {
  const raw = readInputFile(path, 'the history').toString('utf8');
  // A byte-order mark (an editor's save) is no part of the first record, as in programs, system files and matrices.
  const text = raw.startsWith('\uFEFF') ? raw.slice(1) : raw;
  const out: HistoryRecord[] = [];
  text.split('\n').forEach((line, i) => {
    if (line.trim() === '') return;
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch {
      throw new InputError(
        'DY3048',
        path,
        i + 1,
        'expected one JSON history record on the line (a cut or edited line?)',
      );
    }
    // null, an array, a string: valid JSON but no record (reading its fields would fail far from this line).
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
      throw new InputError(
        'DY3048',
        path,
        i + 1,
        `expected one JSON history record (an object) on the line, found ${valueKind(parsed)}`,
      );
    const r = parsed as HistoryRecord;
    if (r.v !== HISTORY_VERSION)
      throw new InputError(
        'DY3048',
        path,
        i + 1,
        `history record version ${String(r.v)}; this build reads version ${HISTORY_VERSION} (a history an older build wrote: record it again)`,
      );
    const missing = FIELDS.filter((f) => r[f] === undefined);
    if (missing.length > 0) throw new InputError('DY3048', path, i + 1, `history record without ${missing.join(', ')}`);
    const bad = badField(r);
    if (bad) throw new InputError('DY3048', path, i + 1, `history record: ${bad}`);
    out.push(r);
  });
  return out;
}

const TEXT_FIELDS = ['at', 'system', 'device', 'instance', 'backend', 'kernel', 'op', 'opKind', 'impl'] as const;
const COUNT_FIELDS = ['split', 'trips'] as const;
const AMOUNT_FIELDS = ['items', 'flops', 'bytes', 'gathers', 'loops', 'columns', 'ms'] as const;
const DTYPES: readonly unknown[] = ['f32', 'f64', 'i32', 'i64', 'bool'];

/**
 * What is wrong with a parsed record's fields, or undefined: a record the
 * fit reads goes into the system file, so a wrong type here would surface
 * later as a planner that prices nonsense, far from the line that caused it.
 */
function badField(r: HistoryRecord): string | undefined {
  const v = r as unknown as Record<string, unknown>;
  for (const f of TEXT_FIELDS)
    if (typeof v[f] !== 'string' || v[f] === '')
      return `${f} must be a non-empty string, found ${JSON.stringify(v[f])}`;
  if (!(DEVICE_KINDS as readonly unknown[]).includes(v.kind))
    return `kind must be one of ${DEVICE_KINDS.join(', ')}, found ${JSON.stringify(v.kind)}`;
  if (!DTYPES.includes(v.dtype)) return `dtype must be one of ${DTYPES.join(', ')}, found ${JSON.stringify(v.dtype)}`;
  for (const f of COUNT_FIELDS)
    if (!(Number.isSafeInteger(v[f]) && (v[f] as number) >= 1))
      return `${f} must be an integer >= 1, found ${JSON.stringify(v[f])}`;
  if (v.cold !== undefined && typeof v.cold !== 'boolean')
    return `cold must be true or false where given, found ${JSON.stringify(v.cold)}`;
  if (v.threads !== undefined && !(Number.isSafeInteger(v.threads) && (v.threads as number) >= 1))
    return `threads must be an integer >= 1 where given, found ${JSON.stringify(v.threads)}`;
  for (const f of AMOUNT_FIELDS)
    if (!(typeof v[f] === 'number' && Number.isFinite(v[f]) && v[f] >= 0))
      return `${f} must be a finite number >= 0, found ${JSON.stringify(v[f])}`;
  if (typeof v.concurrent !== 'boolean')
    return `concurrent must be true or false, found ${JSON.stringify(v.concurrent)}`;
  if (v.sparse !== undefined) {
    if (typeof v.sparse !== 'object' || v.sparse === null || Array.isArray(v.sparse))
      return `sparse must be an object of features, found ${JSON.stringify(v.sparse)}`;
    // The fields the models read (runtime/plan/types.ts); histories written before records held only those also
    // carry the runtime's other features (format 'csr', the sample's size), which nothing reads.
    const features = v.sparse as Record<string, unknown>;
    for (const k of REQUIRED_FEATURES)
      if (typeof features[k] !== 'number' || !Number.isFinite(features[k]))
        return `sparse.${k} must be a finite number, found ${JSON.stringify(features[k])}`;
    for (const k of OPTIONAL_FEATURES)
      if (features[k] !== undefined && (typeof features[k] !== 'number' || !Number.isFinite(features[k])))
        return `sparse.${k} must be a finite number where given, found ${JSON.stringify(features[k])}`;
  }
  return undefined;
}
