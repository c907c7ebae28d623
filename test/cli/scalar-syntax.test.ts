/**
 * `--param NAME=VALUE` takes decimal numbers (with an exponent), true/false
 * and inf, as Matrix Market values are read: JavaScript's other number
 * syntaxes (hexadecimal, binary, octal) are a DY3015, not a silent reading.
 */
import { describe, expect, it } from 'vitest';
import { parseScalar } from '../../cli/inputs.js';
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
