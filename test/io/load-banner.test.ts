/**
 * loadMatrix reads a file that begins with the Matrix Market banner as Matrix Market whatever its name: a `.txt`
 * Matrix Market file was read as an edge list and refused for its third column.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadMatrix } from '../../runtime/io/load.js';
import { cleanup, freshDir } from '../helpers/cli.js';

const dir = freshDir('dype-load-banner-');
afterAll(() => cleanup(dir));

describe('loadMatrix', () => {
  it('a .txt file with the banner is Matrix Market, its values kept', () => {
    const path = join(dir, 'm.txt');
    writeFileSync(path, '%%MatrixMarket matrix coordinate real general\n3 3 2\n1 2 0.5\n3 1 -2\n');
    const m = loadMatrix(path);
    expect(m.kind).toBe('coordinate');
    expect(m.kind === 'coordinate' && [...m.values]).toEqual([0.5, -2]);
  });
  it('a .txt file without it is an edge list', () => {
    const path = join(dir, 'e.txt');
    writeFileSync(path, '# an edge list\n1 2\n2 3\n');
    const m = loadMatrix(path);
    expect(m.kind === 'coordinate' && m.values.length).toBe(2);
  });
});
