/**
 * CST to AST: walks chevrotain's concrete syntax tree (see the grammar in
 * parser.ts) and builds the AST of ast.ts, every node with its span.
 *
 * Error recovery can leave partial CST nodes (missing children, tokens
 * inserted with no text). The builder never guesses: a statement,
 * declaration or kernel that lacks a required piece is left out of the AST
 * (its syntax error was already reported by the parser), so the AST holds
 * only well-formed nodes. Missing closing tokens (`;`, `)`, `]`, `}`) do not
 * drop a node, since nothing is missing from its meaning.
 *
 * The builder also reports the syntax errors the grammar accepts on purpose:
 * chained comparisons (DY1002), integer literals above 2^53 - 1 and
 * non-finite decimals (DY1003), and expressions nested beyond MAX_EXPR_DEPTH
 * (DY1002), so later passes can recurse over any AST without overflowing.
 */
import { EOF, type CstElement, type CstNode, type IToken } from './chevrotain.js';
import { joinSpans, makeDiagnostic, type Diagnostic, type Span } from '../ir/diagnostics.js';
import type {
  AstDecl,
  AstDim,
  AstExpr,
  AstIndex,
  AstKernel,
  AstProgram,
  AstRepeat,
  AstStmt,
  AstType,
  BinaryOp,
  UnaryOp,
} from './ast.js';
import { showChars, tokenEnd, type SourceIndex } from './lexer.js';
import * as T from './tokens.js';

/** Deepest expression tree the builder accepts (the AST depth of one statement's right side). */
export const MAX_EXPR_DEPTH = 1000;

/** Thrown inside the builder when a required child is missing; caught where the node can be dropped. */
class Incomplete extends Error {}

function isToken(e: CstElement): e is IToken {
  return (e as IToken).tokenType !== undefined;
}

/** A token that really is in the source (not inserted by recovery, not EOF). */
function isReal(t: IToken | undefined): t is IToken {
  return t !== undefined && t.isInsertedInRecovery !== true && t.tokenType !== EOF && !Number.isNaN(t.startOffset);
}

function tokens(node: CstNode, key: string): IToken[] {
  const out: IToken[] = [];
  for (const e of node.children[key] ?? []) if (isToken(e)) out.push(e);
  return out;
}

function token(node: CstNode, key: string): IToken | undefined {
  return tokens(node, key)[0];
}

function nodes(node: CstNode, key: string): CstNode[] {
  const out: CstNode[] = [];
  for (const e of node.children[key] ?? []) if (!isToken(e)) out.push(e);
  return out;
}

function child(node: CstNode, key: string): CstNode | undefined {
  return nodes(node, key)[0];
}

function need<X>(x: X | undefined): X {
  if (x === undefined) throw new Incomplete();
  return x;
}

/** A required token: present and real, else the node is incomplete. */
function needTok(t: IToken | undefined): IToken {
  if (!isReal(t)) throw new Incomplete();
  return t;
}

const BINARY_OPS: ReadonlySet<string> = new Set<BinaryOp>([
  '+',
  '-',
  '*',
  '/',
  '<',
  '<=',
  '>',
  '>=',
  '==',
  '!=',
  '&&',
  '||',
]);

export class AstBuilder {
  readonly diagnostics: Diagnostic[] = [];
  /** Depth of each expression node built for the current statement (cleared per statement). */
  private readonly depth = new Map<AstExpr, number>();

  constructor(private readonly index: SourceIndex) {}

  program(cst: CstNode | undefined): AstProgram {
    const kernels: AstKernel[] = [];
    if (cst !== undefined) {
      for (const k of nodes(cst, 'kernel')) {
        const kernel = this.attempt(() => this.kernel(k));
        if (kernel !== undefined) kernels.push(kernel);
      }
    }
    return { file: this.index.file, kernels };
  }

  // ---- helpers -------------------------------------------------------------

  private attempt<X>(build: () => X): X | undefined {
    try {
      return build();
    } catch (e) {
      if (e instanceof Incomplete) return undefined;
      throw e;
    }
  }

  private tokSpan(t: IToken): Span {
    return this.index.tokenSpan(t);
  }

