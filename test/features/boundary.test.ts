import { readdirSync, readFileSync } from 'node:fs';
import { dirname, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const runtimeDir = fileURLToPath(new URL('../../runtime/', import.meta.url));
const featuresDir = resolve(runtimeDir, 'features');

describe('runtime/features imports nothing outside runtime/', () => {
  const files = readdirSync(featuresDir).filter((f) => f.endsWith('.ts'));

  it('has source files', () => {
    expect(files).toContain('index.ts');
  });

  for (const file of files) {
    it(file, () => {
      const text = readFileSync(resolve(featuresDir, file), 'utf8');
      const specs = [...text.matchAll(/\bfrom\s+'([^']+)'/g)].map((m) => m[1]!);
      for (const spec of specs) {
        expect(spec.startsWith('.'), `${file} imports package '${spec}'`).toBe(true);
        const target = resolve(dirname(resolve(featuresDir, file)), spec);
        expect(relative(runtimeDir, target).startsWith('..'), `${file} imports '${spec}' outside runtime/`).toBe(false);
      }
    });
  }
});
