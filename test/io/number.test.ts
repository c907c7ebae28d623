import { describe, expect, it } from 'vitest';
import { InputError } from '../../runtime/errors.js';
import { parseNumberToken } from '../../runtime/io/scan.js';

/** Deterministic PRNG (mulberry32) so failures reproduce. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Number()'s value, except that a decimal beyond float64 (Number() gives an infinity) is refused. */
function expectSameAsNumber(token: string): void {
  const want = Number(token);
  if (!Number.isFinite(want)) {
    expect(() => parseNumberToken(token)).toThrow(/DY3008: .* is beyond float64's range/);
    return;
  }
  const got = parseNumberToken(token);
  if (!Object.is(got, want)) throw new Error(`"${token}": parsed ${got}, Number() gives ${want}`);
}

const TRICKY = [
  '0',
  '-0',
  '+0',
  '0.0',
  '-0.0',
  '00',
  '0e0',
  '-0e-999',
  '0e999',
  '.5',
  '-.5',
  '+.5',
  '5.',
  '-5.',
  '1.e5',
  '1E5',
  '1e+5',
  '1e-5',
  '9007199254740991',
  '9007199254740992',
  '9007199254740993',
  '9007199254740994',
  '9007199254740995',
  '18014398509481985',
  '123456789012345678901234567890',
  '0.1',
  '0.2',
  '0.3',
  '1e22',
  '1e23',
  '1e-22',
  '1e-23',
  '4.9e-324',
  '5e-324',
  '2.4703282292062327e-324',
  '2.4703282292062328e-324',
  '1e-400',
  '-1e-400',
  '2.2250738585072011e-308',
  '2.2250738585072014e-308',
  '2.225073858507201e-308',
  '1.7976931348623157e308',
  '1.7976931348623158e308',
  '1.7976931348623159e308',
  '1e309',
  '-1e309',
  '1.00000000000000011102230246251565404236316680908203125',
  '1.00000000000000011102230246251565404236316680908203124',
  '1.00000000000000011102230246251565404236316680908203126',
  '0.000000000000000000000000000001',
  '3.141592653589793',
  '3.1415926535897932384626433832795',
  '2.718281828459045',
  '-564.2036607119013',
  '8.88818320417806',
  '277281165.18',
  '2832268.51852',
  '.875',
  '0.0625',
  '27852657',
  '123456789012345.6',
  '1234567890123456.7',
  '12345678901234567',
  '0.1234567890123456789',
  '7.038531e-26',
  '9.5e-7',
  '1e-7',
  '100000000000000000000',
  '1e21',
  '1e0000000000000000000001',
  '00000000000000000000000000000001.5',
  '1.50000000000000000000000000',
  '1.5e00000000000000000000000',
  '4503599627370496.5',
  '4503599627370497.5',
  '9007199254740993e-16',
  '89255e-22',
  '89255.0e-22',
];

describe('number tokens give exactly what Number() gives', () => {
  it('tricky and boundary cases', () => {
    for (const t of TRICKY) expectSameAsNumber(t);
  });

  it('random decimal strings of many shapes', () => {
    const r = rng(12345);
    const digits = (n: number): string => Array.from({ length: n }, () => String(Math.floor(r() * 10))).join('');
    for (let i = 0; i < 20000; i++) {
      const sign = ['', '-', '+'][Math.floor(r() * 3)]!;
      const intLen = Math.floor(r() * 20);
      const fracLen = Math.floor(r() * 20);
      let body = digits(intLen);
      if (fracLen > 0 || intLen === 0 || r() < 0.2) body += `.${digits(Math.max(fracLen, intLen === 0 ? 1 : 0))}`;
      if (r() < 0.5) {
        const e = Math.floor(r() * 700) - 350;
        body += `${r() < 0.5 ? 'e' : 'E'}${e < 0 ? '-' : r() < 0.5 ? '+' : ''}${Math.abs(e)}`;
      }
      expectSameAsNumber(sign + body);
    }
  });

  it('random doubles printed by String() and toPrecision() read back exactly', () => {
    const r = rng(99);
    const bits = new DataView(new ArrayBuffer(8));
    for (let i = 0; i < 20000; i++) {
      bits.setUint32(0, Math.floor(r() * 2 ** 32));
      bits.setUint32(4, Math.floor(r() * 2 ** 32));
      const x = bits.getFloat64(0);
      if (!Number.isFinite(x)) continue;
      expect(parseNumberToken(String(x))).toBe(x);
      expectSameAsNumber(x.toPrecision(1 + Math.floor(r() * 21)));
      expectSameAsNumber(x.toExponential(Math.floor(r() * 20)));
    }
  });

  it('random short decimals (the fast path) are exactly rounded', () => {
    const r = rng(7);
    for (let i = 0; i < 20000; i++) {
      const m = Math.floor(r() * 10 ** (1 + Math.floor(r() * 15)));
      const e = Math.floor(r() * 45) - 22;
      expectSameAsNumber(`${m}e${e}`);
      const s = String(m);
      const cut = Math.floor(r() * (s.length + 1));
      expectSameAsNumber(`${s.slice(0, cut)}.${s.slice(cut)}0`);
    }
  });

  it('inf, infinity and nan in any case', () => {
    expect(parseNumberToken('inf')).toBe(Infinity);
    expect(parseNumberToken('-INF')).toBe(-Infinity);
    expect(parseNumberToken('+Infinity')).toBe(Infinity);
    expect(parseNumberToken('NaN')).toBeNaN();
    expect(parseNumberToken('-nan')).toBeNaN();
  });

  it('rejects what is not a number', () => {
    for (const bad of [
      '',
      '-',
      '+',
      '.',
      '-.',
      'e5',
      '.e5',
      '1e',
      '1e+',
      '1.2.3',
      '1..2',
      '0x10',
      '1_000',
      '1,5',
      '--1',
      '1e5.5',
      'infinit',
      'nanx',
      '.inf',
      '1d5',
      'abc',
    ]) {
      let err: unknown;
      try {
        parseNumberToken(bad);
      } catch (e) {
        err = e;
      }
      expect(err, bad).toBeInstanceOf(InputError);
      expect((err as InputError).code).toBe('DY3008');
    }
  });
});
