/**
 * interp/bind.ts: checkInputs (what `dype run` on wasm and native calls)
 * refuses exactly what bindInputs (the interpreter's binding) refuses, with
 * the same error, and binds the same dims, while building no values.
 */
import { describe, expect, it } from 'vitest';
import { bindInputs, checkInputs, type KernelInputs } from '../../interp/bind.js';
import { InputError } from '../../runtime/errors.js';
import type { Tensor } from '../../runtime/tensor.js';
import { compileModule, csr, dense, pickKernel, vec, A3 } from '../helpers/interp-run.js';

const kernel = pickKernel(
  compileModule(
    [
      'kernel k(A: csr<f32>[m, n], x: dense<f32>[n], W: dense<f32>[n, 2], L: dense<i32>[m], B: dense<f32>[n, n], s: f32)',
      '    -> (y: dense<f32>[m]) {',
      '  y[i] = A[i, j] * x[j] * s;',
      '}',
    ].join('\n'),
  ),
);

const good = (): Record<string, Tensor> => ({
  A: csr(3, 3, A3),
  x: vec([1, 2, 3]),
  W: dense([3, 2], [1, 2, 3, 4, 5, 6]),
  L: vec([1, 0, -2]),
  B: csr(3, 3, A3),
});

const inputs = (over: Record<string, Tensor | undefined>, scalars: [string, number][] = [['s', 2]]): KernelInputs => {
  const t = { ...good(), ...over };
  return {
    tensors: new Map(Object.entries(t).filter((e): e is [string, Tensor] => e[1] !== undefined)),
    scalars: new Map(scalars),
  };
};

function outcome(f: () => unknown): string {
  try {
    const r = f();
    return `ok ${JSON.stringify([...(r instanceof Map ? r : (r as { dims: Map<string, number> }).dims)])}`;
  } catch (e) {
    if (e instanceof InputError) return `${e.code} ${e.message}`;
    throw e;
  }
}

const cases: [string, KernelInputs][] = [
  ['good', inputs({})],
  ['unknown input', { ...inputs({}), tensors: new Map([...inputs({}).tensors, ['Z', vec([1])]]) }],
  ['missing input', inputs({ x: undefined })],
  ['missing scalar', inputs({}, [])],
  ['dense given for sparse', inputs({ A: dense([3, 3], new Array(9).fill(1)) })],
  ['wrong rank', inputs({ x: dense([3, 2], [1, 2, 3, 4, 5, 6]) })],
  ['dim mismatch', inputs({ x: vec([1, 2]) })],
  ['literal dim mismatch', inputs({ W: dense([3, 3], new Array(9).fill(1)) })],
  ['fractional i32', inputs({ L: vec([1, 0.5, 2]) })],
  [
    'negative dim param',
    inputs({}, [
      ['s', 2],
      ['m', -1],
    ]),
  ],
  [
    'fractional dim param',
    inputs({}, [
      ['s', 2],
      ['n', 2.5],
    ]),
  ],
  [
    'unknown param',
    inputs({}, [
      ['s', 2],
      ['q', 1],
    ]),
  ],
  ['sparse densified too big', inputs({ B: csr(1 << 15, 1 << 15, []) })],
];

describe('checkInputs against bindInputs', () => {
  for (const [name, i] of cases)
    it(name, () => {
      const want = outcome(() => bindInputs(kernel, i));
      expect(outcome(() => checkInputs(kernel, i))).toBe(want);
      if (name === 'good') expect(want).toBe('ok [["m",3],["n",3]]');
      else expect(want).toMatch(/^DY30\d\d /);
    });
});