  /**
   * The span from `first` to `last`, the tokens that open and close a node;
   * when recovery left `last` out, the span of all real tokens under the node.
   */
  private fromTo(first: IToken, last: IToken | undefined, node: CstNode): Span {
    if (isReal(last)) return this.index.span(first.startOffset, tokenEnd(last));
    return this.extent(node);
  }

  /** The span from the first to the last real token under a CST node (slow path, for partial nodes). */
  private extent(node: CstNode): Span {
    let start = Infinity;
    let end = -Infinity;
    const visit = (n: CstNode): void => {
      for (const list of Object.values(n.children)) {
        for (const e of list) {
          if (isToken(e)) {
            if (!isReal(e)) continue;
            start = Math.min(start, e.startOffset);
            end = Math.max(end, tokenEnd(e));
          } else {
            visit(e);
          }
        }
      }
    };
    visit(node);
    if (start === Infinity) throw new Incomplete();
    return this.index.span(start, end);
  }

  private error(code: 'DY1002' | 'DY1003' | 'DY2039', message: string, span: Span): void {
    this.diagnostics.push(makeDiagnostic(code, message, span));
  }

  /** The integer value of an Integer token, reporting DY1003 beyond 2^53 - 1. */
  private intValue(t: IToken): number {
    const value = Number(t.image);
    if (!Number.isSafeInteger(value)) {
      this.error(
        'DY1003',
        `integer literal '${showChars(t.image)}' is too large (the largest is 2^53 - 1 = ${Number.MAX_SAFE_INTEGER})`,
        this.tokSpan(t),
      );
    }
    return value;
  }

  // ---- declarations ----------------------------------------------------------

  private kernel(k: CstNode): AstKernel {
    const name = needTok(token(k, 'name'));
    const block = need(child(k, 'block'));
    const paramList = child(k, 'params');
    const resultList = child(k, 'results');
    return {
      name: name.image,
      nameSpan: this.tokSpan(name),
      params: paramList === undefined ? [] : this.declList(paramList),
      results: resultList === undefined ? [] : this.declList(resultList),
      body: this.block(block),
      span: this.fromTo(needTok(token(k, 'Kernel')), token(block, 'RBrace'), k),
    };
  }

  private declList(list: CstNode): AstDecl[] {
    const out: AstDecl[] = [];
    for (const d of nodes(list, 'decl')) {
      const decl = this.attempt(() => this.decl(d));
      if (decl !== undefined) out.push(decl);
    }
    return out;
  }

  private decl(d: CstNode): AstDecl {
    const name = needTok(token(d, 'name'));
    needTok(token(d, 'Colon'));
    const type = this.type(need(child(d, 'type')));
    return { name: name.image, span: joinSpans(this.tokSpan(name), type.span), type };
  }

  private type(t: CstNode): AstType {
    const base = needTok(token(t, 'base'));
    if (token(t, 'Less') === undefined) {
      const span = this.tokSpan(base);
      return { kind: 'scalar', dtype: base.image, dtypeSpan: this.tokSpan(base), span };
    }
    const dtype = needTok(token(t, 'dtype'));
    const dimNodes = nodes(t, 'dim');
    if (dimNodes.length === 0 || dimNodes.length !== tokens(t, 'Comma').length + 1) throw new Incomplete();
    const dims = dimNodes.map((d) => this.dim(d));
    return {
      kind: 'tensor',
      format: base.image,
      formatSpan: this.tokSpan(base),
      dtype: dtype.image,
      dtypeSpan: this.tokSpan(dtype),
      dims,
      span: this.fromTo(base, token(t, 'RBracket'), t),
    };
  }

  private dim(d: CstNode): AstDim {
    const sym = token(d, 'Identifier');
    if (isReal(sym)) return { kind: 'sym', name: sym.image, span: this.tokSpan(sym) };
    const lit = needTok(token(d, 'NumberLiteral'));
    if (lit.tokenType !== T.Integer) {
      this.error(
        'DY1002',
        `expected a dimension (a name or an integer), found '${showChars(lit.image)}'`,
        this.tokSpan(lit),
      );
      throw new Incomplete();
    }
    return { kind: 'lit', value: this.intValue(lit), span: this.tokSpan(lit) };
  }

