/**
 * `--param NAME=VALUE` takes decimal numbers (with an exponent), true/false
 * and inf, as Matrix Market values are read: JavaScript's other number
 * syntaxes (hexadecimal, binary, octal) are a DY3015, not a silent reading.
 */
import { describe, expect, it } from 'vitest';
import { parseScalar, type ScalarKind } from '../../cli/inputs.js';
import { dtypeMisfit } from '../../runtime/dtype.js';
import { InputError } from '../../runtime/errors.js';

describe('parseScalar', () => {
  it.each([
    ['16', 16],
    ['-2.5', -2.5],
    ['+.5', 0.5],
    ['3.', 3],
    ['1e3', 1000],
    ['1.5E-2', 0.015],
    [' 7 ', 7],
    ['true', 1],
    ['FALSE', 0],
    ['inf', Infinity],
    ['-inf', -Infinity],
  ])('reads %j as %d', (text, value) => {
    expect(parseScalar('n', text)).toBe(value);
  });

  it.each(['0x10', '0b11', '0o17', '', '.', 'e3', '1e', '1_000', 'nan', 'Infinity', '1 2', '--1'])(
    'rejects %j with DY3015 naming the option',
    (text) => {
      let err: unknown;
      try {
        parseScalar('n', text);
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(InputError);
      expect((err as InputError).code).toBe('DY3015');
      expect(String((err as Error).message)).toContain('--param n');
    },
  );
});

// Regression: true was 1 for a dim, 2^31 wrapped in an i32 on native and wasm (the float64 reference kept it), and
// 1e400 or an f32 1e39 became an infinity, all silently.
describe('parseScalar against what the name is', () => {
  const refused = (text: string, kind: ScalarKind): string => {
    try {
      parseScalar('t', text, undefined, kind);
    } catch (e) {
      expect((e as InputError).code).toBe('DY3015');
      return (e as Error).message;
    }
    return 'accepted';
  };

  it.each([
    ['true', 'dim', /true\/false are for bool parameters; 't' is a dim/],
    ['true', 'i32', /true\/false are for bool parameters; 't' is i32/],
    ['inf', 'i64', /an infinity is for f32 and f64 parameters/],
    ['2147483648', 'i32', /2147483648 is outside i32's range -2147483648\.\.2147483647/],
    ['-2147483649', 'i32', /outside i32's range/],
    ['9007199254740992', 'i64', /outside the i64 values a float64 holds exactly/],
    ['1e39', 'f32', /'t' is f32: 1e39 is beyond f32's range/],
    ['1e400', 'f64', /'1e400' is beyond float64's range \(write inf for an infinity\)/],
    ['2', 'bool', /not 0 or 1/],
  ] as const)('%j as %s is refused', (text, kind, why) => {
    expect(refused(text, kind)).toMatch(why);
  });

  it.each([
    ['true', 'bool', 1],
    ['2147483647', 'i32', 2147483647],
    ['-2147483648', 'i32', -2147483648],
    ['3.4028235e38', 'f32', 3.4028235e38],
    ['inf', 'f32', Infinity],
    ['1e300', 'f64', 1e300],
    ['9007199254740991', 'i64', 9007199254740991],
  ] as const)('%j as %s is %d', (text, kind, value) => {
    expect(parseScalar('t', text, undefined, kind)).toBe(value);
  });
});

describe('dtypeMisfit: the one rule for values of a dtype (command line, files, generators)', () => {
  it('f64 holds anything; f32 anything that rounds to a finite float32, infinities and NaN', () => {
    expect(dtypeMisfit('f64', 1e308)).toBeUndefined();
    expect(dtypeMisfit('f32', Infinity)).toBeUndefined();
    expect(dtypeMisfit('f32', NaN)).toBeUndefined();
    expect(dtypeMisfit('f32', 3.5e38)).toBe("beyond f32's range");
  });
  it('integers: whole and in range', () => {
    expect(dtypeMisfit('i32', 1.5)).toBe('not a whole number');
    expect(dtypeMisfit('i32', 2 ** 31)).toMatch(/outside i32's range/);
    expect(dtypeMisfit('i32', -(2 ** 31))).toBeUndefined();
    expect(dtypeMisfit('i64', 2 ** 53)).toMatch(/float64 holds exactly/);
    expect(dtypeMisfit('bool', 1)).toBeUndefined();
  });
});
