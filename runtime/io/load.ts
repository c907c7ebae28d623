/** One entry point for matrix files: edge lists by extension, Matrix Market otherwise. */

import { extname } from 'node:path';
import { readEdgeListFile } from './edgelist.js';
import type { MtxData } from './mtx-data.js';
import { readMatrixMarketFile } from './mtx-read.js';

/** File extensions read as edge lists (compared case-insensitively). */
export const EDGE_LIST_EXTENSIONS: readonly string[] = ['.cites', '.txt'];

export function isEdgeListPath(path: string): boolean {
  return EDGE_LIST_EXTENSIONS.includes(extname(path).toLowerCase());
}

/** Reads `path` as an edge list (`.cites`, `.txt`) or a Matrix Market file (anything else). */
export function loadMatrix(path: string): MtxData {
  return isEdgeListPath(path) ? readEdgeListFile(path) : readMatrixMarketFile(path);
}
