/** The HTML shell: inline CSS only, no scripts, no external resources. */
import { esc } from './svg.js';

export function page(title: string, sections: readonly { heading: string; body: string }[]): string {
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>${esc(title)}</title>
<style>
body{font-family:system-ui,sans-serif;margin:1.5em;color:#222}
h1{font-size:1.4em}h2{font-size:1.15em;margin-top:1.6em;border-bottom:1px solid #ccc}
table{border-collapse:collapse;font-size:.85em}td,th{border:1px solid #ccc;padding:2px 6px;text-align:right}
th{background:#f0f0f0}td.l,th.l{text-align:left}.plots{display:flex;flex-wrap:wrap;gap:12px}
p.note{font-size:.85em;color:#555;max-width:60em}
</style></head><body>
<h1>${esc(title)}</h1>
${sections.map((s) => `<section><h2>${esc(s.heading)}</h2>\n${s.body}</section>`).join('\n')}
</body></html>
`;
}

export function table(head: readonly string[], rows: readonly (readonly string[])[], leftCols = 1): string {
  const cell = (tag: string, v: string, j: number): string =>
    `<${tag}${j < leftCols ? ' class="l"' : ''}>${esc(v)}</${tag}>`;
  return `<table><thead><tr>${head.map((h, j) => cell('th', h, j)).join('')}</tr></thead><tbody>${rows.map((r) => `<tr>${r.map((v, j) => cell('td', v, j)).join('')}</tr>`).join('')}</tbody></table>`;
}