  // ---- statements ------------------------------------------------------------

  private block(b: CstNode): AstStmt[] {
    needTok(token(b, 'LBrace'));
    const out: AstStmt[] = [];
    for (const s of nodes(b, 'statement')) {
      const stmt = this.attempt(() => this.statement(s));
      if (stmt !== undefined) out.push(stmt);
    }
    return out;
  }

  private statement(s: CstNode): AstStmt {
    const assign = child(s, 'assignment');
    if (assign !== undefined) return this.assignment(assign);
    return this.repeat(need(child(s, 'repeatStmt')));
  }

  private assignment(a: CstNode): AstStmt {
    const target = needTok(token(a, 'target'));
    const list = child(a, 'indexList');
    const indices = list === undefined ? [] : this.indexList(list);
    needTok(token(a, 'Assign'));
    const exprNode = need(child(a, 'expression'));
    this.depth.clear();
    const expr = this.expression(exprNode);
    const depth = this.depthOf(expr);
    this.depth.clear();
    if (depth > MAX_EXPR_DEPTH) {
      // A chain of one operator (a + b + c ...) is as deep as it is long: say so, since nothing looks nested there.
      this.error(
        'DY1002',
        `expression is nested too deeply (more than ${MAX_EXPR_DEPTH} levels; a chain of operators such as a + b + c counts a level per operator: split it into several assignments)`,
        expr.span,
      );
      throw new Incomplete();
    }
    return {
      kind: 'assign',
      target: target.image,
      targetSpan: this.tokSpan(target),
      indices,
      expr,
      span: this.fromTo(target, token(a, 'Semicolon'), a),
    };
  }

  private repeat(r: CstNode): AstRepeat {
    const countTok = token(r, 'count');
    const blockNode = need(child(r, 'block'));
    const sign = token(r, 'sign');
    // Taken by the parser so that its recovery keeps the braces; a count must be a non-negative integer or a name.
    if (isReal(sign) || (isReal(countTok) && countTok.tokenType === T.Inf)) {
      const at = isReal(sign) ? sign : countTok!;
      const shown = `${isReal(sign) ? '-' : ''}${isReal(countTok) ? countTok.image : ''}`;
      this.error(
        'DY1002',
        `expected a repeat count (an integer or a name), found '${showChars(shown)}'`,
        isReal(countTok) ? this.fromTo(at, countTok, r) : this.tokSpan(at),
      );
      throw new Incomplete();
    }
    if (!isReal(countTok) || (countTok.tokenType !== T.Integer && countTok.tokenType !== T.Identifier)) {
      const found = isReal(countTok) ? countTok : token(blockNode, 'LBrace');
      const what = isReal(found) ? `'${showChars(found.image)}'` : 'end of file';
      const span = isReal(found) ? this.tokSpan(found) : this.tokSpan(needTok(token(r, 'Repeat')));
      this.error('DY1002', `expected a repeat count (an integer or a name), found ${what}`, span);
      throw new Incomplete();
    }
    const count: AstRepeat['count'] =
      countTok.tokenType === T.Integer
        ? { kind: 'lit', value: this.intValue(countTok), span: this.tokSpan(countTok) }
        : { kind: 'name', name: countTok.image, span: this.tokSpan(countTok) };
    const untilNode = child(r, 'untilClause');
    const until = untilNode ? this.until(untilNode, token(blockNode, 'LBrace')) : undefined;
    const body = this.block(blockNode);
    return {
      kind: 'repeat',
      count,
      ...(until ? { until } : {}),
      body,
      span: this.fromTo(needTok(token(r, 'Repeat')), token(blockNode, 'RBrace'), r),
    };
  }

