/**
 * Token definitions for the dype language (docs/LANGUAGE.md).
 *
 * Order matters: chevrotain tries the patterns in `allTokens` order and takes
 * the first match, so longer operators come before their prefixes
 * (`->` before `-`, `<=` before `<`, `//` comments before `/`), decimals before
 * integers, and keywords before identifiers (keywords use `longer_alt` so that
 * `kernels`, `repeated`, `untilled` and `info` lex as identifiers).
 */
import { createToken, Lexer, type TokenType } from './chevrotain.js';

export const WhiteSpace = createToken({ name: 'WhiteSpace', pattern: /[ \t\r\n\f\v]+/, group: Lexer.SKIPPED });
/** `# ...` or `// ...` up to the end of the line. */
export const Comment = createToken({ name: 'Comment', pattern: /(?:#|\/\/)[^\n\r]*/, group: Lexer.SKIPPED });

export const Identifier = createToken({ name: 'Identifier', pattern: /[A-Za-z_][A-Za-z0-9_]*/, label: 'a name' });

export const Kernel = createToken({ name: 'Kernel', pattern: /kernel/, longer_alt: Identifier, label: "'kernel'" });
export const Repeat = createToken({ name: 'Repeat', pattern: /repeat/, longer_alt: Identifier, label: "'repeat'" });
/** `until` opens a repeat's stop test; `stable` and `within` after it are plain identifiers checked by cst-to-ast. */
export const Until = createToken({ name: 'Until', pattern: /until/, longer_alt: Identifier, label: "'until'" });

/** Category for every numeric literal, `inf` included. */
export const NumberLiteral = createToken({ name: 'NumberLiteral', pattern: Lexer.NA, label: 'a number' });
/** `inf`: a number literal spelled as a keyword. */
export const Inf = createToken({
  name: 'Inf',
  pattern: /inf/,
  longer_alt: Identifier,
  categories: [NumberLiteral],
  label: "'inf'",
});
/**
 * Decimals: `0.5`, `.5`, `1e-6`, `2.5E3`. A trailing dot (`1.`) is not a
 * number: it lexes as `1` followed by a bad character.
 */
export const Decimal = createToken({
  name: 'Decimal',
  pattern: /(?:\d+\.\d+|\.\d+)(?:[eE][+-]?\d+)?|\d+[eE][+-]?\d+/,
  categories: [NumberLiteral],
  label: 'a number',
});
/** Plain digit strings; the only literals with `isInt: true`. */
export const Integer = createToken({
  name: 'Integer',
  pattern: /\d+/,
  categories: [NumberLiteral],
  label: 'an integer',
});

export const Arrow = createToken({ name: 'Arrow', pattern: /->/, label: "'->'" });

export const LParen = createToken({ name: 'LParen', pattern: /\(/, label: "'('" });
export const RParen = createToken({ name: 'RParen', pattern: /\)/, label: "')'" });
export const LBracket = createToken({ name: 'LBracket', pattern: /\[/, label: "'['" });
export const RBracket = createToken({ name: 'RBracket', pattern: /]/, label: "']'" });
export const LBrace = createToken({ name: 'LBrace', pattern: /\{/, label: "'{'" });
export const RBrace = createToken({ name: 'RBrace', pattern: /}/, label: "'}'" });
export const Comma = createToken({ name: 'Comma', pattern: /,/, label: "','" });
export const Colon = createToken({ name: 'Colon', pattern: /:/, label: "':'" });
export const Semicolon = createToken({ name: 'Semicolon', pattern: /;/, label: "';'" });
export const Question = createToken({ name: 'Question', pattern: /\?/, label: "'?'" });

/** Category of `< <= > >= == !=`. */
export const ComparisonOp = createToken({ name: 'ComparisonOp', pattern: Lexer.NA, label: 'a comparison' });
/** Category of binary `+ -`. */
export const AdditiveOp = createToken({ name: 'AdditiveOp', pattern: Lexer.NA, label: "'+' or '-'" });
/** Category of `* /`. */
export const MultiplicativeOp = createToken({ name: 'MultiplicativeOp', pattern: Lexer.NA, label: "'*' or '/'" });
/** Category of prefix `- !`. */
export const UnaryOp = createToken({ name: 'UnaryOp', pattern: Lexer.NA, label: "'-' or '!'" });

export const LessEq = createToken({ name: 'LessEq', pattern: /<=/, categories: [ComparisonOp], label: "'<='" });
export const GreaterEq = createToken({ name: 'GreaterEq', pattern: />=/, categories: [ComparisonOp], label: "'>='" });
export const EqEq = createToken({ name: 'EqEq', pattern: /==/, categories: [ComparisonOp], label: "'=='" });
export const NotEq = createToken({ name: 'NotEq', pattern: /!=/, categories: [ComparisonOp], label: "'!='" });
/** `<` and `>` also bracket the dtype in `csr<f32>`. */
export const Less = createToken({ name: 'Less', pattern: /</, categories: [ComparisonOp], label: "'<'" });
export const Greater = createToken({ name: 'Greater', pattern: />/, categories: [ComparisonOp], label: "'>'" });

export const AndAnd = createToken({ name: 'AndAnd', pattern: /&&/, label: "'&&'" });
export const OrOr = createToken({ name: 'OrOr', pattern: /\|\|/, label: "'||'" });
export const Assign = createToken({ name: 'Assign', pattern: /=/, label: "'='" });
export const Bang = createToken({ name: 'Bang', pattern: /!/, categories: [UnaryOp], label: "'!'" });
export const Plus = createToken({ name: 'Plus', pattern: /\+/, categories: [AdditiveOp], label: "'+'" });
export const Minus = createToken({ name: 'Minus', pattern: /-/, categories: [AdditiveOp, UnaryOp], label: "'-'" });
export const Star = createToken({ name: 'Star', pattern: /\*/, categories: [MultiplicativeOp], label: "'*'" });
export const Slash = createToken({ name: 'Slash', pattern: /\//, categories: [MultiplicativeOp], label: "'/'" });

/** Every token type, in lexer priority order (categories included, as chevrotain requires). */
export const allTokens: TokenType[] = [
  WhiteSpace,
  Comment,
  Kernel,
  Repeat,
  Until,
  Inf,
  Identifier,
  NumberLiteral,
  Decimal,
  Integer,
  Arrow,
  LParen,
  RParen,
  LBracket,
  RBracket,
  LBrace,
  RBrace,
  Comma,
  Colon,
  Semicolon,
  Question,
  ComparisonOp,
  AdditiveOp,
  MultiplicativeOp,
  UnaryOp,
  LessEq,
  GreaterEq,
  EqEq,
  NotEq,
  Less,
  Greater,
  AndAnd,
  OrOr,
  Assign,
  Bang,
  Plus,
  Minus,
  Star,
  Slash,
];
