/**
 * Errors about data given to a program at run time: Matrix Market files, edge
 * lists, parameter values and inputs that do not fit the kernel's signature.
 * The runtime may not import the compiler, so these codes (DY3xxx) live here;
 * a test checks they stay disjoint from the compiler's catalogue.
 */

export const DATA_ERROR_CODES = {
  DY3001: 'bad Matrix Market header',
  DY3002: 'bad size line',
  DY3003: 'index out of range',
  DY3004: 'index is not an integer',
  DY3005: 'wrong number of entries',
  DY3006: 'NaN where a number is required',
  DY3007: 'dimension mismatch against the program',
  DY3008: 'malformed value',
  DY3009: 'duplicate entry',
  DY3010: 'file cannot be read',
  DY3011: 'unsupported Matrix Market type',
  DY3012: 'malformed edge list line',
  DY3013: 'missing input',
  DY3014: 'unknown input or parameter name',
  DY3015: 'bad parameter value',
  DY3016: 'input has the wrong storage kind for its parameter',
  DY3017: 'output file or directory cannot be written',
  DY3018: 'system file is not valid JSON',
  DY3019: 'unknown or repeated field in a system file',
  DY3020: 'missing field in a system file',
  DY3021: 'bad value in a system file',
  DY3022: 'duplicate device id in a system file',
  DY3023: 'peer link names an unknown device',
  DY3024: 'system needs exactly one host CPU',
  DY3025: 'device has fields that do not fit its kind',
  DY3026: 'redundant peer link',
  DY3030: 'no mapping meets the constraints',
  DY3031: 'tensor too large to hold',
  DY3040: 'backend not available on this host',
  DY3041: 'no backend for a device kind the partition uses',
  DY3042: 'runtime input does not fit the kernel',
  DY3043: 'native library missing or not built, or the project compiled without the target it needs',
  DY3044:
    'native library built from another program or ABI version; a project or plan.json of another program, of another format version, or without guards for the `--objective` asked; backends given to a runtime generated from another program or version of it',
  DY3045: 'a device call failed',
  DY3046: 'device memory exhausted and no fallback partition can run',
  DY3047: 'bad partition',
  DY3048: 'bad history file, or one with no run of the chosen system',
  DY3049: 'unknown system preset',
  DY3050: '--threads more than the cores, capped (a warning)',
  DY3051: 'runtime input is not a well-formed tensor',
  DY3052: 'a native library build failed',
} as const;

export type DataErrorCode = keyof typeof DATA_ERROR_CODES;

/** What a value is, for a message saying what was found instead: `null`, `an array`, `an object`, `a number`. */
export function valueKind(x: unknown): string {
  return x === null ? 'null' : Array.isArray(x) ? 'an array' : typeof x === 'object' ? 'an object' : `a ${typeof x}`;
}

export class InputError extends Error {
  constructor(
    public readonly code: DataErrorCode,
    /** The file (or `--param NAME` / `--input NAME`) the problem is in. */
    public readonly file: string,
    /** 1-based line in that file, when the problem is on one line. */
    public readonly line: number | undefined,
    public readonly detail: string,
  ) {
    super(`${file}${line !== undefined ? `:${line}` : ''}: error ${code}: ${detail}`);
    this.name = 'InputError';
  }
}
