/**
 * Entry point of the front end's syntax half: source text to AST plus
 * diagnostics (DY1001 lexical, DY1002 syntax, DY1003 literal range). Never
 * throws: any input yields a (possibly partial) AST and diagnostics.
 */
import { EOF, type IRecognitionException, type IToken } from './chevrotain.js';
import { fileSpan, makeDiagnostic, type Diagnostic, type Span } from '../ir/diagnostics.js';
import type { AstProgram } from './ast.js';
import { AstBuilder } from './cst-to-ast.js';
import { SourceIndex, tokenEnd, tokenize } from './lexer.js';
import { parser } from './parser.js';
import * as T from './tokens.js';

export interface ParseResult {
  program: AstProgram;
  diagnostics: Diagnostic[];
}

/** Deepest nesting of brackets and ternary then-branches accepted (the parser recurses on these). */
export const MAX_NESTING = 100;
/** Syntax diagnostics beyond this many are summarised in one last diagnostic. */
export const MAX_SYNTAX_DIAGNOSTICS = 100;

/**
 * Parses one .dy source text. With diagnostics, the AST holds the kernels,
 * declarations and statements that parsed completely; broken ones are left
 * out (each with its diagnostic).
 */
export function parseProgram(source: string, file: string): ParseResult {
  const index = new SourceIndex(source, file);
  const diagnostics: Diagnostic[] = [];
  let program: AstProgram = { file, kernels: [] };
  try {
    const lexed = tokenize(source, index);
    diagnostics.push(...lexed.diagnostics);
    const tooDeep = checkNesting(lexed.tokens, index);
    if (tooDeep !== undefined) {
      diagnostics.push(tooDeep);
    } else {
      parser.input = lexed.tokens;
      const cst = parser.program();
      const errors = [...parser.errors];
      parser.input = []; // drop the tokens: the parser instance outlives this call
      const lexErrorAt = lexed.diagnostics.map((d) => d.span.offset);
      const reported = [...lexErrorAt];
      for (const e of errors) {
        if (followsLexError(e, lexed.tokens, lexErrorAt, source.length)) continue;
        const at = isReal(e.token) ? e.token.startOffset : source.length;
        if (sameStatement(at, reported, lexed.tokens)) continue;
        reported.push(at);
        diagnostics.push(makeDiagnostic('DY1002', e.message, errorSpan(e, index)));
      }
      const builder = new AstBuilder(index);
      program = builder.program(cst);
      diagnostics.push(...builder.diagnostics);
    }
  } catch (e) {
    parser.input = [];
    const message =
      e instanceof RangeError
        ? 'program is nested too deeply to parse'
        : `internal error in the parser: ${e instanceof Error ? e.message : String(e)}`;
    diagnostics.push(makeDiagnostic('DY1002', message, fileSpan(file)));
    program = { file, kernels: [] };
  }
  return { program, diagnostics: tidy(diagnostics, index) };
}

function isReal(t: IToken | undefined): t is IToken {
  return t !== undefined && t.tokenType !== EOF && t.isInsertedInRecovery !== true && !Number.isNaN(t.startOffset);
}

/**
 * Where a parse error points: at the offending token, except when it is the
 * end of file, or when an expected token is missing at the end of a line
 * (the offending token is on a later line): then just after the previous token.
 */
function errorSpan(e: IRecognitionException, index: SourceIndex): Span {
  const tok = e.token;
  const prev = (e as { previousToken?: IToken }).previousToken;
  const after = (t: IToken): Span => {
    const end = tokenEnd(t);
    return index.span(end, end);
  };
  if (!isReal(tok)) return isReal(prev) ? after(prev) : index.endSpan();
  if (e.name === 'MismatchedTokenException' && isReal(prev)) {
    const prevEnd = index.position(tokenEnd(prev) - 1).line;
    if (prevEnd < index.position(tok.startOffset).line) return after(prev);
  }
  return index.tokenSpan(tok);
}

