/**
 * The device models against published measurements (issue 13; model in
 * docs/COST-MODEL.md). The published tables are read at test time from
 * ../shared/research/device-anchors.md (section 2.2), the project's one copy
 * of them: this repository holds no anchor data of its own.
 *
 * - GPU: the A100 of systems/paper-1g1f.json predicts NTUA's A100
 *   double-precision SpMV figures (the "A100 best GF/s" column). Its per-call
 *   floor (gpuModel.sparseFloorUs) is not fitted here: it is the intercept of
 *   the published-summary fit in the same section ("A100 cost per SpMV",
 *   t = 18 us + 0.012 ns x nnz + 0.014 ns x row, cuSPARSE CSR over 53
 *   matrices), and must equal it. That fit's 53 matrices include the table's
 *   ten, so the check is not a held-out one for the floor; no figure of the
 *   model is tuned on the table here.
 *   Only matrices whose row count is found in a citable public page (below,
 *   with the address) are modelled; row-length statistics of these matrices
 *   were found in no citable source, so each is modelled with the one GPU
 *   schedule whose cost needs none of them (merge-path: rows and nnz only).
 * - FPGA: the sparse-row design model configured as HiSpMV-16 (the paper's
 *   PEs, channels, clock, windows and vector paths, not fitted) predicts
 *   HiSpMV's 20-matrix U280 table (Table 2). Its one free figure, the share
 *   of the cyclic imbalance the hybrid row distribution leaves
 *   (imbalanceExposure), is fitted by two-fold cross-validation: each matrix
 *   is predicted with the figure fitted on the other ten, so no matrix tunes
 *   its own prediction.
 *
 * Both print per-matrix predicted against published figures:
 * npx vitest run test/plan/anchors.test.ts
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { channelGBs, sparseRowsTime } from '../../runtime/catalogue/fpga-rows.js';
import { callOverheadUs, implTimes } from '../../runtime/catalogue/index.js';
import { FPGA_DESIGN_DEFAULTS, type FpgaDesignConfig } from '../../runtime/plan/fpga-designs.js';
import type { PlanOp, SparseFeatures } from '../../runtime/plan/types.js';
import { loadSystemFile } from '../../runtime/system/load.js';
import type { DeviceSpec } from '../../runtime/system/types.js';
import { typicalImpls } from '../helpers/impls.js';

// ------------------------------------------------------- the published tables ----

/** ../shared/research/device-anchors.md, resolved from this file (test/plan/ -> repository root -> ..). */
const ANCHORS_PATH = fileURLToPath(new URL('../../../shared/research/device-anchors.md', import.meta.url));

function readAnchors(): string {
  try {
    return readFileSync(ANCHORS_PATH, 'utf8');
  } catch (e) {
    throw new Error(
      `test/plan/anchors.test.ts reads the published tables from ${ANCHORS_PATH}, which could not be read (${(e as Error).message}); the anchor checks need the shared research folder next to the repository`,
    );
  }
}
const ANCHORS = readAnchors();

