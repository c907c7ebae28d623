/**
 * The dype grammar as a chevrotain CstParser with error recovery, and the
 * error message provider that turns chevrotain's failures into short
 * "expected X, found Y" messages. The single parser instance is built once at
 * module load (chevrotain's self-analysis is slow) and reused by parse.ts.
 *
 * Grammar (EBNF; CST child labels in brackets):
 *
 *   program    := kernel*
 *   kernel     := 'kernel' IDENT[name] '(' declList[params]? ')' '->' '(' declList[results]? ')' block
 *   declList   := decl (',' decl)*
 *   decl       := IDENT[name] ':' type
 *   type       := IDENT[base] ('<' IDENT[dtype] '>' '[' dim (',' dim)* ']')?
 *   dim        := IDENT | NUMBER                 (non-integers reported by cst-to-ast)
 *   block      := '{' statement* '}'
 *   statement  := assignment | repeatStmt
 *   assignment := IDENT[target] indexList? '=' expression ';'
 *   repeatStmt := 'repeat' '-'[sign]? (NUMBER | IDENT)[count]? untilClause? block   (bad or missing counts reported by cst-to-ast)
 *   untilClause := 'until' IDENT[value]? IDENT[mode]? '-'[sign]? (NUMBER | IDENT)[tol]?   ('stable' | 'within' NUMBER; checked by cst-to-ast)
 *   indexList  := '[' IDENT (',' IDENT)* ']'
 *   expression := orExpr[operands] ('?' expression[then] ':' orExpr[operands])*   (right-assoc ternary, folded in cst-to-ast)
 *   orExpr     := andExpr (('||')[ops] andExpr)*
 *   andExpr    := cmpExpr (('&&')[ops] cmpExpr)*
 *   cmpExpr    := addExpr ((< <= > >= == !=)[ops] addExpr)*  (a chain is reported by cst-to-ast)
 *   addExpr    := mulExpr ((+ -)[ops] mulExpr)*
 *   mulExpr    := unaryExpr ((* /)[ops] unaryExpr)*
 *   unaryExpr  := (- !)[ops]* primary
 *   primary    := NUMBER | 'inf' | '(' expression ')' | nameExpr
 *   nameExpr   := IDENT[name] (indexList | '(' callTail ')')?
 *   callTail   := IDENT[index] (',' IDENT[index])* ':' expression[body]   (only if LA matches IDENT (',' IDENT)* ':')
 *               | (expression[args] (',' expression[args])*)?
 *
 * Repetitions (ternary else-chains, unary prefixes, binary chains) are loops,
 * not recursion, so only brackets and ternary then-branches nest the stack;
 * parse.ts bounds that nesting before parsing.
 */
import { CstParser, EOF, type IParserErrorMessageProvider, type IToken, type TokenType } from './chevrotain.js';
import { showChars } from './lexer.js';
import * as T from './tokens.js';

/** How a token is named in messages: "end of file" or its text in quotes. */
export function describeToken(tok: IToken | undefined): string {
  if (tok === undefined || tok.tokenType === EOF || tok.image === '' || Number.isNaN(tok.startOffset))
    return 'end of file';
  return `'${showChars(tok.image)}'`;
}

function label(t: TokenType): string {
  if (t === EOF) return 'end of file';
  return t.LABEL ?? t.name;
}

function isEnd(tok: IToken | undefined): boolean {
  return tok === undefined || tok.tokenType === EOF;
}

