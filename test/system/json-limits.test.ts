/**
 * The JSON locator (runtime/system/json-locate.ts) at any nesting, and the
 * bound on a device's `count` (runtime/system/schema.ts): a system file
 * nested deeper than the call stack, which JSON.parse accepts, is one clean
 * error at its line (the scanner once recursed per level and overflowed at
 * a few thousand); a count past MAX_DEVICE_COUNT is DY3021 at its line
 * (the planner's work grows with the counts: a billion never finished).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers/cli.js';
import {
  JsonSyntaxError,
  locateJsonError,
  MAX_LOCATED_DEPTH,
  scanJson,
  type JsonPath,
} from '../../runtime/system/json-locate.js';
import { parseSystem } from '../../runtime/system/load.js';
import { MAX_DEVICE_COUNT } from '../../runtime/system/schema.js';
import { fails } from './fails.js';

const deepArrays = (n: number): string => `${'['.repeat(n)}${']'.repeat(n)}`;

function syntaxError(text: string): JsonSyntaxError {
  try {
    scanJson(text);
  } catch (e) {
    expect(e).toBeInstanceOf(JsonSyntaxError);
    return e as JsonSyntaxError;
  }
  throw new Error('expected a JsonSyntaxError');
}

describe('scanJson', () => {
  it('gives the line of each key, array element and the root', () => {
    const src = '{\n  "a": 1,\n  "b": [\n    2,\n    {\n      "c": true\n    }\n  ]\n}\n';
    const w = scanJson(src);
    expect(w.line([])).toBe(1);
    expect(w.line(['a'])).toBe(2);
    expect(w.line(['b'])).toBe(3);
    expect(w.line(['b', 0])).toBe(4);
    expect(w.line(['b', 1])).toBe(5);
    expect(w.line(['b', 1, 'c'])).toBe(6);
    expect(w.line(['b', 2])).toBeUndefined();
    expect(w.nearestLine(['b', 1, 'c', 'nosuch'])).toBe(6);
    expect(w.duplicates).toEqual([]);
  });

  it('finds repeated keys and keeps the first occurrence lines', () => {
    const w = scanJson('{\n  "a": {\n    "x": 1,\n    "x": 2\n  },\n  "a": {\n    "y": 3\n  }\n}');
    expect(w.duplicates).toEqual([
      { path: ['a', 'x'], line: 4 },
      { path: ['a'], line: 6 },
    ]);
    expect(w.line(['a', 'y'])).toBeUndefined();
    expect(w.line(['a'])).toBe(2);
    expect(w.line(['a', 'x'])).toBe(3);
  });

  it('scans nesting of any depth without recursion (arrays and objects)', () => {
    const n = 200_000;
    expect(scanJson(deepArrays(n)).line([])).toBe(1);
    const objects = `${'{"a":\n'.repeat(n)}1${'}'.repeat(n)}`;
    const w = scanJson(objects);
    // Lines are recorded down to MAX_LOCATED_DEPTH; deeper paths get their ancestor's there.
    const path = (k: number): JsonPath => Array.from({ length: k }, () => 'a');
    expect(w.line(path(MAX_LOCATED_DEPTH))).toBe(MAX_LOCATED_DEPTH);
    expect(w.line(path(MAX_LOCATED_DEPTH + 1))).toBeUndefined();
    expect(w.nearestLine(path(n))).toBe(MAX_LOCATED_DEPTH);
  });

  it('locates a syntax error deep inside', () => {
    const n = 100_000;
    const text = `[\n${'['.repeat(n)}1,,${']'.repeat(n + 1)}`;
    const e = syntaxError(text);
    expect(e.pos).toBe(2 + n + 2);
    expect(e.message).toMatch(/expected a value/);
    expect(syntaxError('['.repeat(n)).message).toMatch(/end of the file/);
  });
});

describe('locateJsonError', () => {
  const at = (text: string): ReturnType<typeof locateJsonError> => {
    try {
      JSON.parse(text);
    } catch (e) {
      return locateJsonError(text, e);
    }
    throw new Error('expected JSON.parse to fail');
  };
  it('turns V8 positions and position-less messages into a line and column', () => {
    expect(at('')).toMatchObject({ line: 1, column: 1, message: expect.stringMatching(/end of the file/) });
    const cut = at('{\n  "a": "unterminated');
    expect(cut).toMatchObject({
      line: 2,
      message: expect.stringMatching(/at the end of the file \(is it cut short\?\)/),
    });
    expect(at('{\n  "a": 1,\n  "b": tru\n}')).toMatchObject({ line: 3, column: 8 });
    expect(at('\u0000\u00ff')).toMatchObject({ line: 1, column: 1 });
  });
});

describe('system files', () => {
  const preset = readFileSync(join(REPO_ROOT, 'systems', 'paper-1g1f.json'), 'utf8');
  const withCount = (count: number): string => {
    const s = JSON.parse(preset) as { devices: { count: number }[] };
    s.devices[1]!.count = count;
    return JSON.stringify(s, null, 2);
  };
  const lineOf = (src: string, needle: string): number => src.split('\n').findIndex((l) => l.includes(needle)) + 1;

  it('a field nested deeper than the stack is DY3021 at its key', () => {
    for (const depth of [3_000, 5_000, 200_000]) {
      const e = fails(`{\n  "description": "x",\n  "name": ${deepArrays(depth)}\n}\n`);
      expect(e.code).toBe('DY3021');
      expect(e.line).toBe(3);
      expect(e.detail).toBe('`name`: expected a string, got an array of 1 entry');
    }
  });

  it(`a device count up to ${MAX_DEVICE_COUNT} is accepted, more is DY3021 at its line`, () => {
    expect(MAX_DEVICE_COUNT).toBe(16);
    expect(parseSystem(withCount(MAX_DEVICE_COUNT), 'sys.json').devices[1]!.count).toBe(MAX_DEVICE_COUNT);
    for (const count of [MAX_DEVICE_COUNT + 1, 1_000_000_000]) {
      const src = withCount(count);
      const e = fails(src);
      expect(e.code).toBe('DY3021');
      expect(e.line).toBe(lineOf(src, `"count": ${count}`));
      expect(e.detail).toMatch(
        new RegExp(
          `^\`devices\\[1\\]\\.count\`: expected at most ${MAX_DEVICE_COUNT} instances of one device .*, got ${count}$`,
        ),
      );
    }
  });
});
