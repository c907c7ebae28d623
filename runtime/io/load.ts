/** One entry point for matrix files: Matrix Market by its banner, else edge lists by extension, else Matrix Market. */

import { extname } from 'node:path';
import { parseEdgeList } from './edgelist.js';
import { readInputFile } from './files.js';
import type { MtxData } from './mtx-data.js';
import { parseMatrixMarket } from './mtx-read.js';

/** File extensions read as edge lists (compared case-insensitively). */
export const EDGE_LIST_EXTENSIONS: readonly string[] = ['.cites', '.txt'];

export function isEdgeListPath(path: string): boolean {
  return EDGE_LIST_EXTENSIONS.includes(extname(path).toLowerCase());
}

/**
 * Reads `path` as a Matrix Market file where it begins with the Matrix Market banner, whatever its name (a `.txt`
 * Matrix Market file was read as an edge list and refused for its third column); otherwise as an edge list
 * (`.cites`, `.txt`) or a Matrix Market file (any other name).
 */
export function loadMatrix(path: string): MtxData {
  const bytes = readInputFile(path);
  return isEdgeListPath(path) && !startsWithBanner(bytes) ? parseEdgeList(bytes, path) : parseMatrixMarket(bytes, path);
}

const BANNER = '%%matrixmarket';

function startsWithBanner(bytes: Uint8Array): boolean {
  if (bytes.length < BANNER.length) return false;
  return Buffer.from(bytes.subarray(0, BANNER.length)).toString('latin1').toLowerCase() === BANNER;
}