/** The text of the section whose heading starts with `heading` (up to the next heading of the same or a higher level). */
function section(md: string, heading: string): string {
  const lines = md.split('\n');
  const start = lines.findIndex((l) => /^#+ /.test(l) && l.replace(/^#+ /, '').startsWith(heading));
  if (start < 0) throw new Error(`${ANCHORS_PATH}: no section headed "${heading}"`);
  const level = /^#+/.exec(lines[start]!)![0].length;
  let end = lines.findIndex((l, i) => i > start && /^#+ /.test(l) && /^#+/.exec(l)![0].length <= level);
  if (end < 0) end = lines.length;
  return lines.slice(start, end).join('\n');
}

/** Splits one markdown table row into trimmed cells. */
const cells = (line: string): string[] =>
  line
    .trim()
    .replace(/^\|/, '')
    .replace(/\|$/, '')
    .split('|')
    .map((c) => c.trim());

/**
 * The markdown table in `text` whose header has a cell starting with each of
 * `columns` (case-insensitive), as records keyed by those names. Fails with
 * the table it was looking for when there is none.
 */
function table(text: string, what: string, columns: string[]): Record<string, string>[] {
  const lines = text.split('\n');
  for (let i = 0; i + 1 < lines.length; i++) {
    if (!lines[i]!.trim().startsWith('|') || !/^\s*\|[\s|:-]+\|\s*$/.test(lines[i + 1]!)) continue;
    const header = cells(lines[i]!).map((h) => h.toLowerCase());
    const at = columns.map((c) => header.findIndex((h) => h.startsWith(c.toLowerCase())));
    if (at.some((j) => j < 0)) continue;
    const rows: Record<string, string>[] = [];
    for (let k = i + 2; k < lines.length && lines[k]!.trim().startsWith('|'); k++) {
      const row = cells(lines[k]!);
      rows.push(Object.fromEntries(columns.map((c, j) => [c, row[at[j]!] ?? ''])));
    }
    if (rows.length > 0) return rows;
  }
  throw new Error(
    `${ANCHORS_PATH}: the ${what} table (a header with columns ${columns.map((c) => `"${c}..."`).join(', ')}) was not found`,
  );
}

/** The first number of a cell ("16,171,169", "83.4 @ 162 (cuSPARSE COO)", "124.4 (SELL) / 120.6 @ 199"). */
function num(cell: string, where: string): number {
  const m = /^\s*([0-9][0-9,]*(?:\.[0-9]+)?)/.exec(cell);
  if (!m) throw new Error(`${ANCHORS_PATH}: expected a number in ${where}, got "${cell}"`);
  return Number(m[1]!.replace(/,/g, ''));
}

const SPMV_SECTION = section(ANCHORS, '2.2 SpMV on FPGA vs GPU');

// ------------------------------------------------------------------ helpers ----

const preset = loadSystemFile(new URL('../../systems/paper-1g1f.json', import.meta.url).pathname);
const device = (kind: string): DeviceSpec => preset.devices.find((d) => d.kind === kind)!;

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};
const pct = (x: number): string => `${x >= 0 ? '+' : ''}${(100 * x).toFixed(1)}%`;
/** An absolute error, unsigned. */
const abs = (x: number): string => `${(100 * x).toFixed(1)}%`;

// ---------------------------------------------------------------- U280 table ----

interface HiRow {
  id: string;
  matrix: string;
  rows: number;
  nnz: number;
  imbalance: number;
  gflops: number;
}

/** HiSpMV-16 on the U280, Table 2 of the paper, as device-anchors.md section 2.2 copies it. */
const hispmv: HiRow[] = table(SPMV_SECTION, 'HiSpMV-16 Table 2', [
  'ID',
  'Matrix',
  'rows=cols',
  'NNZ',
  'imbalance',
  'GFLOPS',
]).map((r) => ({
  id: r['ID']!,
  matrix: r['Matrix']!,
  rows: num(r['rows=cols']!, `HiSpMV ${r['ID']} rows`),
  nnz: num(r['NNZ']!, `HiSpMV ${r['ID']} NNZ`),
  imbalance: num(r['imbalance']!, `HiSpMV ${r['ID']} imbalance`),
  gflops: num(r['GFLOPS']!, `HiSpMV ${r['ID']} GFLOPS`),
}));

// ---------------------------------------------------------------- A100 table ----

interface A100Row {
  matrix: string;
  nnz: number;
  gflops: number;
}

/** NTUA's A100 double-precision SpMV, best kernel's GF/s, and nnz as device-anchors.md section 2.2 gives them. */
const a100: A100Row[] = table(SPMV_SECTION, 'NTUA A100', ['Matrix', 'nnz', 'A100 best GF/s']).map((r) => ({
  matrix: r['Matrix']!,
  nnz: num(r['nnz']!, `NTUA ${r['Matrix']} nnz`),
  gflops: num(r['A100 best GF/s']!, `NTUA ${r['Matrix']} A100 GF/s`),
}));

/** The published-summary fit of the same section: "A100 cost per SpMV (...): t ≈ 18 µs + 0.012 ns·nnz + 0.014 ns·row". */
const A100_FIT = ((): { floorUs: number; nsPerNnz: number; nsPerRow: number } => {
  const m = /A100 cost per SpMV[^\n]*?t\s*≈\s*([0-9.]+)\s*µs\s*\+\s*([0-9.]+)\s*ns·nnz\s*\+\s*([0-9.]+)\s*ns·row/.exec(
    SPMV_SECTION,
  );
  if (!m)
    throw new Error(
      `${ANCHORS_PATH}: the "A100 cost per SpMV" fit (t ≈ a µs + b ns·nnz + c ns·row) was not found in section 2.2`,
    );
  return { floorUs: Number(m[1]), nsPerNnz: Number(m[2]), nsPerRow: Number(m[3]) };
})();

/**
 * Row counts of the A100 table's matrices, each from a public page (cited),
 * with the nnz the page gives, which must equal device-anchors.md's (so the
 * page describes the matrix the table measured). Public facts about public
 * matrices, not data from a fetched repository.
 *
 * Not modelled: scircuit, raefsky3, cop20k_A, in-2004, bone010 and audikw_1,
 * whose row counts were found in no citable page the project's search could
 * reach (their SuiteSparse pages were not among the stored pages); a
 * prediction needs the rows (row pointers, result and merge-path's search).
 * TSOPF_RS_b2383's rows come from the HiSpMV table of the same section.
 */
const CITED_ROWS: Record<string, { rows: number; nnz: number; symmetric: boolean; source: string }> = {
  'kron_g500-logn18': {
    rows: 262_144,
    nnz: 21_165_908,
    symmetric: true,
    source: 'https://sparse.tamu.edu/DIMACS10/kron_g500-logn18 (Num Rows 262,144; Nonzeros 21,165,908; Symmetric Yes)',
  },
  delaunay_n22: {
    rows: 4_194_304,
    nnz: 25_165_738,
    symmetric: true,
    source:
      'https://www.cise.ufl.edu/research/sparse/matrices/DIMACS10/delaunay_n22.html (number of rows 4,194,304; nonzeros 25,165,738; structure symmetric)',
  },
  gupta3: {
    rows: 16_783,
    nnz: 9_323_427,
    symmetric: true,
    source:
      'SuiteSparse Matrix Collection, Gupta group description, "Gupta3.psa: N = 16,783, NZ = 9,323,427", matrices of the form A x A^T (https://sparse.tamu.edu/Gupta; read in the copy stored at https://huggingface.co/datasets/nvidia/Nemotron-CC-Math-v1)',
  },
};

interface Modelled extends A100Row {
  rows: number;
  source: string;
  symmetric: boolean | undefined;
}

function rowsOf(r: A100Row): Modelled | string {
  const cited = CITED_ROWS[r.matrix];
  if (cited) {
    if (cited.nnz !== r.nnz)
      throw new Error(
        `${r.matrix}: the cited page gives ${cited.nnz} nonzeros, device-anchors.md ${r.nnz}: not the same matrix`,
      );
    return { ...r, rows: cited.rows, source: cited.source, symmetric: cited.symmetric };
  }
  const hi = hispmv.find((h) => h.matrix === r.matrix && h.nnz === r.nnz);
  if (hi)
    return {
      ...r,
      rows: hi.rows,
      source: `device-anchors.md section 2.2, HiSpMV-16 Table 2 (${hi.id}, same nnz)`,
      symmetric: undefined,
    };
  return 'row count found in no citable source';
}

/**
 * A double-precision CSR SpMV y = A x in annotate-cost's counts: values and
 * column indices, row pointers, x once, y once. Only rows, cols and nnz are
 * known; the row-length statistics are NaN (unknown), so any schedule that
 * needs them yields NaN and is not used.
 */
function spmvF64(rows: number, nnz: number): PlanOp {
  const f: SparseFeatures = {
    rows,
    cols: rows,
    nnz,
    rowLenMean: nnz / rows,
    rowLenMax: Number.NaN,
    rowLenCv: Number.NaN,
    emptyRowFraction: Number.NaN,
    top1PctNnzShare: Number.NaN,
  };
  return {
    id: 'op0',
    kind: 'spmv',
    result: 'y',
    dtype: 'f64',
    impls: typicalImpls('spmv'),
    reads: [
      { value: 'A', from: { kind: 'param' } },
      { value: 'x', from: { kind: 'param' } },
    ],
    items: rows,
    flops: 2 * nnz,
    bytes: nnz * (8 + 4) + (rows + 1) * 4 + rows * 8 + rows * 8,
    gathers: nnz,
    loops: nnz,
    columns: 1,
    resultBytes: rows * 8,
    sparse: f,
    trips: 1,
  };
}

/** Seconds per SpMV the model predicts with merge-path, the schedule that needs no row-length statistics, floor included. */
function gpuSeconds(gpu: DeviceSpec, rows: number, nnz: number): number {
  const op = spmvF64(rows, nnz);
  const merge = implTimes(op, gpu).find((t) => t.impl === 'merge-path');
  if (!merge || !Number.isFinite(merge.ms)) throw new Error('merge-path must be priced from rows and nnz alone');
  return merge.ms / 1e3 + callOverheadUs(op, gpu) / 1e6;
}
const measuredSeconds = (r: A100Row): number => (2 * r.nnz) / (r.gflops * 1e9);

describe('reading device-anchors.md', () => {
  it('fails naming the table it looked for when a table or section is missing', () => {
    expect(() => table('| a | b |\n|---|---|\n| 1 | 2 |\n', 'NTUA A100', ['Matrix', 'A100 best GF/s'])).toThrow(
      /the NTUA A100 table \(a header with columns "Matrix\.\.\.", "A100 best GF\/s\.\.\."\) was not found/,
    );
    expect(() => section('# 1. Other\n', '2.2 SpMV')).toThrow(/no section headed "2.2 SpMV"/);
  });
});

describe('GPU model against the NTUA A100 SpMV figures (device-anchors.md section 2.2)', () => {
  const gpu = device('gpu');

  it('reads the ten-matrix A100 table and the published fit', () => {
    expect(a100.length).toBe(10);
    expect(a100.every((r) => r.nnz > 0 && r.gflops > 0)).toBe(true);
    expect(A100_FIT.floorUs).toBeGreaterThan(0);
  });

  it("its per-call floor is the published fit's intercept", () => {
    console.log(
      `A100 floor: preset ${gpu.gpuModel!.sparseFloorUs} us; published fit (device-anchors.md 2.2, cuSPARSE CSR over 53 matrices) t = ${A100_FIT.floorUs} us + ${A100_FIT.nsPerNnz} ns x nnz + ${A100_FIT.nsPerRow} ns x row`,
    );
    expect(gpu.gpuModel!.sparseFloorUs).toBe(A100_FIT.floorUs);
    expect(callOverheadUs(spmvF64(1000, 10_000), gpu)).toBe(A100_FIT.floorUs);
  });

  it('predicts the modelled matrices within 25% median error', () => {
    const lines = [
      'matrix               nnz         rows      published GF/s  predicted GF/s  error    published fit  error   rows from',
    ];
    const errs: number[] = [];
    const fitErrs: number[] = [];
    const left: string[] = [];
    for (const r of a100) {
      const m = rowsOf(r);
      if (typeof m === 'string') {
        left.push(`${r.matrix} (${m})`);
        continue;
      }
      const predicted = (2 * m.nnz) / (gpuSeconds(gpu, m.rows, m.nnz) * 1e9);
      const err = predicted / m.gflops - 1;
      const fit =
        (2 * m.nnz) / ((A100_FIT.floorUs * 1e3 + A100_FIT.nsPerNnz * m.nnz + A100_FIT.nsPerRow * m.rows) * 1e-9 * 1e9);
      const fitErr = fit / m.gflops - 1;
      errs.push(Math.abs(err));
      fitErrs.push(Math.abs(fitErr));
      lines.push(
        `${m.matrix.padEnd(20)} ${String(m.nnz).padStart(10)} ${String(m.rows).padStart(9)} ${m.gflops.toFixed(1).padStart(15)} ${predicted.toFixed(1).padStart(15)}  ${pct(err).padStart(7)} ${fit.toFixed(1).padStart(14)}  ${pct(fitErr).padStart(7)}  ${m.source}${m.symmetric ? ' [symmetric: see note]' : ''}`,
      );
    }
    const medianErr = median(errs);
    lines.push(
      `model (merge-path, floor ${gpu.gpuModel!.sparseFloorUs} us): median |error| ${abs(medianErr)}, max ${abs(Math.max(...errs))} over ${errs.length} modelled matrices${medianErr > 0.25 ? ' -- ABOVE the 25% aim' : ''}`,
    );
    lines.push(
      `published fit (for comparison, not dype's model): median |error| ${abs(median(fitErrs))}, max ${abs(Math.max(...fitErrs))}`,
    );
    lines.push(`not modelled: ${left.join('; ')}`);
    lines.push(
      "note: device-anchors.md gives nnz as the U280 file counts it and says the GPU files count some symmetric matrices differently; for a symmetric matrix the published GF/s may rest on another count, and its error here would then not be the model's alone.",
    );
    const scored = a100.map(rowsOf).filter((m): m is Modelled => typeof m !== 'string');
    const rank = (xs: number[]): number[] => xs.map((x) => xs.filter((y) => y < x).length);
    const a = rank(scored.map(measuredSeconds));
    const b = rank(scored.map((m) => gpuSeconds(gpu, m.rows, m.nnz)));
    const n = scored.length;
    const rho = 1 - (6 * a.reduce((s, x, i) => s + (x - b[i]!) ** 2, 0)) / (n * (n * n - 1));
    lines.push(
      `rank correlation of predicted and measured times: ${rho.toFixed(2)} over ${n} matrices (too few for it to be a check; printed only)`,
    );
    console.log(lines.join('\n'));
    expect(errs.length).toBe(4);
    expect(medianErr).toBeLessThanOrEqual(0.25);
  });
});

// ---------------------------------------------------------------- U280 ----

/**
 * HiSpMV-16 as the paper describes it (and its HiSpMV-16/src/spmv.h sets):
 * 16 HBM channels for the matrix x 8 PEs = 128 PEs (section 3.1, "our 128
 * PE design"); 221 MHz (Table 3); x loaded over one 512-bit channel, 16
 * floats a cycle, into 8,192-column windows (W), hidden behind the stream
 * when it is the longer (hybrid buffering, section 3.2: the authors' own
 * estimator charges min(load, compute)); y in and out over 2 channels, 32
 * floats a cycle (NUM_C_CH = 2); 12,288 rows per PE per tile
 * (MAX_ROWS_PER_PE); long rows shared by all PEs and accumulation fully
 * pipelined (sections 3.4-3.5), so no lane waits on one row; accumulators of
 * the rows held cleared per tile; PADDING x II_DIST = 5 cycles a pass
 * (codegen/assets/misc/main.cpp).
 */
const HISPMV16 = (exposure: number): FpgaDesignConfig => ({
  ...FPGA_DESIGN_DEFAULTS.spmv,
  channels: 16,
  pesPerChannel: 8,
  clockMHz: 221,
  colWindow: 8192,
  rowSlots: 12288,
  xPerCycle: 16,
  windowLoads: 'hispmv',
  yPerCycle: 32,
  clearsAllSlots: false,
  longRows: 'tree',
  sharedRows: 0,
  passOverheadCycles: 5,
  imbalanceExposure: exposure,
});

/** The U280 of the preset, at HiSpMV-16's clock. */
const u280 = device('fpga');
const clockHz = 221e6;

/** GFLOPS as the paper counts them, 2 x (nnz + rows) / time (its section 4.3). */
function hiGflops(r: HiRow, exposure: number): number {
  // Square matrices; the row statistics are not published (the imbalance is, and is given): the
  // mean is nnz / rows, and no lane is bound by its longest row in a row-sharing design.
  const f: SparseFeatures = {
    rows: r.rows,
    cols: r.rows,
    nnz: r.nnz,
    rowLenMean: r.nnz / r.rows,
    rowLenMax: 0,
    rowLenCv: 0,
    emptyRowFraction: 0,
    top1PctNnzShare: 0,
  };
  const t = sparseRowsTime(HISPMV16(exposure), f, 1, clockHz, channelGBs(u280), r.imbalance).total;
  return (2 * (r.nnz + r.rows)) / t / 1e9;
}

/** The exposure in [0, 1] (steps of 0.001) with the least squared log error over `rows`. */
function fitExposure(rows: HiRow[]): number {
  let best = 0;
  let bestErr = Infinity;
  for (let i = 0; i <= 1000; i++) {
    const x = i / 1000;
    const e = rows.reduce((s, r) => s + Math.log(hiGflops(r, x) / r.gflops) ** 2, 0);
    if (e < bestErr) [best, bestErr] = [x, e];
  }
  return best;
}

/** The paper's two halves: balanced (imbalance below 2, M1-M10 in the table) and imbalanced. */
const balanced = (r: HiRow): boolean => r.imbalance < 2;

describe('FPGA model configured as HiSpMV-16 against its U280 table (device-anchors.md section 2.2)', () => {
  it('reads the 20-matrix table', () => {
    expect(hispmv.length).toBe(20);
    expect(hispmv.filter(balanced).length).toBe(10);
  });

  it('predicts the 20 matrices within 25% median error, each held out of the one fitted figure', () => {
    const folds = [hispmv.filter((_, i) => i % 2 === 0), hispmv.filter((_, i) => i % 2 === 1)];
    const fitted = folds.map(fitExposure);
    const lines = [
      `imbalanceExposure fitted on M1,M3,..: ${fitted[0]}; on M2,M4,..: ${fitted[1]}`,
      'id   matrix          rows      nnz        delta  published GF/s  predicted (held out)  error',
    ];
    const errs: number[] = [];
    hispmv.forEach((r, i) => {
      const exposure = fitted[1 - (i % 2)]!;
      const predicted = hiGflops(r, exposure);
      const err = predicted / r.gflops - 1;
      errs.push(Math.abs(err));
      lines.push(
        `${r.id.padEnd(4)} ${r.matrix.padEnd(14)} ${String(r.rows).padStart(8)} ${String(r.nnz).padStart(9)} ${r.imbalance.toFixed(2).padStart(6)} ${r.gflops.toFixed(2).padStart(15)} ${predicted.toFixed(2).padStart(21)}  ${pct(err).padStart(7)}`,
      );
    });
    const bal = errs.filter((_, i) => balanced(hispmv[i]!));
    const imb = errs.filter((_, i) => !balanced(hispmv[i]!));
    lines.push(
      `median |error| ${abs(median(errs))}, max ${abs(Math.max(...errs))}; balanced median ${abs(median(bal))}, imbalanced median ${abs(median(imb))}`,
    );
    // For contrast, no rebalancing at all (exposure 1, a Serpens-like deal) and perfect rebalancing (0).
    for (const x of [1, 0]) {
      const e = hispmv.map((r) => Math.abs(hiGflops(r, x) / r.gflops - 1));
      lines.push(`exposure ${x} (not fitted): median |error| ${abs(median(e))}, max ${abs(Math.max(...e))}`);
    }
    console.log(lines.join('\n'));
    expect(median(errs)).toBeLessThanOrEqual(0.25);
  });

  it('balanced and imbalanced geomeans fall apart as the table does', () => {
    const x = fitExposure(hispmv.filter((_, i) => i % 2 === 0));
    const geo = (rs: HiRow[], g: (r: HiRow) => number): number =>
      Math.exp(rs.reduce((s, r) => s + Math.log(g(r)), 0) / rs.length);
    const [bal, imb] = [hispmv.filter(balanced), hispmv.filter((r) => !balanced(r))];
    const model = [geo(bal, (r) => hiGflops(r, x)), geo(imb, (r) => hiGflops(r, x))];
    const table = [geo(bal, (r) => r.gflops), geo(imb, (r) => r.gflops)];
    console.log(
      `geomean GF/s: balanced ${model[0]!.toFixed(1)} (table ${table[0]!.toFixed(2)}), imbalanced ${model[1]!.toFixed(1)} (table ${table[1]!.toFixed(2)})`,
    );
    expect(model[0]! / model[1]!).toBeGreaterThan(1.5);
  });
});