/** "expected X" for a missing token, with context where the rule tells us more. */
function expectedToken(rule: string, expected: TokenType, actual: IToken, previous: IToken | undefined): string {
  const prev = previous?.tokenType;
  switch (`${rule}:${expected.name}`) {
    case 'program:EOF':
      return "expected 'kernel'";
    case 'kernel:Identifier':
      return "expected a kernel name after 'kernel'";
    case 'kernel:LParen':
      return prev === T.Arrow ? "expected '(' before the results" : "expected '(' after the kernel name";
    case 'kernel:RParen':
      return prev === T.LParen ? "expected a declaration or ')'" : "expected ',' or ')' in the declaration list";
    case 'kernel:Arrow':
      return "expected '->' after the parameter list";
    case 'block:LBrace':
      return "expected '{'";
    case 'block:RBrace':
      return actual.tokenType === T.Kernel || isEnd(actual)
        ? "expected '}' to close the block"
        : "expected a statement or '}'";
    case 'declList:Identifier':
    case 'decl:Identifier':
      return 'expected a parameter or result name';
    case 'decl:Colon':
      return "expected ':' and a type after the name";
    case 'type:Identifier':
      return prev === T.Less ? "expected a dtype after '<'" : 'expected a type';
    case 'type:Greater':
      return "expected '>' after the dtype";
    case 'type:LBracket':
      return "expected '[' and the dimensions after the tensor type";
    case 'type:RBracket':
      return "expected ',' or ']' in the dimension list";
    case 'assignment:Assign':
      return "expected '=' after the assignment target";
    case 'assignment:Semicolon':
      return "expected ';' after statement";
    case 'indexList:Identifier':
      return 'expected an index name';
    case 'indexList:RBracket':
      return "expected ',' or ']' in the index list";
    case 'expression:Colon':
      return "expected ':' in the conditional expression";
    case 'primary:RParen':
      return "expected ')' to close the parenthesis";
    case 'nameExpr:RParen':
      return "expected ',' or ')' in the argument list";
    default:
      return `expected ${label(expected)}`;
  }
}

function firstTokens(paths: TokenType[][]): string[] {
  const names: string[] = [];
  for (const p of paths) {
    const first = p[0];
    if (first !== undefined && !names.includes(label(first))) names.push(label(first));
  }
  return names;
}

function expectedOneOf(rule: string, paths: TokenType[][]): string {
  switch (rule) {
    case 'primary':
    case 'expression':
    case 'unaryExpr':
      return 'expected an expression';
    case 'statement':
      return 'expected a statement';
    case 'dim':
      return 'expected a dimension (a name or an integer)';
    case 'repeatStmt':
      return 'expected a repeat count (an integer or a name)';
    default: {
      const names = firstTokens(paths);
      if (names.length === 0) return 'unexpected input';
      if (names.length === 1) return `expected ${names[0]}`;
      return `expected ${names.slice(0, -1).join(', ')} or ${names[names.length - 1]}`;
    }
  }
}

export const errorMessageProvider: IParserErrorMessageProvider = {
  buildMismatchTokenMessage({ expected, actual, previous, ruleName }) {
    return `${expectedToken(ruleName, expected, actual, previous)}, found ${describeToken(actual)}`;
  },
  buildNotAllInputParsedMessage({ firstRedundant }) {
    return `expected 'kernel', found ${describeToken(firstRedundant)}`;
  },
  buildNoViableAltMessage({ expectedPathsPerAlt, actual, ruleName }) {
    return `${expectedOneOf(ruleName, expectedPathsPerAlt.flat())}, found ${describeToken(actual[0])}`;
  },
  buildEarlyExitMessage({ expectedIterationPaths, actual, ruleName }) {
    return `${expectedOneOf(ruleName, expectedIterationPaths)}, found ${describeToken(actual[0])}`;
  },
};

export class DypeParser extends CstParser {
  constructor() {
    super(T.allTokens, { recoveryEnabled: true, maxLookahead: 3, errorMessageProvider });
    this.performSelfAnalysis();
  }

  /** True when the tokens ahead are `IDENT (',' IDENT)* ':'`: the head of a reduction. */
  private reductionAhead(): boolean {
    if (this.LA(1).tokenType !== T.Identifier) return false;
    let k = 2;
    while (this.LA(k).tokenType === T.Comma) {
      if (this.LA(k + 1).tokenType !== T.Identifier) return false;
      k += 2;
    }
    return this.LA(k).tokenType === T.Colon;
  }

  readonly program = this.RULE('program', () => {
    this.MANY(() => this.SUBRULE(this.kernel));
  });

  readonly kernel = this.RULE('kernel', () => {
    this.CONSUME(T.Kernel);
    this.CONSUME(T.Identifier, { LABEL: 'name' });
    this.CONSUME(T.LParen);
    this.OPTION(() => this.SUBRULE(this.declList, { LABEL: 'params' }));
    this.CONSUME(T.RParen);
    this.CONSUME(T.Arrow);
    this.CONSUME2(T.LParen);
    this.OPTION2(() => this.SUBRULE2(this.declList, { LABEL: 'results' }));
    this.CONSUME2(T.RParen);
    this.SUBRULE(this.block);
  });

