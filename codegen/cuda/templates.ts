/**
 * The files the CUDA project is made from: handlebars templates
 * (codegen/cuda/templates/) and files shipped verbatim (the CPU emulation
 * codegen/cuda/emu/, the native ABI header codegen/native/dype_abi.h), read
 * beside this module's source. When running from dist/ (tsc copies neither),
 * they are found through the package root instead: dist/codegen/cuda/ ->
 * ../../../codegen/cuda/.
 */
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import Handlebars from 'handlebars';

const CANDIDATES = ['./', '../../../codegen/cuda/'];

let found: string | undefined;

/** codegen/cuda/ of the source tree, with a trailing slash. */
function sourceDir(): string {
  if (found) return found;
  for (const rel of CANDIDATES) {
    const dir = fileURLToPath(new URL(rel, import.meta.url));
    if (existsSync(`${dir}templates/program.cu.hbs`)) return (found = dir);
  }
  throw new Error(
    `cuda emitter: templates not found (looked in ${CANDIDATES.map((c) => fileURLToPath(new URL(`${c}templates/`, import.meta.url))).join(', ')})`,
  );
}

const cache = new Map<string, HandlebarsTemplateDelegate>();

/** Renders templates/<name>.hbs with `view`; a field the template names but the view lacks is an error. */
export function render(name: string, view: object): string {
  let t = cache.get(name);
  if (!t) {
    const src = readFileSync(`${sourceDir()}templates/${name}.hbs`, 'utf8');
    t = Handlebars.compile(src, { noEscape: true, strict: true });
    cache.set(name, t);
  }
  return t(view);
}

/** A file shipped into the project as it is, by its path relative to codegen/cuda/ (`emu/cuda_runtime_api.h`, `../native/dype_abi.h`). */
export function shipped(rel: string): string {
  return readFileSync(`${sourceDir()}${rel}`, 'utf8');
}
