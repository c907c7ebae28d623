/**
 * Every model parameter cites its source: each constant of MODEL, the FPGA
 * designs and SIM has an entry in the table of sources next to it, each
 * preset number a kind (and, measured, what it was measured on), and
 * docs/COST-MODEL.md's table "Every model parameter" is the one
 * eval/parameters.ts generates. DYPE_UPDATE_GOLDENS=1 rewrites the table in
 * the page; never edit it by hand.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  CONSTANT_GROUPS,
  constantEntries,
  parameterTableMarkdown,
  presetFields,
  presetNames,
  loadPreset,
  sourceCovers,
  uncoveredConstants,
} from '../../eval/parameters.js';
import { getLeaf } from '../../runtime/plan/parameters.js';

const docPath = fileURLToPath(new URL('../../docs/COST-MODEL.md', import.meta.url));
const update = process.env['DYPE_UPDATE_GOLDENS'] === '1';
const BEGIN = /<!-- BEGIN parameter table[^>]*-->\n/;
const END = '<!-- END parameter table -->';

describe('every model parameter cites a source', () => {
  it('every constant of MODEL, the FPGA designs and SIM has an entry, and every entry covers a constant', () => {
    expect(uncoveredConstants()).toEqual([]);
    const names = new Set(CONSTANT_GROUPS.map((g) => g.name));
    for (const g of CONSTANT_GROUPS)
      for (const key of Object.keys(g.table)) expect(names.has(key.split('.')[0]!), key).toBe(true);
    const entries = constantEntries();
    for (const key of new Set(CONSTANT_GROUPS.flatMap((g) => Object.keys(g.table))))
      expect(
        entries.some((e) => e.key === key && e.leaves.length > 0),
        `${key} covers no constant`,
      ).toBe(true);
  });

  it("the constants' entries are complete: an estimate says so, a stated range holds its one value", () => {
    for (const { key, entry, leaves, group } of constantEntries()) {
      expect(entry.source.length, key).toBeGreaterThan(10);
      expect(entry.unit.length, key).toBeGreaterThan(0);
      expect(entry.measuredOn.length, key).toBeGreaterThan(0);
      if (entry.kind === 'estimate') expect(entry.source, key).toMatch(/^estimate/);
      if (entry.range) {
        expect(leaves, key).toHaveLength(1);
        const v = getLeaf(group.root, leaves[0]!.path) as number;
        expect(entry.range.low, key).toBeLessThanOrEqual(v);
        expect(entry.range.high, key).toBeGreaterThanOrEqual(v);
      }
      if (entry.max !== undefined)
        for (const l of leaves) expect(l.value as number, key).toBeLessThanOrEqual(entry.max);
    }
  });

  for (const name of presetNames())
    it(`${name}: every number has a kind; a measured one says what it was measured on; a range holds its value`, () => {
      const fields = presetFields(name);
      expect(fields.filter((f) => f.kind === undefined).map((f) => `${f.path}: ${f.source}`)).toEqual([]);
      for (const f of fields) {
        if (f.kind === 'measured' || f.kind === 'published fit')
          expect(loadPreset(name).measuredOn?.[f.path], `${name} ${f.path} measuredOn`).toBeDefined();
        if (f.range) {
          expect(f.range.low, f.path).toBeLessThanOrEqual(f.value);
          expect(f.range.high, f.path).toBeGreaterThanOrEqual(f.value);
          expect(f.kind, `${f.path}: a range is a measured spread`).not.toBe('estimate');
        }
        expect(f.source, f.path).not.toContain('|');
      }
      const s = loadPreset(name);
      const paths = new Set(fields.map((f) => f.path));
      // A measuredOn key may name an object: it covers the numbers under it, as a sources key does (dype calibrate
      // writes one for a whole fitted cpuModel). A range holds one value, so its key names that number.
      for (const k of Object.keys(s.measuredOn ?? {}))
        expect(
          [...paths].some((p) => sourceCovers(k, p)),
          `${name}: ${k} covers no number`,
        ).toBe(true);
      for (const k of Object.keys(s.ranges ?? {})) expect(paths.has(k), `${name}: ${k} names no number`).toBe(true);
    });

  it('docs/COST-MODEL.md holds the generated table (DYPE_UPDATE_GOLDENS=1 rewrites it)', () => {
    const doc = readFileSync(docPath, 'utf8');
    const begin = BEGIN.exec(doc);
    const end = doc.indexOf(END);
    expect(begin, 'the BEGIN marker').not.toBeNull();
    expect(end).toBeGreaterThan(begin!.index);
    const table = parameterTableMarkdown();
    const current = doc.slice(begin!.index + begin![0].length, end);
    if (update && current !== table)
      writeFileSync(docPath, doc.slice(0, begin!.index + begin![0].length) + table + doc.slice(end));
    else expect(current, 'docs/COST-MODEL.md is out of date: run with DYPE_UPDATE_GOLDENS=1').toBe(table);
  });
});
