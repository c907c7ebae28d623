import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { InputError } from '../../runtime/errors.js';
import { parseMatrixMarket, readMatrixMarketFile } from '../../runtime/io/mtx-read.js';

function failure(run: () => unknown): InputError {
  try {
    run();
  } catch (e) {
    if (e instanceof InputError) return e;
    throw e;
  }
  throw new Error('expected an InputError');
}

const fails = (text: string): InputError => failure(() => parseMatrixMarket(text, 'bad.mtx'));

const REAL = '%%MatrixMarket matrix coordinate real general\n';

function expectError(e: InputError, code: string, line: number | undefined, message: RegExp | string): void {
  expect({ code: e.code, file: e.file, line: e.line }).toEqual({ code, file: e.file, line });
  expect(e.detail).toMatch(message);
  expect(e.message).toBe(`${e.file}${line !== undefined ? `:${line}` : ''}: error ${code}: ${e.detail}`);
}

describe('bad header (DY3001)', () => {
  it('missing header', () => {
    const e = fails('3 3 1\n1 1 1\n');
    expectError(
      e,
      'DY3001',
      1,
      'expected the header "%%MatrixMarket matrix <coordinate|array> <real|integer|pattern> <general|symmetric|skew-symmetric>" on the first line, found "3 3 1"',
    );
    expect(e.file).toBe('bad.mtx');
  });
  it('empty file', () => expectError(fails(''), 'DY3001', 1, /found an empty file/));
  it('unknown format word', () => {
    expectError(
      fails('%%MatrixMarket matrix coordinat real general\n1 1 0\n'),
      'DY3001',
      1,
      'unknown format "coordinat" in the header; expected coordinate or array',
    );
  });
  it('unknown field word', () => {
    expectError(
      fails('%%MatrixMarket matrix coordinate float general\n'),
      'DY3001',
      1,
      /unknown field "float".*expected real, double, integer or pattern/,
    );
  });
  it('header too short', () => {
    expectError(
      fails('%%MatrixMarket matrix coordinate real\n'),
      'DY3001',
      1,
      /ends after .*expected the symmetry general, symmetric or skew-symmetric/,
    );
  });
  it('extra words after the symmetry', () => {
    expectError(
      fails('%%MatrixMarket matrix coordinate real general extra\n'),
      'DY3001',
      1,
      /unexpected "extra" after the symmetry/,
    );
  });
});

describe('unsupported type (DY3011)', () => {
  it('complex field', () =>
    expectError(
      fails('%%MatrixMarket matrix coordinate complex general\n1 1 1\n1 1 1 0\n'),
      'DY3011',
      1,
      /complex matrices are not supported/,
    ));
  it('hermitian symmetry', () =>
    expectError(
      fails('%%MatrixMarket matrix coordinate real hermitian\n'),
      'DY3011',
      1,
      /hermitian matrices are not supported/,
    ));
  it('pattern array', () =>
    expectError(
      fails('%%MatrixMarket matrix array pattern general\n'),
      'DY3011',
      1,
      /pattern field is only allowed with the coordinate format/,
    ));
  it('vector object', () =>
    expectError(fails('%%MatrixMarket vector coordinate real general\n'), 'DY3011', 1, /only "matrix" objects/));
});

describe('bad size line (DY3002)', () => {
  it('two numbers in a coordinate file', () => {
    expectError(
      fails(`${REAL}% c\n3 3\n1 1 1\n`),
      'DY3002',
      3,
      'expected the size line "rows cols entries" (three non-negative integers), found "3 3"',
    );
  });
  it('not an integer', () =>
    expectError(fails(`${REAL}3 3 x\n`), 'DY3002', 2, /three non-negative integers\), found "3 3 x"/));
  it('three numbers in an array file', () => {
    expectError(
      fails('%%MatrixMarket matrix array real general\n2 2 4\n'),
      'DY3002',
      2,
      /"rows cols" \(two non-negative integers\) of an array matrix, found "2 2 4"/,
    );
  });
  it('missing: the file ends first (reported at the last line)', () => {
    expectError(fails(`${REAL}% only comments\n\n`), 'DY3002', 3, /the file ends before the size line/);
  });
  it('symmetric but not square', () => {
    expectError(
      fails('%%MatrixMarket matrix coordinate real symmetric\n3 4 1\n'),
      'DY3002',
      2,
      'a symmetric matrix must be square, but the size line says 3 x 4',
    );
  });
  it('more entries than positions', () => {
    expectError(
      fails(`${REAL}2 2 5\n`),
      'DY3002',
      2,
      'the size line declares 5 entries, more than the 4 positions of a 2 x 2 matrix',
    );
  });
});

