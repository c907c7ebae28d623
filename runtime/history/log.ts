/**
 * A history file: one JSON record per line (HistoryRecord), appended as ops
 * run, read back by `dype calibrate --history`. Appends are single writes
 * of whole lines, so a history survives a crash with at most its last line
 * cut, which reading reports.
 */
import { appendFileSync, readFileSync } from 'node:fs';
import { InputError } from '../errors.js';
import { fsReason } from '../io/files.js';
import { HISTORY_VERSION, type HistoryRecord } from './types.js';

export class HistoryLog {
  constructor(readonly path: string) {}

  append(records: readonly HistoryRecord[]): void {
    if (records.length === 0) return;
    try {
      appendFileSync(this.path, records.map((r) => `${JSON.stringify(r)}\n`).join(''));
    } catch (e) {
      throw new InputError('DY3017', this.path, undefined, `cannot append to the history: ${fsReason(e)}`);
    }
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
  'ms',
  'concurrent',
];

/** Every record of a history file; a malformed line is one error naming file and line. */
export function readHistory(path: string): HistoryRecord[] {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new InputError('DY3010', path, undefined, `cannot read the history: ${fsReason(e)}`);
  }
  const out: HistoryRecord[] = [];
  text.split('\n').forEach((line, i) => {
    if (line.trim() === '') return;
    let r: HistoryRecord;
    try {
      r = JSON.parse(line) as HistoryRecord;
    } catch {
      throw new InputError(
        'DY3048',
        path,
        i + 1,
        'expected one JSON history record on the line (a cut or edited line?)',
      );
    }
    if (r.v !== HISTORY_VERSION)
      throw new InputError(
        'DY3048',
        path,
        i + 1,
        `history record version ${String(r.v)}; this build reads version ${HISTORY_VERSION}`,
      );
    const missing = FIELDS.filter((f) => r[f] === undefined);
    if (missing.length > 0) throw new InputError('DY3048', path, i + 1, `history record without ${missing.join(', ')}`);
    if (!(typeof r.ms === 'number' && r.ms >= 0 && typeof r.bytes === 'number' && r.bytes >= 0))
      throw new InputError('DY3048', path, i + 1, 'expected non-negative ms and bytes');
    out.push(r);
  });
  return out;
}
