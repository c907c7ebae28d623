/**
 * $CC as make reads it: a command and words after it. `CC="cc -Wall"` was run as one executable of that name
 * ("cannot be run (ENOENT)").
 */
import { describe, expect, it } from 'vitest';
import { ccCommand, cCompiler, compilerVersion } from '../../codegen/cpu/build.js';
import { haveCompiler } from '../helpers/cc.js';

describe('ccCommand', () => {
  it('splits $CC at blanks into the command and its first words', () => {
    expect(ccCommand('cc')).toEqual({ file: 'cc', args: [] });
    expect(ccCommand('ccache  gcc -Wall')).toEqual({ file: 'ccache', args: ['gcc', '-Wall'] });
    expect(ccCommand(cCompiler({ CC: ' \t' }))).toEqual({ file: 'cc', args: [] });
  });

  it.skipIf(!haveCompiler())('a compiler with a flag in $CC runs (its --version)', () => {
    expect(compilerVersion(`${cCompiler({})} -Wall`)).toMatch(/\S/);
  });
});