/** Index of the first element of sorted `xs` that is >= x. */
function lowerBound(xs: readonly number[], x: number): number {
  let lo = 0;
  let hi = xs.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if ((xs[mid] ?? Infinity) < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * True when a parse error sits on the first token after characters the lexer
 * rejected: the parser only stumbled over the hole they left, and the DY1001
 * already says what is wrong there.
 */
function followsLexError(
  e: IRecognitionException,
  tokens: readonly IToken[],
  lexErrorAt: readonly number[],
  textEnd: number,
): boolean {
  if (lexErrorAt.length === 0) return false;
  const at = isReal(e.token) ? e.token.startOffset : textEnd;
  let lo = 0;
  let hi = tokens.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if ((tokens[mid]?.startOffset ?? Infinity) < at) lo = mid + 1;
    else hi = mid;
  }
  const prev = tokens[lo - 1];
  const prevEnd = prev === undefined ? 0 : tokenEnd(prev);
  const first = lexErrorAt[lowerBound(lexErrorAt, prevEnd)];
  return first !== undefined && first < at;
}

/** Tokens that end a statement (or open or close a block), where the parser's recovery starts afresh. */
const STATEMENT_ENDS = new Set([T.Semicolon, T.LBrace, T.RBrace]);

/**
 * Whether a parse error at `at` lies in the statement of an error already reported: from that error up to the
 * token that ends its statement (the ';', '{' or '}' after it), that token included. One error a statement: the
 * parser's recovery there re-reads the rest of the statement as a new one (`y[i] == x[i];` was DY1002 at the second
 * '=' and again at the ';', "expected '=' after the assignment target"), which says nothing the first did not.
 */
function sameStatement(at: number, reported: readonly number[], tokens: readonly IToken[]): boolean {
  let last = -1;
  for (const r of reported) if (r <= at && r > last) last = r;
  if (last < 0) return false;
  const end = tokens.find((t) => t.startOffset >= last && STATEMENT_ENDS.has(t.tokenType));
  return end === undefined || at <= end.startOffset;
}

const OPENERS = new Set([T.LParen, T.LBracket, T.LBrace]);
const CLOSERS = new Set([T.RParen, T.RBracket, T.RBrace]);

/**
 * Rejects input nested deeper than MAX_NESTING before the recursive-descent
 * parser sees it. Nesting counts open brackets and unclosed `?` (ternary
 * then-branches); everything else in the grammar is parsed by loops.
 */
function checkNesting(tokens: readonly IToken[], index: SourceIndex): Diagnostic | undefined {
  const stack: IToken[] = [];
  for (const t of tokens) {
    const type = t.tokenType;
    if (OPENERS.has(type) || type === T.Question) {
      stack.push(t);
      if (stack.length > MAX_NESTING) {
        return makeDiagnostic('DY1002', `too deeply nested (more than ${MAX_NESTING} levels)`, index.tokenSpan(t));
      }
    } else if (CLOSERS.has(type)) {
      while (stack.length > 0) {
        const top = stack.pop();
        if (top !== undefined && OPENERS.has(top.tokenType)) break;
      }
    } else if (type === T.Colon || type === T.Semicolon) {
      while (stack.length > 0 && stack[stack.length - 1]?.tokenType === T.Question) {
        stack.pop();
        if (type === T.Colon) break;
      }
    }
  }
  return undefined;
}

/** Sorts by position, drops repeats at one position, caps the count. */
function tidy(ds: Diagnostic[], index: SourceIndex): Diagnostic[] {
  const sorted = ds
    .map((d, i) => ({ d, i }))
    .sort((a, b) => a.d.span.offset - b.d.span.offset || a.i - b.i)
    .map((x) => x.d);
  const out: Diagnostic[] = [];
  const seen = new Set<string>();
  for (const d of sorted) {
    const key = `${d.code}:${d.span.offset}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(d);
  }
  if (out.length <= MAX_SYNTAX_DIAGNOSTICS) return out;
  const kept = out.slice(0, MAX_SYNTAX_DIAGNOSTICS);
  const last = kept[kept.length - 1];
  const span = last === undefined ? index.endSpan() : last.span;
  kept.push(
    makeDiagnostic('DY1002', `too many syntax errors; ${out.length - MAX_SYNTAX_DIAGNOSTICS} more not shown`, span),
  );
  return kept;
}
