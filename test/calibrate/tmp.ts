import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const dirs: string[] = [];
export function tmp(): string {
  const d = mkdtempSync(join(tmpdir(), 'dype-calibrate-'));
  dirs.push(d);
  return d;
}
export function cleanupTmp(): void {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
}
