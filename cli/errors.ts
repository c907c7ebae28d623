/**
 * How the command line reports failure: exit 1 for user errors (bad program,
 * bad data) with diagnostics on stderr, 2 for bad usage. Internal errors are
 * reported as such, never dressed up as user errors.
 */
import { DiagnosticError, formatDiagnostic, formatDiagnostics, type Diagnostic } from '../ir/diagnostics.js';
import { InputError } from '../runtime/errors.js';

/** A user error that has already been described; carries the exit code. */
export class CliError extends Error {
  constructor(
    message: string,
    public readonly exitCode: 1 | 2 = 1,
  ) {
    super(message);
  }
}

export class DiagnosticsFailure extends Error {
  constructor(
    public readonly diagnostics: Diagnostic[],
    public readonly source?: string,
    /** The file `source` is the text of; only diagnostics in it quote it. */
    public readonly file?: string,
  ) {
    super('diagnostics');
  }
}

export function usage(message: string): CliError {
  return new CliError(message, 2);
}

/** Prints the error and returns the exit code. */
export function report(err: unknown, stderr: (s: string) => void): number {
  if (err instanceof DiagnosticsFailure) {
    stderr(
      err.diagnostics.map((d) => formatDiagnostic(d, d.span.file === err.file ? err.source : undefined)).join('\n') +
        '\n',
    );
    const n = err.diagnostics.filter((d) => d.severity === 'error').length;
    if (n > 1) stderr(`${n} errors\n`);
    return 1;
  }
  if (err instanceof DiagnosticError) {
    stderr(formatDiagnostics(err.diagnostics, err.source) + '\n');
    return 1;
  }
  if (err instanceof InputError) {
    stderr(`${err.message}\n`);
    return 1;
  }
  if (err instanceof CliError) {
    stderr(`dype: ${err.exitCode === 2 ? 'usage: ' : ''}${err.message}\n`);
    return err.exitCode;
  }
  const e = err instanceof Error ? err : new Error(String(err));
  stderr(
    `dype: internal error: ${e.message}\nThis is a bug in dype; please report it with the command that triggered it.\n${e.stack ?? ''}\n`,
  );
  return 70;
}