describe('index out of range (DY3003)', () => {
  it('row too large', () =>
    expectError(
      fails(`${REAL}3 2 2\n1 1 1\n4 1 1\n`),
      'DY3003',
      4,
      'row index 4 is out of range 1..3 (the size line gives 3 rows)',
    ));
  it('column zero', () =>
    expectError(
      fails(`${REAL}3 2 1\n1 0 1\n`),
      'DY3003',
      3,
      'column index 0 is out of range 1..2 (the size line gives 2 columns)',
    ));
  it('negative row', () =>
    expectError(fails(`${REAL}3 2 1\n-1 1 1\n`), 'DY3003', 3, /row index -1 is out of range 1..3/));
  it('huge index', () =>
    expectError(
      fails(`${REAL}3 2 1\n1 99999999999999999999 1\n`),
      'DY3003',
      3,
      /column index 99999999999999999999 is out of range 1..2/,
    ));
  it('diagonal entry of a skew-symmetric matrix', () => {
    expectError(
      fails('%%MatrixMarket matrix coordinate real skew-symmetric\n3 3 2\n2 1 1\n2 2 1\n'),
      'DY3003',
      4,
      /skew-symmetric matrices have a zero diagonal, so the entry \(2,2\) may not be stored/,
    );
  });
});

describe('index not an integer (DY3004)', () => {
  it('fractional row', () =>
    expectError(fails(`${REAL}3 3 1\n1.5 1 2\n`), 'DY3004', 3, 'expected a positive integer row index, found "1.5"'));
  it('word as column', () =>
    expectError(fails(`${REAL}3 3 1\n1 x 2\n`), 'DY3004', 3, 'expected a positive integer column index, found "x"'));
  it('exponent form', () => expectError(fails(`${REAL}3 3 1\n1e0 1 2\n`), 'DY3004', 3, /found "1e0"/));
});

describe('wrong number of entries (DY3005)', () => {
  it('too many: reported at the first extra entry', () => {
    expectError(
      fails(`${REAL}3 3 2\n1 1 1\n2 2 2\n% c\n3 3 3\n`),
      'DY3005',
      6,
      'the size line (line 2) declares 2 entries, but this line holds entry 3',
    );
  });
  it('too few: reported at the last line', () => {
    expectError(
      fails(`${REAL}3 3 3\n1 1 1\n2 2 2\n% trailing comment\n`),
      'DY3005',
      5,
      'the size line (line 2) declares 3 entries, but the file ends after 2',
    );
  });
  it('too few, no final newline', () =>
    expectError(fails(`${REAL}3 3 3\n1 1 1`), 'DY3005', 3, /declares 3 entries, but the file ends after 1/));
  it('array with too few values', () => {
    expectError(
      fails('%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n'),
      'DY3005',
      5,
      'the size line (line 2) declares a 2 x 2 general array of 4 stored values, but the file ends after 3',
    );
  });
  it('symmetric array with too many values', () => {
    expectError(
      fails('%%MatrixMarket matrix array real symmetric\n2 2\n1\n2\n3\n4\n'),
      'DY3005',
      6,
      /declares a 2 x 2 symmetric array of 3 stored values, but this line holds value 4/,
    );
  });
  it('a declared array count past 2^53 is printed exactly', () => {
    expectError(
      fails('%%MatrixMarket matrix array real general\n2147483647 2147483647\n1\n'),
      'DY3005',
      3,
      /declares a 2147483647 x 2147483647 general array of 4611686014132420609 stored values, but the file ends after 1/,
    );
  });
  it('a huge declared count does not allocate for it', () => {
    expectError(
      fails(`${REAL}2000000000 2000000000 1000000000000\n1 1 1\n`),
      'DY3005',
      3,
      /declares 1000000000000 entries, but the file ends after 1/,
    );
  });
});

describe('NaN value (DY3006)', () => {
  it('nan', () =>
    expectError(
      fails(`${REAL}2 2 2\n1 1 1\n2 2 nan\n`),
      'DY3006',
      4,
      'the value is NaN ("nan"); expected a number (inf and -inf are allowed)',
    ));
  it('NaN in an array', () =>
    expectError(fails('%%MatrixMarket matrix array real general\n1 2\n1\n-NaN\n'), 'DY3006', 4, /"-NaN"/));
});

