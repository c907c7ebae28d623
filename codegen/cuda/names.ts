/**
 * Identifiers in generated CUDA C++. Every name that reaches C++ comes from
 * here: loop-IR names (`A.rowPtr`, `r.next`, `nnz(A)`, loop variables) are
 * mangled into C identifiers, reserved words are prefixed, and anything that
 * is not a plain identifier afterwards, or that two different names would
 * share, is rejected with a DY61xx diagnostic naming the kernel. Names the
 * emitter itself introduces all start with `dy_` (or `dype_` for exported
 * symbols), a prefix user-derived names are never given (they are moved to
 * `u_` when they have it).
 */
import { DiagnosticError, fileSpan, makeDiagnostic, type DiagCode, type Span } from '../../ir/diagnostics.js';
import { GENERATOR_NAMES } from './generator-names.js';

/** C++20 keywords, alternative tokens, CUDA qualifiers and built-ins, and the library names the generated code uses. */
export const LANGUAGE_RESERVED: ReadonlySet<string> = new Set(
  (
    'alignas alignof and and_eq asm auto bitand bitor bool break case catch char char8_t char16_t char32_t class compl concept const consteval constexpr constinit const_cast continue co_await co_return co_yield decltype default delete do double dynamic_cast else enum explicit export extern false float for friend goto if inline int long mutable namespace new noexcept not not_eq nullptr operator or or_eq private protected public register reinterpret_cast requires return short signed sizeof static static_assert static_cast struct switch template this thread_local throw true try typedef typeid typename union unsigned using virtual void volatile wchar_t while xor xor_eq ' +
    'final override import module main NULL restrict ' +
    'threadIdx blockIdx blockDim gridDim warpSize dim3 uint3 float4 double2 make_float4 make_double2 cudaStream_t cudaError_t assert errno stdin stdout stderr ' +
    'min max exp expf log logf sqrt sqrtf fabs fabsf abs tanh tanhf pow powf fmin fminf fmax fmaxf isnan isinf INFINITY NAN ' +
    'std size_t int32_t int64_t uint8_t uint32_t printf malloc free memcpy memset ' +
    // Macros of the standard headers the generated code includes (<climits>, <cfloat>, <cstdint>, <cmath>): a macro
    // replaces a name in every scope, so a program's tensor INT_MIN broke the integer min/max identities.
    'CHAR_BIT CHAR_MIN CHAR_MAX SCHAR_MIN SCHAR_MAX UCHAR_MAX SHRT_MIN SHRT_MAX USHRT_MAX INT_MIN INT_MAX UINT_MAX LONG_MIN LONG_MAX ULONG_MAX LLONG_MIN LLONG_MAX ULLONG_MAX ' +
    'FLT_MIN FLT_MAX FLT_EPSILON FLT_DIG DBL_MIN DBL_MAX DBL_EPSILON DBL_DIG HUGE_VAL HUGE_VALF ' +
    'INT8_MIN INT8_MAX INT16_MIN INT16_MAX INT32_MIN INT32_MAX INT64_MIN INT64_MAX UINT8_MAX UINT16_MAX UINT32_MAX UINT64_MAX SIZE_MAX PTRDIFF_MIN PTRDIFF_MAX EOF'
  ).split(' '),
);

/** Both lists: a program's name that is one of them is written with a `u_` prefix. */
const RESERVED = new Set([...LANGUAGE_RESERVED, ...GENERATOR_NAMES.split(/\s+/).filter((w) => w !== '')]);

const IDENT = /^[A-Za-z][A-Za-z0-9_]*$/;

/** Raised for a name that cannot become a C++ identifier; carries the kernel for the message. */
export function cudaDiagnostic(code: DiagCode, message: string, span?: Span, file = '<program>'): DiagnosticError {
  return new DiagnosticError([makeDiagnostic(code, message, span ?? fileSpan(file))]);
}

export interface NameContext {
  kernel: string;
  span?: Span;
  file?: string;
}

