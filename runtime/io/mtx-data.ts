/**
 * What the readers in runtime/io hand back: the entries of one Matrix Market
 * file (or edge list) exactly as stored, indices made 0-based, symmetric
 * storage already expanded to both triangles.
 */

export type MtxField = 'real' | 'integer' | 'pattern';
export type MtxSymmetry = 'general' | 'symmetric' | 'skew-symmetric' | 'hermitian';

/** Coordinate (sparse) data, in file order; a mirror entry follows the entry it mirrors. */
export interface MtxCoordinate {
  kind: 'coordinate';
  rows: number;
  cols: number;
  field: MtxField;
  symmetry: MtxSymmetry;
  rowIdx: Int32Array;
  colIdx: Int32Array;
  /** 1.0 for pattern files; explicit zeros are kept as entries. */
  values: Float64Array;
  /** 1-based source line of each entry (a mirror entry carries its source's line). */
  lines: Int32Array;
  /** The file the data came from, for error messages of later conversions. */
  file?: string;
  /** 1-based line of the file's size line, where a later conversion finds the sizes too large (absent for edge lists). */
  sizeLine?: number;
  /** Edge lists only: how many repeated edges were collapsed. */
  duplicatesDropped?: number;
}

/** Array (dense) data, row-major, symmetric storage expanded. */
export interface MtxArray {
  kind: 'array';
  rows: number;
  cols: number;
  field: 'real' | 'integer';
  symmetry: MtxSymmetry;
  data: Float64Array;
  file?: string;
  /** 1-based line of the file's size line (as MtxCoordinate's). */
  sizeLine?: number;
}

export type MtxData = MtxCoordinate | MtxArray;