  readonly declList = this.RULE('declList', () => {
    this.SUBRULE(this.decl);
    this.MANY(() => {
      this.CONSUME(T.Comma);
      this.SUBRULE2(this.decl);
    });
  });

  readonly decl = this.RULE('decl', () => {
    this.CONSUME(T.Identifier, { LABEL: 'name' });
    this.CONSUME(T.Colon);
    this.SUBRULE(this.type);
  });

  readonly type = this.RULE('type', () => {
    this.CONSUME(T.Identifier, { LABEL: 'base' });
    this.OPTION(() => {
      this.CONSUME(T.Less);
      this.CONSUME2(T.Identifier, { LABEL: 'dtype' });
      this.CONSUME(T.Greater);
      this.CONSUME(T.LBracket);
      this.SUBRULE(this.dim);
      this.MANY(() => {
        this.CONSUME(T.Comma);
        this.SUBRULE2(this.dim);
      });
      this.CONSUME(T.RBracket);
    });
  });

  readonly dim = this.RULE('dim', () => {
    // Any number is accepted here; cst-to-ast rejects non-integers with a clearer message.
    this.OR([{ ALT: () => this.CONSUME(T.Identifier) }, { ALT: () => this.CONSUME(T.NumberLiteral) }]);
  });

  readonly block = this.RULE('block', () => {
    this.CONSUME(T.LBrace);
    this.MANY(() => this.SUBRULE(this.statement));
    this.CONSUME(T.RBrace);
  });

  readonly statement = this.RULE('statement', () => {
    this.OR([{ ALT: () => this.SUBRULE(this.assignment) }, { ALT: () => this.SUBRULE(this.repeatStmt) }]);
  });

  readonly assignment = this.RULE('assignment', () => {
    this.CONSUME(T.Identifier, { LABEL: 'target' });
    this.OPTION(() => this.SUBRULE(this.indexList));
    this.CONSUME(T.Assign);
    this.SUBRULE(this.expression);
    this.CONSUME(T.Semicolon);
  });

  readonly repeatStmt = this.RULE('repeatStmt', () => {
    this.CONSUME(T.Repeat);
    // Lenient on purpose (a missing, negative, fractional or infinite count is reported by cst-to-ast):
    // a failure here would make recovery lose track of the braces.
    this.OPTION4(() => this.CONSUME(T.Minus, { LABEL: 'sign' }));
    this.OPTION(() => {
      this.OR([
        { ALT: () => this.CONSUME(T.NumberLiteral, { LABEL: 'count' }) },
        { ALT: () => this.CONSUME(T.Identifier, { LABEL: 'count' }) },
      ]);
    });
    this.OPTION2(() => this.SUBRULE(this.untilClause));
    this.SUBRULE(this.block);
  });

  // As lenient as the count: every piece optional here, so that recovery keeps the braces.
  readonly untilClause = this.RULE('untilClause', () => {
    this.CONSUME(T.Until);
    this.OPTION(() => this.CONSUME(T.Identifier, { LABEL: 'value' }));
    this.OPTION2(() => this.CONSUME2(T.Identifier, { LABEL: 'mode' }));
    this.OPTION3(() => this.CONSUME(T.Minus, { LABEL: 'sign' }));
    // A name where the tolerance goes (`within nan`, `within eps`) is taken too, for cst-to-ast's one DY2039 at it:
    // left to the block, it became a DY1002 at the name and recovery errors after it.
    this.OPTION4(() =>
      this.OR([
        { ALT: () => this.CONSUME(T.NumberLiteral, { LABEL: 'tol' }) },
        { ALT: () => this.CONSUME3(T.Identifier, { LABEL: 'tol' }) },
      ]),
    );
  });

  readonly indexList = this.RULE('indexList', () => {
    this.CONSUME(T.LBracket);
    this.CONSUME(T.Identifier);
    this.MANY(() => {
      this.CONSUME(T.Comma);
      this.CONSUME2(T.Identifier);
    });
    this.CONSUME(T.RBracket);
  });

