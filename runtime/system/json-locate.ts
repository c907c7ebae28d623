/**
 * A small strict JSON scanner that remembers where each value is: for every
 * JSON path (`['devices', 1, 'memBandwidthGBs']`) the 1-based line of its key
 * (object members) or of its first character (array elements, the root). Used
 * to put a line number on schema errors, which zod reports by path only, and
 * to place syntax errors whose V8 message carries no position.
 */

export type JsonPath = readonly (string | number)[];

/** A JSON syntax error at a character offset of the text. */
export class JsonSyntaxError extends Error {
  constructor(
    public readonly pos: number,
    message: string,
  ) {
    super(message);
    this.name = 'JsonSyntaxError';
  }
}

export interface JsonLocations {
  /** 1-based line of the value at `path` (of its key for object members), if it exists. */
  line(path: JsonPath): number | undefined;
  /** 1-based line of `path`, or of its nearest ancestor that exists (the root at least). */
  nearestLine(path: JsonPath): number;
  /** Keys that occur twice in one object (JSON.parse silently keeps the last). */
  duplicates: { path: JsonPath; line: number }[];
}

/** Offsets at which each line starts; line k (1-based) starts at starts[k-1]. */
function lineStarts(text: string): number[] {
  const starts = [0];
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) === 10) starts.push(i + 1);
  return starts;
}

function lineIn(starts: number[], pos: number): number {
  let lo = 0;
  let hi = starts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (starts[mid]! <= pos) lo = mid;
    else hi = mid - 1;
  }
  return lo + 1;
}

/** 1-based line and column of a character offset (clamped to the text). */
export function positionOf(text: string, pos: number): { line: number; column: number } {
  const starts = lineStarts(text);
  const p = Math.max(0, Math.min(pos, text.length));
  const line = lineIn(starts, p);
  return { line, column: p - starts[line - 1]! + 1 };
}

const key = (path: JsonPath): string => JSON.stringify(path);

function describeChar(text: string, pos: number): string {
  return pos >= text.length ? 'the end of the file' : JSON.stringify(text[pos]);
}

/**
 * Scans `text` as one JSON value. Throws JsonSyntaxError (with the offset)
 * when it is not valid JSON; otherwise returns where every value is.
 */
export function scanJson(text: string): JsonLocations {
  const starts = lineStarts(text);
  const lines = new Map<string, number>();
  const duplicates: { path: JsonPath; line: number }[] = [];
  let i = 0;

  const fail = (pos: number, msg: string): never => {
    throw new JsonSyntaxError(pos, msg);
  };
  const ws = (): void => {
    while (i < text.length) {
      const c = text.charCodeAt(i);
      if (c === 32 || c === 9 || c === 10 || c === 13) i++;
      else break;
    }
  };
  const str = (): string => {
    const start = i;
    i++; // opening quote
    let out = '';
    for (;;) {
      if (i >= text.length) fail(start, 'unterminated string');
      const c = text.charCodeAt(i);
      if (c === 34) {
        i++;
        return out;
      }
      if (c < 32) fail(i, 'control character (such as a line break) inside a string');
      if (c === 92) {
        const e = text[i + 1];
        if (e === 'u') {
          const hex = text.slice(i + 2, i + 6);
          if (!/^[0-9a-fA-F]{4}$/.test(hex)) fail(i, 'bad \\u escape in a string (expected 4 hex digits)');
          out += String.fromCharCode(parseInt(hex, 16));
          i += 6;
        } else {
          const m: Record<string, string> = {
            '"': '"',
            '\\': '\\',
            '/': '/',
            b: '\b',
            f: '\f',
            n: '\n',
            r: '\r',
            t: '\t',
          };
          if (e === undefined || m[e] === undefined) fail(i, `bad escape \\${e ?? ''} in a string`);
          out += m[e!];
          i += 2;
        }
      } else {
        out += text[i];
        i++;
      }
    }
  };
  const num = (): void => {
    const m = /^-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/.exec(text.slice(i, i + 400));
    if (!m) fail(i, 'malformed number');
    i += m![0].length;
    if (i < text.length && /[0-9.eE+-]/.test(text[i]!)) fail(i, 'malformed number');
  };
  const value = (path: (string | number)[], line: number | undefined): void => {
    ws();
    if (i >= text.length) fail(i, 'unexpected end of the file: expected a value');
    lines.set(key(path), line ?? lineIn(starts, i));
    const c = text[i]!;
    if (c === '{') {
      i++;
      const seen = new Set<string>();
      ws();
      if (text[i] === '}') {
        i++;
        return;
      }
      for (;;) {
        ws();
        if (text[i] !== '"') fail(i, `expected a double-quoted field name, found ${describeChar(text, i)}`);
        const keyLine = lineIn(starts, i);
        const name = str();
        const childPath = [...path, name];
        if (seen.has(name)) duplicates.push({ path: childPath, line: keyLine });
        seen.add(name);
        ws();
        if (text[i] !== ':') fail(i, `expected ':' after the field name, found ${describeChar(text, i)}`);
        i++;
        if (!lines.has(key(childPath))) value(childPath, keyLine);
        else value([...path, `\u0000dup${i}`], keyLine); // keep the first occurrence's line
        ws();
        if (text[i] === ',') {
          i++;
          continue;
        }
        if (text[i] === '}') {
          i++;
          return;
        }
        fail(i, `expected ',' or '}' after a field's value, found ${describeChar(text, i)}`);
      }
    }
    if (c === '[') {
      i++;
      ws();
      if (text[i] === ']') {
        i++;
        return;
      }
      for (let k = 0; ; k++) {
        value([...path, k], undefined);
        ws();
        if (text[i] === ',') {
          i++;
          continue;
        }
        if (text[i] === ']') {
          i++;
          return;
        }
        fail(i, `expected ',' or ']' after an array element, found ${describeChar(text, i)}`);
      }
    }
    if (c === '"') {
      str();
      return;
    }
    if (c === '-' || (c >= '0' && c <= '9')) {
      num();
      return;
    }
    for (const lit of ['true', 'false', 'null']) {
      if (text.startsWith(lit, i)) {
        i += lit.length;
        return;
      }
    }
    fail(i, `expected a value (object, array, string, number, true, false or null), found ${describeChar(text, i)}`);
  };

  value([], undefined);
  ws();
  if (i < text.length) fail(i, `unexpected text after the end of the JSON value: ${describeChar(text, i)}`);

  return {
    line: (path) => lines.get(key(path)),
    nearestLine: (path) => {
      for (let n = path.length; n >= 0; n--) {
        const l = lines.get(key(path.slice(0, n)));
        if (l !== undefined) return l;
      }
      return 1;
    },
    duplicates,
  };
}
