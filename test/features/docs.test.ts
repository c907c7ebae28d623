import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { FEATURE_DOCS, FEATURE_KEYS } from '../../runtime/features/index.js';

const page = readFileSync(fileURLToPath(new URL('../../docs/FEATURES.md', import.meta.url)), 'utf8');

describe('FEATURE_DOCS and docs/FEATURES.md', () => {
  it('every key is camelCase, documented with a tier, description and cost', () => {
    for (const key of FEATURE_KEYS) {
      const d = FEATURE_DOCS[key];
      expect(key).toMatch(/^[a-z][a-zA-Z0-9]*$/);
      expect([0, 1, 2]).toContain(d.tier);
      expect(d.description.length).toBeGreaterThan(10);
      expect(d.cost.length).toBeGreaterThan(3);
      expect(d.type).toBe(key === 'format' ? 'string' : 'number');
    }
  });

  it('the page lists every key in the table of its tier', () => {
    expect(page).toContain('# Data features');
    const sections = page.split(/^## /m);
    for (const key of FEATURE_KEYS) {
      const tier = FEATURE_DOCS[key].tier;
      const section = sections.find((s) => s.startsWith(`Tier ${tier}:`));
      expect(section, `section for tier ${tier}`).toBeDefined();
      expect(section!, key).toContain(`| \`${key}\` |`);
    }
  });
});