  readonly expression = this.RULE('expression', () => {
    this.SUBRULE(this.orExpr, { LABEL: 'operands' });
    this.MANY(() => {
      this.CONSUME(T.Question);
      this.SUBRULE(this.expression, { LABEL: 'then' });
      this.CONSUME(T.Colon);
      this.SUBRULE2(this.orExpr, { LABEL: 'operands' });
    });
  });

  readonly orExpr = this.RULE('orExpr', () => {
    this.SUBRULE(this.andExpr, { LABEL: 'operands' });
    this.MANY(() => {
      this.CONSUME(T.OrOr, { LABEL: 'ops' });
      this.SUBRULE2(this.andExpr, { LABEL: 'operands' });
    });
  });

  readonly andExpr = this.RULE('andExpr', () => {
    this.SUBRULE(this.cmpExpr, { LABEL: 'operands' });
    this.MANY(() => {
      this.CONSUME(T.AndAnd, { LABEL: 'ops' });
      this.SUBRULE2(this.cmpExpr, { LABEL: 'operands' });
    });
  });

  readonly cmpExpr = this.RULE('cmpExpr', () => {
    this.SUBRULE(this.addExpr, { LABEL: 'operands' });
    this.MANY(() => {
      this.CONSUME(T.ComparisonOp, { LABEL: 'ops' });
      this.SUBRULE2(this.addExpr, { LABEL: 'operands' });
    });
  });

  readonly addExpr = this.RULE('addExpr', () => {
    this.SUBRULE(this.mulExpr, { LABEL: 'operands' });
    this.MANY(() => {
      this.CONSUME(T.AdditiveOp, { LABEL: 'ops' });
      this.SUBRULE2(this.mulExpr, { LABEL: 'operands' });
    });
  });

  readonly mulExpr = this.RULE('mulExpr', () => {
    this.SUBRULE(this.unaryExpr, { LABEL: 'operands' });
    this.MANY(() => {
      this.CONSUME(T.MultiplicativeOp, { LABEL: 'ops' });
      this.SUBRULE2(this.unaryExpr, { LABEL: 'operands' });
    });
  });

  readonly unaryExpr = this.RULE('unaryExpr', () => {
    this.MANY(() => this.CONSUME(T.UnaryOp, { LABEL: 'ops' }));
    this.SUBRULE(this.primary);
  });

  readonly primary = this.RULE('primary', () => {
    this.OR([
      { ALT: () => this.CONSUME(T.NumberLiteral) },
      {
        ALT: () => {
          this.CONSUME(T.LParen);
          this.SUBRULE(this.expression);
          this.CONSUME(T.RParen);
        },
      },
      { ALT: () => this.SUBRULE(this.nameExpr) },
    ]);
  });

  readonly nameExpr = this.RULE('nameExpr', () => {
    this.CONSUME(T.Identifier, { LABEL: 'name' });
    this.OPTION(() => {
      this.OR([
        { ALT: () => this.SUBRULE(this.indexList) },
        {
          ALT: () => {
            this.CONSUME(T.LParen);
            this.SUBRULE(this.callTail);
            this.CONSUME(T.RParen);
          },
        },
      ]);
    });
  });

  readonly callTail = this.RULE('callTail', () => {
    this.OR({
      IGNORE_AMBIGUITIES: true,
      DEF: [
        {
          GATE: () => this.reductionAhead(),
          ALT: () => {
            this.CONSUME(T.Identifier, { LABEL: 'index' });
            this.MANY(() => {
              this.CONSUME(T.Comma);
              this.CONSUME2(T.Identifier, { LABEL: 'index' });
            });
            this.CONSUME(T.Colon);
            this.SUBRULE(this.expression, { LABEL: 'body' });
          },
        },
        {
          ALT: () => {
            this.OPTION(() => {
              this.SUBRULE2(this.expression, { LABEL: 'args' });
              this.MANY2(() => {
                this.CONSUME2(T.Comma);
                this.SUBRULE3(this.expression, { LABEL: 'args' });
              });
            });
          },
        },
      ],
    });
  });
}

/** The one parser instance; set `input` and call `program()` to parse. */
export const parser = new DypeParser();