  /** `until NAME stable` or `until NAME within TOL`; anything else is one DY2039 at the first piece that is wrong. */
  private until(u: CstNode, lbrace: IToken | undefined): NonNullable<AstRepeat['until']> {
    const kw = needTok(token(u, 'Until'));
    const value = token(u, 'value');
    const mode = token(u, 'mode');
    const tol = token(u, 'tol');
    const sign = token(u, 'sign');
    const bad = (found: IToken | undefined, what: string): never => {
      const at = isReal(found) ? found : isReal(lbrace) ? lbrace : kw;
      const shown = isReal(found) || isReal(lbrace) ? `'${showChars(at.image)}'` : 'end of file';
      this.error('DY2039', `expected ${what}, found ${shown}`, this.tokSpan(at));
      throw new Incomplete();
    };
    if (!isReal(value)) return bad(mode ?? tol, `the name of the value to watch after '${kw.image}'`);
    if (!isReal(mode) || (mode.image !== 'stable' && mode.image !== 'within'))
      return bad(isReal(mode) ? mode : tol, `'stable' or 'within TOLERANCE' after '${value.image}'`);
    const last = isReal(tol) ? tol : mode;
    const span = this.index.span(kw.startOffset, tokenEnd(last));
    if (isReal(sign) && !isReal(tol)) return bad(sign, 'a tolerance (a number)');
    const base = { name: value.image, nameSpan: this.tokSpan(value), span };
    if (mode.image === 'stable') {
      if (isReal(sign) || isReal(tol)) return bad(isReal(sign) ? sign : tol, `'{' ('stable' takes no tolerance)`);
      return base;
    }
    if (!isReal(tol) || tol.tokenType === T.Identifier) return bad(tol, "a tolerance (a number) after 'within'");
    // The value itself (negative, inf) is the checker's DY2036.
    const n = this.number(tol);
    const v = n.kind === 'num' ? n.value : NaN;
    const tspan = isReal(sign) ? this.index.span(sign.startOffset, tokenEnd(tol)) : n.span;
    return { ...base, within: { value: isReal(sign) ? -v : v, span: tspan } };
  }

  /** `[i, j]` of a left side or an access. */
  private indexList(list: CstNode): AstIndex[] {
    return this.identList(tokens(list, 'Identifier'), tokens(list, 'Comma'));
  }

  /** Identifiers separated by commas; every one must be really there. */
  private identList(ids: IToken[], commas: IToken[]): AstIndex[] {
    if (ids.length === 0 || ids.length !== commas.length + 1) throw new Incomplete();
    return ids.map((t) => ({ name: needTok(t).image, span: this.tokSpan(t) }));
  }

  // ---- expressions -----------------------------------------------------------

  private depthOf(e: AstExpr): number {
    return this.depth.get(e) ?? 1;
  }

  /** Records a new node's depth (one more than its deepest child) and returns it. */
  private mk<E extends AstExpr>(node: E, children: readonly AstExpr[]): E {
    let d = 0;
    for (const c of children) d = Math.max(d, this.depthOf(c));
    this.depth.set(node, d + 1);
    return node;
  }

  private expression(e: CstNode): AstExpr {
    const operands = nodes(e, 'operands').map((o) => this.orChain(o));
    const thens = nodes(e, 'then').map((t) => this.expression(t));
    if (operands.length !== thens.length + 1) throw new Incomplete();
    // a ? t0 : b ? t1 : c  is  a ? t0 : (b ? t1 : c)
    let result = need(operands[operands.length - 1]);
    for (let i = thens.length - 1; i >= 0; i--) {
      const cond = need(operands[i]);
      const then = need(thens[i]);
      result = this.mk({ kind: 'ternary', cond, then, else: result, span: joinSpans(cond.span, result.span) }, [
        cond,
        then,
        result,
      ]);
    }
    return result;
  }

  private orChain(n: CstNode): AstExpr {
    return this.binaryChain(n, (c) => this.andChain(c));
  }

  private andChain(n: CstNode): AstExpr {
    return this.binaryChain(n, (c) => this.cmpChain(c));
  }

  private cmpChain(n: CstNode): AstExpr {
    const ops = tokens(n, 'ops');
    const [first, second] = ops;
    if (first !== undefined && second !== undefined) {
      this.error(
        'DY1002',
        `comparisons cannot be chained, found '${second.image}' after '${first.image}'; combine them with '&&'`,
        this.tokSpan(second),
      );
    }
    return this.binaryChain(n, (c) => this.addChain(c));
  }

  private addChain(n: CstNode): AstExpr {
    return this.binaryChain(n, (c) => this.mulChain(c));
  }

