/**
 * The native ABI has one definition: the C header every project ships
 * (codegen/native/dype_abi.h) and the prototypes the loader binds
 * (runtime/native/abi.ts) declare the same functions with the same
 * parameter types, and the same version and error codes.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ABI_ERRORS, ABI_FUNCTIONS, ABI_HOST, ABI_VERSION, PATTERN_FIGURES } from '../../runtime/native/abi.js';

const header = readFileSync(join(import.meta.dirname, '..', '..', 'codegen', 'native', 'dype_abi.h'), 'utf8');

/** `int alloc(int dev, size_t bytes, void** out)` -> name and parameter types, as C spells them. */
function signature(proto: string): { ret: string; name: string; params: string[] } {
  const m = /^\s*(.+?)\s*\b(\w+)\s*\((.*)\)\s*;?\s*$/.exec(proto)!;
  const params =
    m[3]!.trim() === 'void'
      ? []
      : m[3]!.split(',').map((p) =>
          p
            .replace(/_Out_\s*/, '')
            .trim()
            .replace(/\s*\b\w+$/, '')
            .replace(/\s+\*/g, '*')
            .replace(/\bvoid\*\s+const\*/, 'void**')
            .trim(),
        );
  return { ret: m[1]!.replace(/\s+\*/g, '*'), name: m[2]!, params };
}

describe('the native ABI', () => {
  it('header and loader declare the same functions with the same types', () => {
    const declared = [...header.matchAll(/^(?!#|\/\/| \*|\/\*)(.+?DYPE_ABI\((\w+)\)\((.*)\));$/gm)].map((m) =>
      signature(m[1]!.replace(/DYPE_ABI\((\w+)\)/, '$1')),
    );
    expect(declared.map((d) => d.name).sort()).toEqual(Object.keys(ABI_FUNCTIONS).sort());
    for (const d of declared) {
      const ts = signature(ABI_FUNCTIONS[d.name as keyof typeof ABI_FUNCTIONS]);
      expect(
        { ret: ts.ret, params: ts.params.map((p) => p.replace('const long long*', 'const long long*')) },
        d.name,
      ).toEqual({ ret: d.ret, params: d.params });
    }
  });

  it('version, host device and error codes agree', () => {
    expect(header).toContain(`#define DYPE_ABI_VERSION ${ABI_VERSION}`);
    expect(header).toContain(`#define DYPE_PATTERN_FIGURES ${PATTERN_FIGURES.length}`);
    expect(header).toContain(`#define DYPE_HOST (${ABI_HOST})`);
    for (const [name, code] of Object.entries(ABI_ERRORS))
      expect(header, name).toContain(`#define DYPE_ERR_${name} (${code})`);
  });
});
