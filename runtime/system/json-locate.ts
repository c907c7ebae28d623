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
 * How deep the scanner records lines (and duplicate keys): a system file's
 * fields are a few levels deep, so anything deeper is wrong whatever its
 * line, and its error gets the line of its ancestor at this depth. Deeper
 * text is still scanned, without recursion, so any nesting is located.
 */
export const MAX_LOCATED_DEPTH = 64;

type Frame = { kind: 'object'; seen: Set<string> } | { kind: 'array'; next: number };

/**
 * Scans `text` as one JSON value. Throws JsonSyntaxError (with the offset)
 * when it is not valid JSON; otherwise returns where every value is (down to
 * MAX_LOCATED_DEPTH). Iterative, with its own stack: nesting of any depth
 * (JSON.parse accepts millions of levels) cannot overflow the call stack.
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

  // The path of the value being scanned, and the open objects and arrays around it (innermost last).
  const path: (string | number)[] = [];
  const stack: Frame[] = [];
  // The line of the next value's key (object members), or undefined: its own first character's.
  let keyLine: number | undefined;

  /** One member's name and colon; leaves its name on `path` and its line in keyLine. */
  const member = (frame: { seen: Set<string> }): void => {
    ws();
    if (text[i] !== '"') fail(i, `expected a double-quoted field name, found ${describeChar(text, i)}`);
    const line = lineIn(starts, i);
    const name = str();
    const again = frame.seen.has(name);
    if (again && path.length < MAX_LOCATED_DEPTH) duplicates.push({ path: [...path, name], line });
    frame.seen.add(name);
    ws();
    if (text[i] !== ':') fail(i, `expected ':' after the field name, found ${describeChar(text, i)}`);
    i++;
    path.push(again ? `\u0000dup${i}` : name); // a repeated key keeps its first occurrence's lines
    keyLine = line;
  };

  for (;;) {
    // A value at `path`.
    ws();
    if (i >= text.length) fail(i, 'unexpected end of the file: expected a value');
    if (path.length <= MAX_LOCATED_DEPTH) lines.set(key(path), keyLine ?? lineIn(starts, i));
    keyLine = undefined;
    const c = text[i]!;
    if (c === '{') {
      i++;
      ws();
      if (text[i] !== '}') {
        const frame = { kind: 'object' as const, seen: new Set<string>() };
        stack.push(frame);
        member(frame);
        continue;
      }
      i++;
    } else if (c === '[') {
      i++;
      ws();
      if (text[i] !== ']') {
        stack.push({ kind: 'array', next: 0 });
        path.push(0);
        continue;
      }
      i++;
    } else if (c === '"') str();
    else if (c === '-' || (c >= '0' && c <= '9')) num();
    else {
      const lit = ['true', 'false', 'null'].find((l) => text.startsWith(l, i));
      if (lit === undefined)
        fail(
          i,
          `expected a value (object, array, string, number, true, false or null), found ${describeChar(text, i)}`,
        );
      i += lit!.length;
    }

    // The value is complete: go on in the objects and arrays around it, closing those that end here.
    let next = false;
    while (!next) {
      const top = stack[stack.length - 1];
      if (top === undefined) break;
      path.pop();
      ws();
      if (top.kind === 'object') {
        if (text[i] === ',') {
          i++;
          member(top);
          next = true;
        } else if (text[i] === '}') {
          i++;
          stack.pop();
        } else fail(i, `expected ',' or '}' after a field's value, found ${describeChar(text, i)}`);
      } else if (text[i] === ',') {
        i++;
        path.push(++top.next);
        next = true;
      } else if (text[i] === ']') {
        i++;
        stack.pop();
      } else fail(i, `expected ',' or ']' after an array element, found ${describeChar(text, i)}`);
    }
    if (!next) break;
  }
  ws();
  if (i < text.length) fail(i, `unexpected text after the end of the JSON value: ${describeChar(text, i)}`);

  return {
    line: (p) => (p.length <= MAX_LOCATED_DEPTH ? lines.get(key(p)) : undefined),
    nearestLine: (p) => {
      for (let n = Math.min(p.length, MAX_LOCATED_DEPTH); n >= 0; n--) {
        const l = lines.get(key(p.slice(0, n)));
        if (l !== undefined) return l;
      }
      return 1;
    },
    duplicates,
  };
}

/**
 * Where and why JSON.parse rejected `text`, in plain words: the position its
 * message gives (Node 20: `Unterminated string in JSON at position 200`), or,
 * for messages without one (`Unexpected end of JSON input`, `Unexpected token
 * ...`), where scanJson stops. `message` ends with a hint when the text ends
 * before the value does (a file cut short).
 */
export function locateJsonError(text: string, err: unknown): { line: number; column: number; message: string } {
  const v8 = err instanceof Error ? err.message : String(err);
  const at = /at position (\d+)/.exec(v8);
  let pos: number;
  let what: string;
  if (err instanceof JsonSyntaxError) {
    pos = err.pos;
    what = err.message;
  } else if (at) {
    pos = Number(at[1]);
    what = v8.replace(/\s*in JSON at position \d+.*$/s, '');
    what = what.charAt(0).toLowerCase() + what.slice(1);
  } else {
    try {
      scanJson(text);
      pos = text.length;
      what = v8.replace(/, ".*" is not valid JSON$/s, '');
    } catch (e) {
      if (!(e instanceof JsonSyntaxError)) throw e;
      pos = e.pos;
      what = e.message;
    }
  }
  const { line, column } = positionOf(text, pos);
  const end = pos >= text.length && !/end of the file/.test(what) ? ' at the end of the file (is it cut short?)' : '';
  return { line, column, message: `${what}${end}` };
}
