/**
 * chevrotain, loaded from its single-file bundle. The package's ESM entry
 * imports several hundred lodash-es modules and takes about 0.8 s to load,
 * which would dominate `dype check`; the package also ships the same code as
 * one file (lib/chevrotain.mjs, about 0.07 s) that its exports map does not
 * expose, so it is reached next to the entry's resolved location. Types still
 * come from the package itself.
 */
import type * as Chevrotain from 'chevrotain';

const entry = import.meta.resolve('chevrotain');
const chevrotain = (await import(new URL('../chevrotain.mjs', entry).href)) as typeof Chevrotain;

export const { CstParser, EOF, Lexer, createToken } = chevrotain;
export type {
  CstElement,
  CstNode,
  IParserErrorMessageProvider,
  IRecognitionException,
  IToken,
  TokenType,
} from 'chevrotain';