describe('messages name what is wrong with the file, in printable text', () => {
  // Regression: a NUL byte was echoed raw into the message.
  it('unprintable bytes are shown as \\xNN', () =>
    expectError(fails(`${REAL}2 2 1\n1 1 1\0\n`), 'DY3008', 3, /found "1\\x00"$/));
  // Regression: lines ended by CR alone read as one header line ('unexpected "3" after the symmetry').
  it('lines ended by a carriage return alone', () =>
    expectError(
      fails('%%MatrixMarket matrix coordinate real general\r2 2 1\r1 1 1\r'),
      'DY3001',
      1,
      'the lines end in a carriage return alone; expected newlines (LF, or CRLF)',
    ));
  it('CRLF line ends read', () =>
    expect(
      parseMatrixMarket('%%MatrixMarket matrix coordinate real general\r\n2 2 1\r\n1 1 1\r\n', 'crlf.mtx').kind,
    ).toBe('coordinate'));
  it('a file with no banner says where edge lists are read from', () =>
    expectError(
      fails('1 2\n2 3\n'),
      'DY3001',
      1,
      /found "1 2" \(an edge list is read from a file named \.cites or \.txt\)$/,
    ));
});

describe('malformed value or wrong token count (DY3008)', () => {
  // Regression: 1e400 was read as an infinity, silently.
  it('a decimal beyond float64, in a coordinate file and an array', () => {
    expectError(
      fails(`${REAL}2 2 2\n1 1 1\n2 2 -1e400\n`),
      'DY3008',
      4,
      'the value "-1e400" is beyond float64\'s range (write inf for an infinity)',
    );
    expectError(
      fails('%%MatrixMarket matrix array real general\n2 1\n1\n1' + '0'.repeat(400) + '\n'),
      'DY3008',
      4,
      /beyond float64's range/,
    );
  });
  it('inf and 1e308 are values', () => {
    expect(parseMatrixMarket(`${REAL}2 2 2\n1 1 inf\n2 2 1e308\n`, 'ok.mtx').kind).toBe('coordinate');
  });
  it('not a number', () =>
    expectError(
      fails(`${REAL}2 2 1\n1 1 1.2.3\n`),
      'DY3008',
      3,
      'expected a real number (such as 1.5, -2e-3 or inf) for the value, found "1.2.3"',
    ));
  it('not an integer in an integer file', () => {
    expectError(
      fails('%%MatrixMarket matrix coordinate integer general\n2 2 1\n1 1 1.5\n'),
      'DY3008',
      3,
      'expected an integer value (the header says integer), found "1.5"',
    );
  });
  it('missing value', () =>
    expectError(
      fails(`${REAL}2 2 1\n1 1\n`),
      'DY3008',
      3,
      'expected 3 tokens (row column value) on an entry line, found 2',
    ));
  it('missing column', () =>
    expectError(
      fails(`${REAL}2 2 1\n1\n`),
      'DY3008',
      3,
      'expected 3 tokens (row column value) on an entry line, found 1',
    ));
  it('too many tokens', () =>
    expectError(
      fails(`${REAL}2 2 1\n1 1 1 0 7\n`),
      'DY3008',
      3,
      'expected 3 tokens (row column value) on an entry line, found 5',
    ));
  it('a value in a pattern file', () => {
    expectError(
      fails('%%MatrixMarket matrix coordinate pattern general\n2 2 1\n1 1 1\n'),
      'DY3008',
      3,
      'expected 2 tokens (row column) on an entry line, found 3',
    );
  });
  it('two values on an array line', () => {
    expectError(
      fails('%%MatrixMarket matrix array real general\n2 1\n1 2\n'),
      'DY3008',
      3,
      'expected 1 token (one value per line in an array matrix) on an entry line, found 2',
    );
  });
});

describe('duplicate entry (DY3009)', () => {
  it('general: reported at the later line, naming both', () => {
    expectError(
      fails(`${REAL}3 3 3\n2 3 1\n1 1 1\n2 3 5\n`),
      'DY3009',
      5,
      'duplicate entry (2,3): given by line 3 and again by line 5; each position may appear once',
    );
  });
  it('symmetric: an entry and the mirror of another', () => {
    const e = fails('%%MatrixMarket matrix coordinate real symmetric\n3 3 2\n2 1 1\n1 2 1\n');
    expectError(e, 'DY3009', 4, /duplicate entry \(\d,\d\): given by line 3.* and again by line 4/);
    expect(e.detail).toMatch(/mirrored by symmetric storage/);
  });
  it('unsorted input is checked too', () => {
    expectError(
      fails(`${REAL}3 3 4\n3 3 1\n1 2 1\n2 2 1\n1 2 1\n`),
      'DY3009',
      6,
      /duplicate entry \(1,2\): given by line 4 and again by line 6/,
    );
  });
});

describe('unreadable file (DY3010)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'dype-io-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  it('missing file', () => {
    const path = join(dir, 'missing.mtx');
    const e = failure(() => readMatrixMarketFile(path));
    expectError(e, 'DY3010', undefined, 'cannot read the file: no such file or directory');
    expect(e.file).toBe(path);
  });
  it('a directory', () =>
    expectError(
      failure(() => readMatrixMarketFile(dir)),
      'DY3010',
      undefined,
      /it is a directory/,
    ));
});
