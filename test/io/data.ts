/** Where the shared test matrices are, and what MANIFEST.md says about each. */

import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root: the nearest directory above this file with a package.json (works from dist/ too). */
function findRepoRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json')) && dirname(dir) !== dir) dir = dirname(dir);
  return dir;
}

const repoRoot = findRepoRoot();

/** ../shared/data/matrices relative to the repository root. */
export const MATRIX_DIR = resolve(repoRoot, '../shared/data/matrices');

export interface ManifestRow {
  file: string;
  rows: number;
  cols: number;
  /** Coordinate lines stored in the file. */
  entriesInFile: number;
  /** Distinct positions after symmetric expansion, explicit zeros kept. */
  nnz: number;
  field: 'real' | 'integer' | 'pattern';
  symmetry: 'general' | 'symmetric';
  maxRowLen: number;
  emptyRows: number;
  /** max |i - j| */
  halfBandwidth: number;
  diagonal: number;
  explicitZeros: number;
}

// Hard-coded from MANIFEST.md (main table and "Extra structure metrics").
// prettier-ignore
const TABLE: [string, number, number, number, number, ManifestRow['field'], ManifestRow['symmetry'], number, number, number, number, number][] = [
  // file                     rows    cols   inFile    nnz     field      symmetry    maxRow empty band   diag  zeros
  ['karate.mtx',                34,     34,     78,     156, 'pattern', 'symmetric',   17,   0,    31,     0,     0],
  ['bcsstk01.mtx',              48,     48,    224,     400, 'real',    'symmetric',   12,   0,    35,    48,     0],
  ['ash219.mtx',               219,     85,    438,     438, 'pattern', 'general',      2,   0,   135,     4,     0],
  ['lp_afiro.mtx',              27,     51,    102,     102, 'real',    'general',     10,   0,    35,     2,     0],
  ['west0479.mtx',             479,    479,   1910,    1910, 'real',    'general',     12,   0,   388,     8,    22],
  ['Erdos971.mtx',             472,    472,   1314,    2628, 'pattern', 'symmetric',   41,  39,   455,     0,     0],
  ['jazz.mtx',                 198,    198,   2742,    5484, 'integer', 'symmetric',  100,   0,   192,     0,     0],
  ['olm1000.mtx',             1000,   1000,   3996,    3996, 'real',    'general',      6,   0,     3,  1000,     0],
  ['1138_bus.mtx',            1138,   1138,   2596,    4054, 'real',    'symmetric',   18,   0,  1030,  1138,     0],
  ['cage8.mtx',               1015,   1015,  11003,   11003, 'real',    'general',     18,   0,   420,  1015,     0],
  ['adder_dcop_05.mtx',       1813,   1813,  11097,   11097, 'real',    'general',   1310,   0,  1800,  1801,     0],
  ['ca-GrQc.mtx',             5242,   5242,  14496,   28980, 'pattern', 'symmetric',   81,   0,  5198,    12,     0],
  ['cora.cites',              2708,   2708,   5429,    5429, 'pattern', 'general',    166, 1143,  2702,     0,     0],
  ['lp_ship04l.mtx',           402,   2166,   6380,    6380, 'real',    'general',     84,  42,  2129,     6,     0],
  ['bcspwr10.mtx',            5300,   5300,  13571,   21842, 'pattern', 'symmetric',   14,   0,  5189,  5300,     0],
  ['whitaker3.mtx',           9800,   9800,  28989,   57978, 'pattern', 'symmetric',    8,   0,  9771,     0,     0],
  ['fidapex6.mtx',            1651,   1651,  49533,   49533, 'real',    'general',     62,   0,    86,  1651,   471],
  ['bcsstk13.mtx',            2003,   2003,  42943,   83883, 'real',    'symmetric',   95,   0,  1250,  2003,     0],
  ['dnn_n1024-l1.mtx',        1024,   1024,  32768,   32768, 'real',    'general',     32,   0,  1023,  1024,     0],
  ['facebook_combined.txt',   4039,   4039,  88234,   88234, 'pattern', 'general',   1043, 376,  3437,     0,     0],
  ['bayer10.mtx',            13436,  13436,  94926,   94926, 'real',    'general',     27,   0, 13435,     3, 23332],
  ['Groebner_id2003_aug.mtx', 4967,   2456, 173670,  173670, 'integer', 'general',    829,   0,  2511,    98,     0],
  ['luxembourg_osm.mtx',    114599, 114599, 119666,  239332, 'pattern', 'symmetric',    6,   0, 111306,    0,     0],
  ['bcsstk33.mtx',            8738,   8738, 300321,  591904, 'pattern', 'symmetric',  141,   0,   932,  8738,     0],
];

export const MANIFEST: ManifestRow[] = TABLE.map(
  ([
    file,
    rows,
    cols,
    entriesInFile,
    nnz,
    field,
    symmetry,
    maxRowLen,
    emptyRows,
    halfBandwidth,
    diagonal,
    explicitZeros,
  ]) => ({
    file,
    rows,
    cols,
    entriesInFile,
    nnz,
    field,
    symmetry,
    maxRowLen,
    emptyRows,
    halfBandwidth,
    diagonal,
    explicitZeros,
  }),
);
