/**
 * HistoryLog.append writes whole records or nothing: a write cut short (here a full disk, ENOSPC after half the
 * bytes) is undone, so the history never ends in a cut record that every later read refuses; and it adds nothing
 * to a history whose records are of another version (no build could read the mixed file whole).
 */
import { existsSync, readFileSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { HistoryLog, readHistory } from '../../runtime/history/log.js';
import type { HistoryRecord } from '../../runtime/history/types.js';
import { cleanup, freshDir } from '../helpers/cli.js';
import { historyRecord } from '../helpers/history-record.js';

const full = vi.hoisted(() => ({ on: false }));
vi.mock('../../runtime/io/mtx-write.js', async (original) => {
  const real = await original<typeof import('../../runtime/io/mtx-write.js')>();
  return {
    ...real,
    writeAllSync: (fd: number, text: string | Uint8Array): void => {
      if (!full.on) return real.writeAllSync(fd, text);
      const bytes = typeof text === 'string' ? Buffer.from(text) : text;
      writeSync(fd, bytes, 0, bytes.length >> 1);
      throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
    },
  };
});

const dir = freshDir('dype-history-append-');
afterAll(() => cleanup(dir));

const record = (ms: number): HistoryRecord => historyRecord({ ms, sparse: undefined });

describe('HistoryLog.append on a full disk', () => {
  it('an existing history keeps exactly its records', () => {
    const path = join(dir, 'h.jsonl');
    full.on = false;
    new HistoryLog(path).append([record(1), record(2)]);
    const before = readFileSync(path, 'utf8');
    full.on = true;
    expect(() => new HistoryLog(path).append([record(3), record(4)])).toThrow(
      /h\.jsonl: error DY3017: cannot append to the history: ENOSPC/,
    );
    full.on = false;
    expect(readFileSync(path, 'utf8')).toBe(before);
    expect(readHistory(path).map((r) => r.ms)).toEqual([1, 2]);
  });

  it('a history the failed append would have created is not left behind', () => {
    const path = join(dir, 'new.jsonl');
    full.on = true;
    expect(() => new HistoryLog(path).append([record(1)])).toThrow(/DY3017/);
    full.on = false;
    expect(existsSync(path)).toBe(false);
  });

  it('an empty history that existed stays, empty', () => {
    const path = join(dir, 'empty.jsonl');
    writeFileSync(path, '');
    full.on = true;
    expect(() => new HistoryLog(path).append([record(1)])).toThrow(/DY3017/);
    full.on = false;
    expect(readFileSync(path, 'utf8')).toBe('');
  });
});

describe('HistoryLog.append to a history of another version', () => {
  it("refuses before writing, naming both versions; this build's own history takes more records", () => {
    const path = join(dir, 'older.jsonl');
    const { loops: _l, columns: _c, ...older } = record(1);
    const text = `${JSON.stringify({ ...older, v: 1 })}\n`;
    writeFileSync(path, text);
    expect(() => new HistoryLog(path).append([record(2)])).toThrow(
      /older\.jsonl:1: error DY3017: the history holds records of version 1, and this build writes version 2: record into a new file/,
    );
    expect(readFileSync(path, 'utf8')).toBe(text);
    const ours = join(dir, 'ours.jsonl');
    const log = new HistoryLog(ours);
    log.append([record(1)]);
    log.append([record(2)]);
    new HistoryLog(ours).append([record(3)]);
    expect(readHistory(ours).map((r) => r.ms)).toEqual([1, 2, 3]);
  });
});
