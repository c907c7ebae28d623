/** The InputError parseSystem throws for a system file's text (the test fails when it throws nothing or something else). */
import { expect } from 'vitest';
import { InputError } from '../../runtime/errors.js';
import { parseSystem } from '../../runtime/system/load.js';

export function fails(src: string, file = 'sys.json'): InputError {
  try {
    parseSystem(src, file);
  } catch (e) {
    expect(e).toBeInstanceOf(InputError);
    return e as InputError;
  }
  throw new Error('expected an InputError');
}
