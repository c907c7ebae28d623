/**
 * The dype lexer: source text to chevrotain tokens, plus DY1001 diagnostics
 * for characters no token matches (one diagnostic per run of bad characters).
 * Also home of `SourceIndex`, which turns 0-based offsets into the 1-based
 * line/column spans of ir/diagnostics.ts.
 */
import { Lexer, type IToken } from './chevrotain.js';
import { makeDiagnostic, type Diagnostic, type Span } from '../ir/diagnostics.js';
import { allTokens } from './tokens.js';

/**
 * Built once at module load. Only offsets are tracked: lines and columns come
 * from `SourceIndex`, which counts only '\n' as a line break, like
 * formatDiagnostic (a lone '\r' is whitespace, '\r\n' ends one line).
 */
const dypeLexer = new Lexer(allTokens, { positionTracking: 'onlyOffset' });

/**
 * Offset one past a token's last character. (With offset-only tracking
 * chevrotain sets no endOffset; tokens never span a line break, so the
 * image length is exact.)
 */
export function tokenEnd(tok: IToken): number {
  return tok.startOffset + tok.image.length;
}

/** Maps offsets to line/column positions for one source text. */
export class SourceIndex {
  private readonly lineStarts: number[] = [0];

  constructor(
    readonly source: string,
    readonly file: string,
  ) {
    for (let i = source.indexOf('\n'); i !== -1; i = source.indexOf('\n', i + 1)) this.lineStarts.push(i + 1);
  }

  /** 1-based line and column of a 0-based offset (clamped to the text). */
  position(offset: number): { line: number; col: number } {
    const off = Math.max(0, Math.min(offset, this.source.length));
    let lo = 0;
    let hi = this.lineStarts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if ((this.lineStarts[mid] ?? 0) <= off) lo = mid;
      else hi = mid - 1;
    }
    return { line: lo + 1, col: off - (this.lineStarts[lo] ?? 0) + 1 };
  }

  /** The span of [start, end) (0-based, end exclusive). */
  span(start: number, end: number): Span {
    const from = this.position(start);
    const stop = end > start ? this.position(end - 1) : from;
    const endCol = end > start ? stop.col + 1 : from.col;
    return {
      file: this.file,
      line: from.line,
      col: from.col,
      endLine: stop.line,
      endCol,
      offset: start,
      end: Math.max(start, end),
    };
  }

  /** The span of one real token. */
  tokenSpan(tok: IToken): Span {
    return this.span(tok.startOffset, tokenEnd(tok));
  }

  /** An empty span just past the end of the text. */
  endSpan(): Span {
    return this.span(this.source.length, this.source.length);
  }
}

export interface LexResult {
  tokens: IToken[];
  diagnostics: Diagnostic[];
}

/** Renders source characters for a message: printable ASCII as is, others as \uXXXX. */
export function showChars(text: string, max = 20): string {
  // By code point: an emoji is one character, shown as \u{1f600}, not as its two UTF-16 halves.
  const chars = [...text];
  const shown = chars.slice(0, max).map((c) => {
    if (/^[\x20-\x7e]$/.test(c)) return c;
    const cp = c.codePointAt(0)!;
    return cp > 0xffff ? `\\u{${cp.toString(16)}}` : `\\u${cp.toString(16).padStart(4, '0')}`;
  });
  return `${shown.join('')}${chars.length > max ? '...' : ''}`;
}

export function tokenize(source: string, index: SourceIndex): LexResult {
  const result = dypeLexer.tokenize(source);
  const diagnostics = result.errors.map((e) => {
    const length = Math.max(1, e.length);
    const bad = source.slice(e.offset, e.offset + length);
    const plural = [...bad].length > 1 ? 's' : '';
    return makeDiagnostic(
      'DY1001',
      `unexpected character${plural} '${showChars(bad)}'`,
      index.span(e.offset, e.offset + length),
    );
  });
  return { tokens: result.tokens, diagnostics };
}