  private mulChain(n: CstNode): AstExpr {
    return this.binaryChain(n, (c) => this.unary(c));
  }

  /** `operands (ops operands)*`, folded to the left. */
  private binaryChain(n: CstNode, sub: (c: CstNode) => AstExpr): AstExpr {
    const operands = nodes(n, 'operands').map(sub);
    const ops = tokens(n, 'ops');
    if (operands.length !== ops.length + 1) throw new Incomplete();
    let result = need(operands[0]);
    for (let i = 0; i < ops.length; i++) {
      const op = needTok(ops[i]).image;
      const rhs = need(operands[i + 1]);
      if (!BINARY_OPS.has(op)) throw new Incomplete();
      result = this.mk(
        { kind: 'binary', op: op as BinaryOp, lhs: result, rhs, span: joinSpans(result.span, rhs.span) },
        [result, rhs],
      );
    }
    return result;
  }

  private unary(n: CstNode): AstExpr {
    const ops = tokens(n, 'ops');
    let result = this.primary(need(child(n, 'primary')));
    for (let i = ops.length - 1; i >= 0; i--) {
      const t = needTok(ops[i]);
      const op: UnaryOp = t.tokenType === T.Bang ? '!' : '-';
      result = this.mk({ kind: 'unary', op, operand: result, span: joinSpans(this.tokSpan(t), result.span) }, [result]);
    }
    return result;
  }

  private primary(p: CstNode): AstExpr {
    const num = token(p, 'NumberLiteral');
    if (num !== undefined) return this.number(needTok(num));
    const open = token(p, 'LParen');
    if (open !== undefined) {
      // A parenthesised expression is its inner node, its span widened to the parentheses.
      const inner = this.expression(need(child(p, 'expression')));
      const close = token(p, 'RParen');
      const span = joinSpans(this.tokSpan(needTok(open)), isReal(close) ? this.tokSpan(close) : inner.span);
      const widened = { ...inner, span };
      this.depth.set(widened, this.depthOf(inner));
      return widened;
    }
    return this.nameExpr(need(child(p, 'nameExpr')));
  }

  private number(t: IToken): AstExpr {
    const span = this.tokSpan(t);
    if (t.tokenType === T.Inf) return { kind: 'num', value: Infinity, text: 'inf', isInt: false, span };
    if (t.tokenType === T.Integer) return { kind: 'num', value: this.intValue(t), text: t.image, isInt: true, span };
    const value = Number(t.image);
    if (!Number.isFinite(value)) this.error('DY1003', `number literal '${showChars(t.image)}' is out of range`, span);
    return { kind: 'num', value, text: t.image, isInt: false, span };
  }

  private nameExpr(n: CstNode): AstExpr {
    const name = needTok(token(n, 'name'));
    const nameSpan = this.tokSpan(name);
    const list = child(n, 'indexList');
    if (list !== undefined) {
      return {
        kind: 'access',
        name: name.image,
        nameSpan,
        indices: this.indexList(list),
        span: this.fromTo(name, token(list, 'RBracket'), n),
      };
    }
    if (token(n, 'LParen') === undefined) return { kind: 'ident', name: name.image, span: nameSpan };

    const tail = need(child(n, 'callTail'));
    const close = token(n, 'RParen');
    const end = (last: Span): Span => joinSpans(nameSpan, isReal(close) ? this.tokSpan(close) : last);
    const indexTokens = tokens(tail, 'index');
    if (indexTokens.length > 0) {
      const indices = this.identList(indexTokens, tokens(tail, 'Comma'));
      needTok(token(tail, 'Colon'));
      const body = this.expression(need(child(tail, 'body')));
      return this.mk({ kind: 'reduce', op: name.image, opSpan: nameSpan, indices, body, span: end(body.span) }, [body]);
    }
    const args = nodes(tail, 'args').map((a) => this.expression(a));
    const commas = tokens(tail, 'Comma');
    if (args.length === 0 ? commas.length !== 0 : args.length !== commas.length + 1) throw new Incomplete();
    const last = args[args.length - 1];
    return this.mk(
      { kind: 'call', fn: name.image, fnSpan: nameSpan, args, span: end(last === undefined ? nameSpan : last.span) },
      args,
    );
  }
}
