/**
 * Source to graph IR: parse, then check and lower. Syntax errors stop before
 * checking, so a broken statement does not cascade into type errors.
 */
import type { Diagnostic } from '../ir/diagnostics.js';
import type { Module } from '../ir/module.js';
import { checkProgram } from './check.js';
import { parseProgram } from './parse.js';

export interface FrontendResult {
  module: Module | undefined;
  diagnostics: Diagnostic[];
}

export function compileSource(source: string, file: string): FrontendResult {
  const { program, diagnostics } = parseProgram(source, file);
  if (diagnostics.some((d) => d.severity === 'error')) return { module: undefined, diagnostics };
  const checked = checkProgram(program);
  return { module: checked.module, diagnostics: [...diagnostics, ...checked.diagnostics] };
}
