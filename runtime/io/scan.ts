/**
 * Byte-level scanning shared by the Matrix Market and edge-list readers:
 * a cursor over the raw bytes that knows its line number, and number parsing
 * that gives exactly what Number() gives without building a string per token.
 */

import { InputError, type DataErrorCode } from '../errors.js';

/** 10^0 .. 10^22: every one is exact as a double. */
const POW10 = [
  1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20,
  1e21, 1e22,
];
const TWO_POW_53 = 9007199254740992;

const NL = 10;
const PLUS = 43;
const MINUS = 45;
const DOT = 46;
const ZERO = 48;
const NINE = 57;

/** Space, tab, CR, vertical tab, form feed: blanks inside a line. */
export function isBlank(c: number): boolean {
  return c === 32 || c === 9 || c === 13 || c === 11 || c === 12;
}

/** Ends a token: a blank or a newline. */
function isDelim(c: number): boolean {
  return c === 32 || c === NL || c === 9 || c === 13 || c === 11 || c === 12;
}

/**
 * Text for a message: printable ASCII as it is, any other byte as \xNN (a NUL, a stray control character, a byte of
 * a multi-byte character), so that a message never carries raw bytes to the terminal.
 */
export function printable(text: string): string {
  return text.replace(/[^\x20-\x7e]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
}

/** How a call to readNumber went, for the caller to explain a NaN result. */
export const NUMBER_OK = 0;
export const NUMBER_NAN_LITERAL = 1;
export const NUMBER_MALFORMED = 2;
/** A decimal beyond float64's range (1e400): NaN, not an infinity, so that no file turns a typo into inf unawares. */
export const NUMBER_OVERFLOW = 3;

export class ByteCursor {
  readonly buf: Buffer;
  readonly end: number;
  /** Byte offset of the next unread byte. */
  pos = 0;
  /** 1-based line of `pos`. */
  line = 1;
  /** Where the token read last began (for messages). */
  tokenStart = 0;
  /** After readNumber: NUMBER_OK, NUMBER_NAN_LITERAL, NUMBER_MALFORMED or NUMBER_OVERFLOW. */
  numberStatus = NUMBER_OK;
  /** After readNumber: the token was a plain integer literal (no '.', exponent, inf). */
  integerLiteral = true;

  constructor(
    input: string | Uint8Array,
    readonly file: string,
  ) {
    if (typeof input === 'string') this.buf = Buffer.from(input, 'utf8');
    else if (Buffer.isBuffer(input)) this.buf = input;
    else this.buf = Buffer.from(input.buffer, input.byteOffset, input.byteLength);
    this.end = this.buf.length;
    // A UTF-8 byte order mark is not part of the first line's text.
    if (this.end >= 3 && this.buf[0] === 0xef && this.buf[1] === 0xbb && this.buf[2] === 0xbf) this.pos = 3;
  }

  fail(code: DataErrorCode, detail: string, line: number = this.line): never {
    throw new InputError(code, this.file, line, detail);
  }

  /** Skips blanks, not newlines. */
  skipBlanks(): void {
    const buf = this.buf;
    let pos = this.pos;
    while (pos < this.end && isBlank(buf[pos]!)) pos++;
    this.pos = pos;
  }

  /** At a newline or the end of the input. */
  atLineEnd(): boolean {
    return this.pos >= this.end || this.buf[this.pos] === NL;
  }

  /** Moves past the rest of the current line and its newline. */
  skipLine(): void {
    const nl = this.buf.indexOf(NL, this.pos);
    if (nl < 0) {
      this.pos = this.end;
    } else {
      this.pos = nl + 1;
      this.line++;
    }
  }

  /**
   * Skips blank lines and lines whose first non-blank byte is `commentA` or
   * `commentB`. Returns false at the end of the input, otherwise leaves `pos`
   * at the first token of a content line.
   */
  nextContentLine(commentA: number, commentB: number): boolean {
    const buf = this.buf;
    for (;;) {
      this.skipBlanks();
      if (this.pos >= this.end) return false;
      const c = buf[this.pos]!;
      if (c === NL) {
        this.pos++;
        this.line++;
      } else if (c === commentA || c === commentB) {
        this.skipLine();
      } else {
        return true;
      }
    }
  }

  /** The rest of the current line from `from`, without its newline, for messages. */
  lineText(from: number = this.pos): string {
    let nl = this.buf.indexOf(NL, from);
    if (nl < 0) nl = this.end;
    return this.buf.toString('latin1', from, nl).trim();
  }

  /** The token starting at `from`, shortened for a message, its unprintable bytes shown as \xNN. */
  tokenText(from: number = this.tokenStart): string {
    let p = from;
    while (p < this.end && !isDelim(this.buf[p]!)) p++;
    const text = printable(this.buf.toString('latin1', from, Math.min(p, from + 40)));
    return p - from > 40 ? `${text}...` : text;
  }

  /** Number of tokens from `from` to the end of its line. */
  tokensFrom(from: number): number {
    let n = 0;
    let inToken = false;
    for (let p = from; p < this.end; p++) {
      const c = this.buf[p]!;
      if (c === NL) break;
      const delim = isBlank(c);
      if (!delim && !inToken) n++;
      inToken = !delim;
    }
    return n;
  }

  /** The 1-based number of the last line of the input (a final newline starts no new line). */
  lastLine(): number {
    const lines = this.end === 0 ? 1 : countNewlines(this.buf) + 1;
    return this.end > 0 && this.buf[this.end - 1] === NL ? lines - 1 : lines;
  }

  /**
   * Reads an optionally signed decimal integer token at `pos`. Returns its
   * value (negative for a '-' sign; digits past 2^53 lose precision but stay
   * huge), or NaN when the token is not a plain integer; `pos` is then left
   * inside the token.
   */
  readInteger(): number {
    const buf = this.buf;
    const end = this.end;
    let pos = this.pos;
    this.tokenStart = pos;
    let neg = false;
    let c = pos < end ? buf[pos]! : -1;
    if (c === MINUS || c === PLUS) {
      neg = c === MINUS;
      c = ++pos < end ? buf[pos]! : -1;
    }
    const digits = pos;
    let v = 0;
    while (c >= ZERO && c <= NINE) {
      v = v * 10 + (c - ZERO);
      c = ++pos < end ? buf[pos]! : -1;
    }
    this.pos = pos;
    if (pos === digits || (c !== -1 && !isDelim(c))) return NaN;
    return neg ? -v : v;
  }

  /**
   * Reads a number token at `pos`: `[+-]?(digits[.digits]|.digits)([eE][+-]?digits)?`
   * or `[+-]?(inf|infinity|nan)` (any case). The result is exactly what
   * Number() gives for the token (Number() reads "inf" as NaN; here it is
   * infinity). Up to 2^53 in the mantissa and |exponent| <= 22 use Clinger's
   * fast path (one correctly rounded multiply or divide of two exact
   * doubles); other tokens go through Number(). On a NaN result,
   * `numberStatus` tells a "nan" token from a malformed one.
   */
  readNumber(): number {
    const buf = this.buf;
    const end = this.end;
    let pos = this.pos;
    const start = pos;
    this.tokenStart = start;
    this.numberStatus = NUMBER_OK;
    let neg = false;
    let c = pos < end ? buf[pos]! : -1;
    if (c === MINUS || c === PLUS) {
      neg = c === MINUS;
      c = ++pos < end ? buf[pos]! : -1;
    }
    let mantissa = 0;
    let digits = 0;
    let exp10 = 0;
    let integer = true;
    while (c >= ZERO && c <= NINE) {
      mantissa = mantissa * 10 + (c - ZERO);
      digits++;
      c = ++pos < end ? buf[pos]! : -1;
    }
    if (c === DOT) {
      integer = false;
      c = ++pos < end ? buf[pos]! : -1;
      while (c >= ZERO && c <= NINE) {
        mantissa = mantissa * 10 + (c - ZERO);
        digits++;
        exp10--;
        c = ++pos < end ? buf[pos]! : -1;
      }
    }
    if (digits === 0) {
      if (!integer) return this.malformed(pos);
      this.pos = pos;
      return this.readSpecial(pos, neg);
    }
    if (c === 101 || c === 69) {
      integer = false;
      c = ++pos < end ? buf[pos]! : -1;
      let expNeg = false;
      if (c === MINUS || c === PLUS) {
        expNeg = c === MINUS;
        c = ++pos < end ? buf[pos]! : -1;
      }
      if (!(c >= ZERO && c <= NINE)) return this.malformed(pos);
      let e = 0;
      while (c >= ZERO && c <= NINE) {
        if (e < 100_000_000) e = e * 10 + (c - ZERO);
        c = ++pos < end ? buf[pos]! : -1;
      }
      exp10 += expNeg ? -e : e;
    }
    if (c !== -1 && !isDelim(c)) return this.malformed(pos);
    this.pos = pos;
    this.integerLiteral = integer;
    // The mantissa is exact while below 2^53 (every partial sum was smaller).
    if (mantissa < TWO_POW_53) {
      let v: number;
      if (exp10 === 0) v = mantissa;
      else if (exp10 > 0 && exp10 <= 22) v = mantissa * POW10[exp10]!;
      else if (exp10 < 0 && exp10 >= -22) v = mantissa / POW10[-exp10]!;
      else return this.finite(Number(buf.toString('latin1', start, pos)));
      return neg ? -v : v;
    }
    return this.finite(Number(buf.toString('latin1', start, pos)));
  }

  /** A digits token's value, or NaN with NUMBER_OVERFLOW where it is beyond float64's range. */
  private finite(v: number): number {
    if (Number.isFinite(v)) return v;
    this.numberStatus = NUMBER_OVERFLOW;
    return NaN;
  }

  /** Results of readSimpleEntry: 0-based row and column, and the value. */
  entryRow = 0;
  entryCol = 0;
  entryValue = 0;

  /**
   * The common shape of a coordinate entry line, read in one pass: two
   * unsigned indices in 1..maxRow and 1..maxCol, then (unless `pattern`) a
   * number that is not NaN (and an integer literal when `integer`), then the
   * end of the line, whose newline is consumed. Returns false, with `pos` and
   * `line` as they were, for anything else, for the general path to read or
   * report.
   */
  readSimpleEntry(maxRow: number, maxCol: number, pattern: boolean, integer: boolean): boolean {
    const buf = this.buf;
    const end = this.end;
    const start = this.pos;
    let pos = start;
    let c = buf[pos]!;
    let row = 0;
    while (c >= ZERO && c <= NINE) {
      row = row * 10 + (c - ZERO);
      c = ++pos < end ? buf[pos]! : -1;
    }
    if (pos === start || !(c === 32 || c === 9) || row < 1 || row > maxRow) return false;
    do c = ++pos < end ? buf[pos]! : -1;
    while (c === 32 || c === 9);
    const colStart = pos;
    let col = 0;
    while (c >= ZERO && c <= NINE) {
      col = col * 10 + (c - ZERO);
      c = ++pos < end ? buf[pos]! : -1;
    }
    if (pos === colStart || col < 1 || col > maxCol) return false;
    let v = 1;
    if (!pattern) {
      if (!(c === 32 || c === 9)) return false;
      do c = ++pos < end ? buf[pos]! : -1;
      while (c === 32 || c === 9);
      this.pos = pos;
      v = this.readNumber();
      if (v !== v || (integer && !this.integerLiteral)) {
        this.pos = start;
        return false;
      }
      pos = this.pos;
      c = pos < end ? buf[pos]! : -1;
    }
    while (c === 32 || c === 9 || c === 13) c = ++pos < end ? buf[pos]! : -1;
    if (c === NL) {
      this.pos = pos + 1;
      this.line++;
    } else if (c === -1) {
      this.pos = pos;
    } else {
      this.pos = start;
      return false;
    }
    this.entryRow = row - 1;
    this.entryCol = col - 1;
    this.entryValue = v;
    return true;
  }

  /** inf, infinity or nan (any case) at `from`, after an optional sign. */
  private readSpecial(from: number, neg: boolean): number {
    const buf = this.buf;
    const end = this.end;
    let p = from;
    while (p < end && !isDelim(buf[p]!)) p++;
    const word = buf.toString('latin1', from, p).toLowerCase();
    this.integerLiteral = false;
    if (word === 'inf' || word === 'infinity') {
      this.pos = p;
      return neg ? -Infinity : Infinity;
    }
    if (word === 'nan') {
      this.pos = p;
      this.numberStatus = NUMBER_NAN_LITERAL;
      return NaN;
    }
    return this.malformed(from);
  }

  private malformed(at: number): number {
    this.pos = at;
    this.integerLiteral = false;
    this.numberStatus = NUMBER_MALFORMED;
    return NaN;
  }
}

function countNewlines(buf: Buffer): number {
  let n = 0;
  let p = buf.indexOf(NL);
  while (p >= 0) {
    n++;
    p = buf.indexOf(NL, p + 1);
  }
  return n;
}

/**
 * Parses one number token the way the readers do (see ByteCursor.readNumber).
 * Returns NaN for "nan"; throws InputError DY3008 for anything else that is
 * not a number, and for a decimal beyond float64's range.
 */
export function parseNumberToken(token: string, file = '<number>'): number {
  const cur = new ByteCursor(token, file);
  const v = cur.readNumber();
  if (cur.numberStatus === NUMBER_MALFORMED || cur.pos !== cur.end) {
    cur.fail('DY3008', `expected a number, found "${token}"`);
  }
  if (cur.numberStatus === NUMBER_OVERFLOW) cur.fail('DY3008', `"${token}" is beyond float64's range`);
  return v;
}