function reject(ctx: NameContext, code: DiagCode, msg: string): never {
  throw cudaDiagnostic(code, `kernel ${kernelShown(ctx.kernel)}: ${msg}`, ctx.span, ctx.file);
}

/** A kernel name in a message: quoted as written when it is an identifier, JSON-escaped otherwise. */
export function kernelShown(name: string): string {
  return /^[A-Za-z_][A-Za-z0-9_]*$/.test(name) ? `'${name}'` : shown(name);
}

/** Shows a hostile name safely inside a message. */
export function shown(name: string): string {
  return JSON.stringify(name.length > 60 ? `${name.slice(0, 60)}...` : name);
}

/**
 * The C spelling of one loop-IR name: `.` becomes `_`, `nnz(X)` becomes
 * `nnz_X` (`maxrow(X)`, `maxcol(X)`: `maxrow_X`, `maxcol_X`), a reserved word or a `dy`-prefixed name gets `u_` in front.
 * Returns undefined for names that are no identifier after that.
 */
export function mangle(name: string): string | undefined {
  const figure = /^(nnz|maxrow|maxcol)\(([^()]*)\)$/.exec(name);
  let id = figure ? `${figure[1]!}_${figure[2]!}` : name.replace(/\./g, '_');
  if (!IDENT.test(id) || id.includes('__')) return undefined;
  if (RESERVED.has(id) || /^dy(pe)?_/i.test(id) || /^u_/.test(id)) id = `u_${id}`;
  return id;
}

/** One C scope: IR name -> C name, injective, or a DY61xx diagnostic. */
export class Scope {
  private readonly toC = new Map<string, string>();
  private readonly fromC = new Map<string, string>();

  constructor(
    private readonly ctx: NameContext,
    private readonly what: string,
  ) {}

  add(name: string): string {
    const have = this.toC.get(name);
    if (have !== undefined) return have;
    const c = mangle(name);
    if (c === undefined)
      reject(
        this.ctx,
        'DY6101',
        `${this.what}: the name ${shown(name)} cannot be written as a C++ identifier (expected letters, digits and single underscores, starting with a letter)`,
      );
    const other = this.fromC.get(c);
    if (other !== undefined)
      reject(
        this.ctx,
        'DY6102',
        `${this.what}: the names ${shown(other)} and ${shown(name)} would both be the C++ identifier '${c}'; rename one of them`,
      );
    this.toC.set(name, c);
    this.fromC.set(c, name);
    return c;
  }

  get(name: string): string {
    const c = this.toC.get(name);
    if (c === undefined)
      throw new Error(`cuda emitter: kernel ${this.ctx.kernel}: ${this.what}: unknown name ${shown(name)}`);
    return c;
  }

  has(name: string): boolean {
    return this.toC.has(name);
  }
}

/**
 * A part of an exported symbol (program or kernel name): a plain identifier
 * without leading, trailing or double underscores, so that joining parts with
 * `_` never produces a reserved `__`.
 */
export function symbolPart(ctx: NameContext, what: string, name: string): string {
  if (!IDENT.test(name) || name.includes('__') || name.endsWith('_'))
    reject(
      ctx,
      'DY6101',
      `the ${what} name ${shown(name)} cannot be part of an exported C symbol (expected letters, digits and single underscores, starting with a letter and not ending in '_')`,
    );
  return name;
}

/** A string literal in C++ source: printable ASCII kept, everything else as octal escapes. */
export function cString(s: string): string {
  let out = '"';
  for (const ch of Buffer.from(s, 'utf8')) {
    if (ch === 0x22 || ch === 0x5c || ch === 0x3f) out += `\\${ch.toString(8).padStart(3, '0')}`;
    else if (ch >= 0x20 && ch < 0x7f) out += String.fromCharCode(ch);
    else out += `\\${ch.toString(8).padStart(3, '0')}`;
  }
  return `${out}"`;
}

/** Text safe inside a `//` comment: one line of printable ASCII, no line splices. */
export function commentText(s: string): string {
  return s.replace(/[^\x20-\x7e]/g, '?').replace(/\\/g, '/');
}
