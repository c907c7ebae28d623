/**
 * The repository explains itself: nothing cites the design documents that
 * live outside it, every top-level folder and every runtime/ and codegen/
 * subfolder has a README, every README below the root that names one of its
 * folder's own files in backticks names all of that folder's source files
 * (.ts, .c, .h, .cpp, .py, .sh, .hbs), and docs/CLI.md names every option of
 * every command (read from the command definitions themselves, so a new
 * option fails here until it is documented).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildProgram } from '../cli/main.js';
import { REPO_ROOT } from './helpers/cli.js';

const tracked = spawnSync('git', ['ls-files'], { cwd: REPO_ROOT, encoding: 'utf8' })
  .stdout.split('\n')
  .filter((f) => f.length > 0 && existsSync(join(REPO_ROOT, f)));
const read = (f: string): string => readFileSync(join(REPO_ROOT, f), 'utf8');

describe('the repository explains itself', () => {
  it('cites no design document outside the repository', () => {
    const cites = tracked
      .filter((f) => /\.(ts|md|json|hbs|h|cpp|js)$/.test(f) && f !== 'test/docs.test.ts')
      .filter((f) => /\b(DESIGN|EXECUTION)\.md\b/.test(read(f)));
    expect(cites).toEqual([]);
  });

  it('has a README in every top-level folder and every runtime/ and codegen/ subfolder', () => {
    const dirs = new Set<string>();
    for (const f of tracked) {
      const parts = f.split('/');
      if (parts.length > 1 && !parts[0]!.startsWith('.')) dirs.add(parts[0]!);
      if (parts.length > 2 && (parts[0] === 'runtime' || parts[0] === 'codegen')) dirs.add(`${parts[0]}/${parts[1]}`);
    }
    expect([...dirs].filter((d) => !tracked.includes(`${d}/README.md`))).toEqual([]);
  });

  it('lists every source file in the READMEs that list their folder', () => {
    // A README below the root lists its folder when it names one of the
    // folder's own files in backticks; then it names every source file there.
    const source = /\.(ts|c|h|cpp|py|sh|hbs)$/;
    const missing: string[] = [];
    for (const readme of tracked.filter((f) => f.endsWith('/README.md'))) {
      const dir = readme.slice(0, -'/README.md'.length);
      const files = tracked
        .filter((t) => t.startsWith(`${dir}/`) && !t.slice(dir.length + 1).includes('/'))
        .map((t) => t.slice(dir.length + 1))
        .filter((f) => f !== 'README.md');
      const text = read(readme);
      const named = (f: string): boolean => text.includes(`\`${f}\``);
      if (!files.some(named)) continue;
      for (const f of files) if (source.test(f) && !named(f)) missing.push(`${dir}/${f}`);
    }
    expect(missing).toEqual([]);
  });

  it('documents every option of every command in docs/CLI.md', () => {
    const cli = read('docs/CLI.md');
    const section = (name: string): string => {
      const at = cli.indexOf(`## dype ${name}`);
      expect(at, `docs/CLI.md has no section "## dype ${name}"`).toBeGreaterThanOrEqual(0);
      const next = cli.indexOf('\n## ', at + 1);
      return cli.slice(at, next < 0 ? undefined : next);
    };
    const undocumented: string[] = [];
    for (const cmd of buildProgram().commands) {
      const text = section(cmd.name());
      for (const o of cmd.options) {
        const flag = o.long ?? o.short!;
        if (flag === '--help') continue;
        if (!text.includes(`\`${flag}`) && !text.includes(`${flag} `) && !text.includes(`${flag}\``))
          undocumented.push(`dype ${cmd.name()} ${flag}`);
      }
    }
    expect(undocumented).toEqual([]);
  });
});
