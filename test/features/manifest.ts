/**
 * The shared real matrices and MANIFEST.md's figures for them. MANIFEST counts
 * the full pattern: symmetric storage expanded, explicit zeros kept, edge
 * lists "directed as listed" (row = first column), exactly what
 * loadMatrix + toCsr produce.
 */

import { fileURLToPath } from 'node:url';

/** ../shared/data/matrices, resolved from this file (test/features/ -> repository root -> ..). */
export const MATRIX_DIR = fileURLToPath(new URL('../../../shared/data/matrices/', import.meta.url));

export interface ManifestFigures {
  file: string;
  rows: number;
  cols: number;
  nnz: number;
  maxRowLen: number;
  /** As printed: 2 decimals. */
  meanRowLen: string;
  minRowLen: number;
  /** Population std / mean, as printed: 2 decimals. */
  rowLenCv: string;
  emptyRows: number;
  /** Exact max |i - j|. */
  halfBandwidth: number;
  /** As printed: 3 significant digits. */
  density: string;
}

// From MANIFEST.md: main table (rows x cols, nnz full pattern, max/mean row len)
// and "Extra structure metrics" (min, CV, empty rows, half-bandwidth, density).
// prettier-ignore
const TABLE: [string, number, number, number, number, string, number, string, number, number, string][] = [
  // file                        rows    cols     nnz   max    mean   min    cv   empty    band   density
  ['karate.mtx',                   34,     34,    156,   17,  '4.59',  1, '0.83',    0,     31, '1.35e-01'],
  ['bcsstk01.mtx',                 48,     48,    400,   12,  '8.33',  5, '0.19',    0,     35, '1.74e-01'],
  ['ash219.mtx',                  219,     85,    438,    2,  '2.00',  2, '0.00',    0,    135, '2.35e-02'],
  ['lp_afiro.mtx',                 27,     51,    102,   10,  '3.78',  2, '0.48',    0,     35, '7.41e-02'],
  ['west0479.mtx',                479,    479,   1910,   12,  '3.99',  1, '0.69',    0,    388, '8.33e-03'],
  ['Erdos971.mtx',                472,    472,   2628,   41,  '5.57',  0, '1.20',   39,    455, '1.18e-02'],
  ['jazz.mtx',                    198,    198,   5484,  100, '27.70',  1, '0.63',    0,    192, '1.40e-01'],
  ['olm1000.mtx',                1000,   1000,   3996,    6,  '4.00',  2, '0.50',    0,      3, '4.00e-03'],
  ['1138_bus.mtx',               1138,   1138,   4054,   18,  '3.56',  2, '0.51',    0,   1030, '3.13e-03'],
  ['cage8.mtx',                  1015,   1015,  11003,   18, '10.84',  5, '0.29',    0,    420, '1.07e-02'],
  ['adder_dcop_05.mtx',          1813,   1813,  11097, 1310,  '6.12',  1, '5.03',    0,   1800, '3.38e-03'],
  ['ca-GrQc.mtx',                5242,   5242,  28980,   81,  '5.53',  1, '1.43',    0,   5198, '1.05e-03'],
  ['cora.cites',                 2708,   2708,   5429,  166,  '2.00',  0, '2.60', 1143,   2702, '7.40e-04'],
  ['lp_ship04l.mtx',              402,   2166,   6380,   84, '15.87',  0, '1.55',   42,   2129, '7.33e-03'],
  ['bcspwr10.mtx',               5300,   5300,  21842,   14,  '4.12',  2, '0.35',    0,   5189, '7.78e-04'],
  ['whitaker3.mtx',              9800,   9800,  57978,    8,  '5.92',  3, '0.09',    0,   9771, '6.04e-04'],
  ['fidapex6.mtx',               1651,   1651,  49533,   62, '30.00',  3, '0.49',    0,     86, '1.82e-02'],
  ['bcsstk13.mtx',               2003,   2003,  83883,   95, '41.88',  5, '0.54',    0,   1250, '2.09e-02'],
  ['dnn_n1024-l1.mtx',           1024,   1024,  32768,   32, '32.00', 32, '0.00',    0,   1023, '3.12e-02'],
  ['facebook_combined.txt',      4039,   4039,  88234, 1043, '21.85',  0, '1.78',  376,   3437, '5.41e-03'],
  ['bayer10.mtx',               13436,  13436,  94926,   27,  '7.07',  1, '1.05',    0,  13435, '5.26e-04'],
  ['Groebner_id2003_aug.mtx',    4967,   2456, 173670,  829, '34.96',  1, '2.78',    0,   2511, '1.42e-02'],
  ['luxembourg_osm.mtx',       114599, 114599, 239332,    6,  '2.09',  1, '0.20',    0, 111306, '1.80e-05'],
  ['bcsstk33.mtx',               8738,   8738, 591904,  141, '67.74', 20, '0.24',    0,    932, '7.75e-03'],
];

export const MANIFEST: readonly ManifestFigures[] = TABLE.map(
  ([file, rows, cols, nnz, maxRowLen, meanRowLen, minRowLen, rowLenCv, emptyRows, halfBandwidth, density]) => ({
    file,
    rows,
    cols,
    nnz,
    maxRowLen,
    meanRowLen,
    minRowLen,
    rowLenCv,
    emptyRows,
    halfBandwidth,
    density,
  }),
);

/**
 * Whether `x` rounds to the printed decimal `printed` ("4.59", "1.35e-01"):
 * within half a unit of its last digit (so either tie-breaking rule passes).
 */
export function roundsTo(x: number, printed: string): boolean {
  const [mantissa, exp] = printed.toLowerCase().split('e') as [string, string | undefined];
  const decimals = mantissa.includes('.') ? mantissa.length - mantissa.indexOf('.') - 1 : 0;
  const scale = 10 ** Number(exp ?? 0);
  const halfUnit = 0.5 * 10 ** -decimals * scale;
  return Math.abs(x - Number(printed)) <= halfUnit * (1 + 1e-9);
}
