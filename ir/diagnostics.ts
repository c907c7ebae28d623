/**
 * Diagnostics shared by every compiler layer. The code catalogue lives here so
 * codes stay stable and unique; data-input codes (DY3xxx) live in
 * runtime/errors.ts because the runtime may not import the compiler, and a
 * test checks both catalogues together (see docs/DIAGNOSTICS.md).
 */

export interface Span {
  file: string;
  /** 1-based line of the first character. */
  line: number;
  /** 1-based column of the first character. */
  col: number;
  /** 1-based line of the last character. */
  endLine: number;
  /** 1-based column one past the last character on endLine. */
  endCol: number;
  /** 0-based offset of the first character in the source text. */
  offset: number;
  /** 0-based offset one past the last character. */
  end: number;
}

export type Severity = 'error' | 'warning' | 'note';

export interface Diagnostic {
  code: DiagCode;
  severity: Severity;
  message: string;
  span: Span;
}

/** The compiler's diagnostic catalogue. Never renumber; only append. */
export const DIAGNOSTIC_CODES = {
  // 1xxx: lexical and syntax
  DY1001: 'unexpected character',
  DY1002: 'syntax error',
  DY1003: 'number literal out of range',
  // 2xxx: names, types, shapes and sparsity
  DY2001: 'undefined tensor or scalar',
  DY2002: 'index has no range',
  DY2003: 'wrong number of indices',
  DY2004: 'result never assigned',
  DY2005: 'sparse operand used where it has no meaning',
  DY2006: 'dimension mismatch',
  DY2007: 'dtype mismatch',
  DY2008: 'duplicate name',
  DY2009: 'assignment to a parameter',
  DY2010: 'unknown format',
  DY2011: 'unknown dtype',
  DY2012: 'wrong number of arguments',
  DY2013: 'unknown function',
  DY2014: 'used before assigned',
  DY2015: 'invalid repeat count',
  DY2016: 'sparse tensors must have two dimensions',
  DY2017: 'duplicate kernel',
  DY2018: 'index repeated on the left side',
  DY2019: 'redefinition with a different type (retired: reported as DY2003, DY2006, DY2007 or DY2026)',
  DY2020: 'fractional literal in an integer expression',
  DY2021: 'operand has the wrong kind of dtype',
  DY2022: 'result dimension not bound by any parameter',
  DY2023: 'reduction index already in scope',
  DY2024: 'index used as a value',
  DY2025: 'several sparse operands drive one reduction',
  DY2026: 'sparse result has no pattern source',
  DY2027: 'not a reduction',
  DY2028: 'declared shape does not match the computed shape (retired: reported as DY2003 or DY2006)',
  DY2029: 'index of a reduction does not occur in its body',
  DY2030: 'unknown kernel, or none chosen (`--kernel`) where the file defines several',
  DY2031: 'tensor indexed like a scalar or scalar indexed like a tensor',
  DY2032: 'index repeated within one access',
  DY2033: 'program has no kernels',
  DY2034: "the value a repeat's 'until' watches is not assigned in its body",
  DY2035: "the value a repeat's 'until' watches has no value before the loop",
  DY2036: "a repeat's 'within' tolerance is not a finite non-negative number",
  DY2037: "'within' watches a value that is not floating point",
  DY2038: "a repeat's 'until' watches a sparse value",
  DY2039: "malformed 'until' clause",
  // DY2040 is a warning.
  DY2040: 'implicit sum over an index that occurs in only one operand of a product (a warning)',
  DY2041: 'integer literal outside the range of the dtype it takes',
  // 5xxx: IR text and verifier
  DY5001: 'IR syntax error',
  DY5002: 'IR verification failed',
  DY5003: 'unknown pass, or one the command does not run',
  // 61xx: CUDA code generation (codegen/cuda)
  DY6101: 'name cannot be written as a C++ identifier in generated CUDA code',
  DY6102: 'two names would be the same C++ identifier in generated CUDA code',
  DY6103: 'op or program shape the CUDA target cannot generate',
  // 63xx: guards and the generated runtime (passes/build-guards.ts, codegen/runtime)
  DY6300: 'the runtime or report target, or the build-guards pass, needs profile inputs',
  DY6301: 'profile names no parameter, dim or scalar of the kernel',
  DY6302: 'profile value does not fit its parameter',
  DY6303: 'no mapping is feasible for any guard sample',
  DY6304: 'a name the guards or the generated runtime derive from the program would clash',
  // 62xx: HLS design legality (codegen/hls/legality.ts)
  DY6201: 'HLS stream without exactly one producer and one consumer',
  DY6202: 'HLS array partition factor does not match the unroll factor that accesses it',
  DY6203: 'HLS kernel allocates memory dynamically',
  DY6204: 'HLS kernel calls itself recursively',
  DY6205: 'HLS loop with a data-dependent bound has no trip-count bound',
  DY6206: 'HBM bank index outside the platform range',
  DY6207: 'HLS project does not fit the device (kernels, FIFOs and shell)',
  DY6208: 'two names would be the same C++ identifier in a generated HLS kernel',
} as const;

export type DiagCode = keyof typeof DIAGNOSTIC_CODES;

export function makeDiagnostic(code: DiagCode, message: string, span: Span, severity: Severity = 'error'): Diagnostic {
  return { code, severity, message, span };
}

/** A span covering nothing, for diagnostics about a whole file. */
export function fileSpan(file: string): Span {
  return { file, line: 1, col: 1, endLine: 1, endCol: 1, offset: 0, end: 0 };
}

export function joinSpans(a: Span, b: Span): Span {
  const first = a.offset <= b.offset ? a : b;
  const last = a.end >= b.end ? a : b;
  return {
    file: a.file,
    line: first.line,
    col: first.col,
    offset: first.offset,
    endLine: last.endLine,
    endCol: last.endCol,
    end: last.end,
  };
}

/**
 * Renders `file:line:col: error DYnnnn: message`, then the source line and a
 * caret line underlining the span (clipped to its first line).
 */
export function formatDiagnostic(d: Diagnostic, source?: string): string {
  const head = `${d.span.file}:${d.span.line}:${d.span.col}: ${d.severity} ${d.code}: ${d.message}`;
  if (source === undefined) return head;
  const lines = source.split(/\r?\n/);
  const text = lines[d.span.line - 1];
  if (text === undefined) return head;
  const start = Math.max(0, d.span.col - 1);
  const stop = d.span.endLine === d.span.line ? Math.max(d.span.endCol - 1, start + 1) : text.length;
  const width = Math.max(1, Math.min(stop, Math.max(text.length, start + 1)) - start);
  const pad = text.slice(0, start).replace(/[^\t]/g, ' ');
  return `${head}\n  ${text}\n  ${pad}^${'~'.repeat(width - 1)}`;
}

export function formatDiagnostics(ds: readonly Diagnostic[], source?: string): string {
  return ds.map((d) => formatDiagnostic(d, source)).join('\n');
}

export function hasErrors(ds: readonly Diagnostic[]): boolean {
  return ds.some((d) => d.severity === 'error');
}

/** Thrown by APIs that cannot return partial results (IR parser, pass manager). */
export class DiagnosticError extends Error {
  constructor(
    public readonly diagnostics: Diagnostic[],
    public readonly source?: string,
  ) {
    super(formatDiagnostics(diagnostics, source));
    this.name = 'DiagnosticError';
  }
}
