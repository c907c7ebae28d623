/**
 * The handlebars templates of the CUDA project, read from
 * codegen/cuda/templates/ beside this module's source. When running from
 * dist/ (tsc does not copy .hbs files), they are found through the package
 * root instead: dist/codegen/cuda/ -> ../../../codegen/cuda/templates/.
 */
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import Handlebars from 'handlebars';

const CANDIDATES = ['./templates/', '../../../codegen/cuda/templates/'];

function templateDir(): string {
  for (const rel of CANDIDATES) {
    const dir = fileURLToPath(new URL(rel, import.meta.url));
    if (existsSync(`${dir}program.cu.hbs`)) return dir;
  }
  throw new Error(`cuda emitter: templates not found (looked in ${CANDIDATES.map((c) => fileURLToPath(new URL(c, import.meta.url))).join(', ')})`);
}

const cache = new Map<string, HandlebarsTemplateDelegate>();

/** Renders templates/<name>.hbs with `view`; a field the template names but the view lacks is an error. */
export function render(name: string, view: object): string {
  let t = cache.get(name);
  if (!t) {
    const src = readFileSync(`${templateDir()}${name}.hbs`, 'utf8');
    t = Handlebars.compile(src, { noEscape: true, strict: true });
    cache.set(name, t);
  }
  return t(view);
}
