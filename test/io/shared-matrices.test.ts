import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { toCsr } from '../../runtime/io/convert.js';
import { loadMatrix } from '../../runtime/io/load.js';
import { MANIFEST, MATRIX_DIR } from './data.js';

describe('shared test matrices match MANIFEST.md', () => {
  it('the directory holds exactly the 24 listed files', () => {
    const files = readdirSync(MATRIX_DIR).filter((f) => f !== 'MANIFEST.md' && f !== 'checksums.sha256');
    expect(files.sort()).toEqual(MANIFEST.map((r) => r.file).sort());
  });

  for (const row of MANIFEST) {
    it(`${row.file}: ${row.rows} x ${row.cols}, nnz ${row.nnz}`, () => {
      const m = loadMatrix(join(MATRIX_DIR, row.file));
      if (m.kind !== 'coordinate') throw new Error('expected coordinate data');
      expect([m.rows, m.cols]).toEqual([row.rows, row.cols]);
      expect(m.field).toBe(row.field);
      expect(m.symmetry).toBe(row.symmetry);
      expect(m.values.length).toBe(row.nnz);
      expect(new Set(m.lines).size).toBe(row.entriesInFile);

      let diagonal = 0;
      let zeros = 0;
      let band = 0;
      for (let k = 0; k < m.values.length; k++) {
        if (m.rowIdx[k] === m.colIdx[k]) diagonal++;
        if (m.values[k] === 0) zeros++;
        band = Math.max(band, Math.abs(m.rowIdx[k]! - m.colIdx[k]!));
      }
      expect(diagonal).toBe(row.diagonal);
      expect(zeros).toBe(row.explicitZeros);
      expect(band).toBe(row.halfBandwidth);
      if (m.field === 'pattern') expect(m.values.every((v) => v === 1)).toBe(true);

      const csr = toCsr(m);
      expect(csr.rowPtr[csr.rows]).toBe(row.nnz);
      let maxRow = 0;
      let empty = 0;
      for (let r = 0; r < csr.rows; r++) {
        const len = csr.rowPtr[r + 1]! - csr.rowPtr[r]!;
        maxRow = Math.max(maxRow, len);
        if (len === 0) empty++;
      }
      expect(maxRow).toBe(row.maxRowLen);
      expect(empty).toBe(row.emptyRows);
    });
  }

  it('edge lists report no dropped duplicates', () => {
    for (const f of ['cora.cites', 'facebook_combined.txt']) {
      const m = loadMatrix(join(MATRIX_DIR, f));
      expect(m.kind === 'coordinate' && m.duplicatesDropped).toBe(0);
    }
  });

  it('reads values exactly as written (spot checks)', () => {
    const bayer = loadMatrix(join(MATRIX_DIR, 'bayer10.mtx'));
    if (bayer.kind !== 'coordinate') throw new Error('expected coordinate data');
    // first entry line: "101 1 -564.2036607119013"
    expect([bayer.rowIdx[0], bayer.colIdx[0], bayer.values[0]]).toEqual([100, 0, -564.2036607119013]);
    const groebner = loadMatrix(join(MATRIX_DIR, 'Groebner_id2003_aug.mtx'));
    if (groebner.kind !== 'coordinate') throw new Error('expected coordinate data');
    expect(groebner.values.reduce((a, b) => Math.max(a, b), -Infinity)).toBe(27852657);
    const dnn = loadMatrix(join(MATRIX_DIR, 'dnn_n1024-l1.mtx'));
    if (dnn.kind !== 'coordinate') throw new Error('expected coordinate data');
    expect(dnn.values.every((v) => v === 0.0625)).toBe(true);
  });

  it('every value equals Number() of its token (naive line-by-line reader as reference)', () => {
    for (const row of MANIFEST) {
      if (!row.file.endsWith('.mtx') || row.field === 'pattern') continue;
      const m = loadMatrix(join(MATRIX_DIR, row.file));
      if (m.kind !== 'coordinate') throw new Error('expected coordinate data');
      const lines = readFileSync(join(MATRIX_DIR, row.file), 'latin1').split('\n');
      const general = m.symmetry === 'general';
      for (let k = 0; k < m.values.length; k++) {
        if (!general && k > 0 && m.lines[k - 1] === m.lines[k]) continue; // mirror entry
        const tokens = lines[m.lines[k]! - 1]!.trim().split(/\s+/);
        const same =
          Number(tokens[0]) - 1 === m.rowIdx[k] &&
          Number(tokens[1]) - 1 === m.colIdx[k] &&
          Object.is(Number(tokens[2]), m.values[k]);
        if (!same)
          throw new Error(
            `${row.file}:${m.lines[k]}: read (${m.rowIdx[k]},${m.colIdx[k]}) ${m.values[k]} from "${tokens.join(' ')}"`,
          );
      }
    }
  });
});
