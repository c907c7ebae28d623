/**
 * Static SVG plots as strings: a scatter with a highlighted front and
 * labelled markers, a Gantt timeline, and a categorical grid map. No
 * scripts, no external resources; text is escaped.
 */

export const esc = (s: string): string =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

const PALETTE = [
  '#1f77b4',
  '#ff7f0e',
  '#2ca02c',
  '#d62728',
  '#9467bd',
  '#8c564b',
  '#e377c2',
  '#7f7f7f',
  '#bcbd22',
  '#17becf',
];
export const colour = (i: number): string => PALETTE[((i % PALETTE.length) + PALETTE.length) % PALETTE.length]!;

const num = (v: number): string =>
  Math.abs(v) >= 100 ? v.toFixed(0) : Math.abs(v) >= 1 ? v.toFixed(2) : v.toPrecision(2);

export interface ScatterPoint {
  x: number;
  y: number;
  title: string;
}

export interface Marker extends ScatterPoint {
  name: string;
  colour: string;
}

/** All points grey, the non-dominated ones (lower x and y) joined in a line, markers on top; log axes when the data spans decades. */
export function scatterSvg(
  title: string,
  xLabel: string,
  yLabel: string,
  pts: readonly ScatterPoint[],
  markers: readonly Marker[],
): string {
  const W = 460;
  const H = 300;
  const m = { l: 60, r: 120, t: 28, b: 42 };
  const all = [...pts, ...markers].filter((p) => p.x > 0 && p.y > 0 && Number.isFinite(p.x) && Number.isFinite(p.y));
  if (all.length === 0)
    return `<svg class="plot" xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}"><text x="10" y="20">${esc(title)}: no data</text></svg>`;
  const xs = all.map((p) => p.x);
  const ys = all.map((p) => p.y);
  const axis = (lo: number, hi: number, size: number, flip: boolean) => {
    const log = hi / lo > 5;
    const a = log ? Math.log10(lo) : lo;
    const b0 = log ? Math.log10(hi) : hi;
    const b = b0 === a ? a + 1 : b0;
    const f = (v: number): number => {
      const t = ((log ? Math.log10(v) : v) - a) / (b - a);
      return flip ? size * (1 - t) : size * t;
    };
    return { f, log, lo, hi };
  };
  const pw = W - m.l - m.r;
  const ph = H - m.t - m.b;
  const X = axis(Math.min(...xs) * 0.95, Math.max(...xs) * 1.05, pw, false);
  const Y = axis(Math.min(...ys) * 0.95, Math.max(...ys) * 1.05, ph, true);
  const out: string[] = [];
  out.push(
    `<svg class="plot" xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" role="img" aria-label="${esc(title)}">`,
  );
  out.push(`<text x="${W / 2}" y="16" text-anchor="middle" font-size="13" font-weight="bold">${esc(title)}</text>`);
  out.push(`<g transform="translate(${m.l},${m.t})">`);
  out.push(`<rect x="0" y="0" width="${pw}" height="${ph}" fill="#fafafa" stroke="#999"/>`);
  for (const t of [0, 0.5, 1]) {
    const xv = X.log ? 10 ** (Math.log10(X.lo) + t * (Math.log10(X.hi) - Math.log10(X.lo))) : X.lo + t * (X.hi - X.lo);
    const yv = Y.log ? 10 ** (Math.log10(Y.lo) + t * (Math.log10(Y.hi) - Math.log10(Y.lo))) : Y.lo + t * (Y.hi - Y.lo);
    out.push(`<text x="${X.f(xv).toFixed(1)}" y="${ph + 14}" text-anchor="middle" font-size="10">${num(xv)}</text>`);
    out.push(`<text x="-4" y="${Y.f(yv).toFixed(1)}" text-anchor="end" font-size="10">${num(yv)}</text>`);
  }
  out.push(
    `<text x="${pw / 2}" y="${ph + 32}" text-anchor="middle" font-size="11">${esc(xLabel)}${X.log ? ' (log)' : ''}</text>`,
  );
  out.push(
    `<text transform="translate(-46,${ph / 2}) rotate(-90)" text-anchor="middle" font-size="11">${esc(yLabel)}${Y.log ? ' (log)' : ''}</text>`,
  );
  for (const p of pts)
    out.push(
      `<circle class="pt" cx="${X.f(p.x).toFixed(1)}" cy="${Y.f(p.y).toFixed(1)}" r="2.5" fill="#bbb"><title>${esc(p.title)}</title></circle>`,
    );
  const front = pts
    .filter((p) => !pts.some((q) => q.x <= p.x && q.y <= p.y && (q.x < p.x || q.y < p.y)))
    .sort((a, b) => a.x - b.x);
  if (front.length > 0)
    out.push(
      `<polyline class="front" fill="none" stroke="#333" stroke-width="1.5" points="${front.map((p) => `${X.f(p.x).toFixed(1)},${Y.f(p.y).toFixed(1)}`).join(' ')}"/>`,
    );
  markers.forEach((mk, i) => {
    if (!(mk.x > 0 && mk.y > 0)) return;
    out.push(
      `<circle class="marker" cx="${X.f(mk.x).toFixed(1)}" cy="${Y.f(mk.y).toFixed(1)}" r="${6 - Math.min(i, 3)}" fill="none" stroke="${mk.colour}" stroke-width="2"><title>${esc(`${mk.name}: ${mk.title}`)}</title></circle>`,
    );
    out.push(
      `<circle cx="${pw + 12}" cy="${10 + i * 16}" r="5" fill="none" stroke="${mk.colour}" stroke-width="2"/><text x="${pw + 22}" y="${14 + i * 16}" font-size="11">${esc(mk.name)}</text>`,
    );
  });
  out.push('</g></svg>');
  return out.join('');
}

export interface Bar {
  row: string;
  start: number;
  end: number;
  colour: string;
  title: string;
}

export function ganttSvg(title: string, bars: readonly Bar[], unit = 'ms'): string {
  const rows = [...new Set(bars.map((b) => b.row))];
  const W = 900;
  const rowH = 16;
  const m = { l: 110, r: 20, t: 28, b: 30 };
  const H = m.t + m.b + Math.max(1, rows.length) * rowH;
  const end = Math.max(1e-9, ...bars.map((b) => b.end));
  const pw = W - m.l - m.r;
  const sx = (t: number): number => (t / end) * pw;
  const out: string[] = [];
  out.push(
    `<svg class="plot" xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" role="img" aria-label="${esc(title)}">`,
  );
  out.push(`<text x="${W / 2}" y="16" text-anchor="middle" font-size="13" font-weight="bold">${esc(title)}</text>`);
  out.push(`<g transform="translate(${m.l},${m.t})">`);
  rows.forEach((r, i) =>
    out.push(
      `<text x="-6" y="${i * rowH + 12}" text-anchor="end" font-size="10">${esc(r)}</text><line x1="0" x2="${pw}" y1="${(i + 1) * rowH}" y2="${(i + 1) * rowH}" stroke="#eee"/>`,
    ),
  );
  for (const b of bars) {
    const i = rows.indexOf(b.row);
    out.push(
      `<rect class="bar" x="${sx(b.start).toFixed(2)}" y="${i * rowH + 2}" width="${Math.max(0.5, sx(b.end) - sx(b.start)).toFixed(2)}" height="${rowH - 4}" fill="${b.colour}"><title>${esc(b.title)}</title></rect>`,
    );
  }
  const ph = rows.length * rowH;
  for (const t of [0, 0.25, 0.5, 0.75, 1])
    out.push(
      `<text x="${(t * pw).toFixed(1)}" y="${ph + 14}" text-anchor="middle" font-size="10">${num(t * end)}</text>`,
    );
  out.push(`<text x="${pw / 2}" y="${ph + 27}" text-anchor="middle" font-size="11">time (${unit})</text>`);
  out.push('</g></svg>');
  return out.join('');
}

export interface Cell {
  i: number;
  j: number;
  value: number;
  title: string;
}

/** A grid of categories (value -1: none, drawn hatched grey) over two axes with tick labels. */
export function gridSvg(
  title: string,
  xLabel: string,
  yLabel: string,
  xTicks: readonly string[],
  yTicks: readonly string[],
  cells: readonly Cell[],
  legend: readonly { value: number; label: string }[],
): string {
  const nx = xTicks.length;
  const ny = yTicks.length;
  const cw = 22;
  const ch = 18;
  const m = { l: 70, t: 28, b: 44 };
  const legendH = legend.length * 16 + 8;
  const W = Math.max(m.l + nx * cw + 20, 460);
  const H = m.t + ny * ch + m.b + legendH;
  const out: string[] = [];
  out.push(
    `<svg class="plot" xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" role="img" aria-label="${esc(title)}">`,
  );
  out.push(`<text x="${W / 2}" y="16" text-anchor="middle" font-size="13" font-weight="bold">${esc(title)}</text>`);
  out.push(`<g transform="translate(${m.l},${m.t})">`);
  for (const c of cells) {
    const fill = c.value < 0 ? '#ddd' : colour(c.value);
    out.push(
      `<rect class="cell" x="${c.i * cw}" y="${(ny - 1 - c.j) * ch}" width="${cw - 1}" height="${ch - 1}" fill="${fill}"${c.value < 0 ? ' opacity="0.6"' : ''}><title>${esc(c.title)}</title></rect>`,
    );
  }
  xTicks.forEach((t, i) => {
    if (i % 2 === 0)
      out.push(`<text x="${i * cw + cw / 2}" y="${ny * ch + 12}" text-anchor="middle" font-size="9">${esc(t)}</text>`);
  });
  yTicks.forEach((t, j) => {
    if (j % 2 === 0)
      out.push(`<text x="-4" y="${(ny - 1 - j) * ch + 12}" text-anchor="end" font-size="9">${esc(t)}</text>`);
  });
  out.push(`<text x="${(nx * cw) / 2}" y="${ny * ch + 28}" text-anchor="middle" font-size="11">${esc(xLabel)}</text>`);
  out.push(
    `<text transform="translate(-52,${(ny * ch) / 2}) rotate(-90)" text-anchor="middle" font-size="11">${esc(yLabel)}</text>`,
  );
  legend.forEach((l, k) => {
    const y = ny * ch + 40 + k * 16;
    out.push(
      `<rect x="0" y="${y}" width="12" height="12" fill="${l.value < 0 ? '#ddd' : colour(l.value)}"/><text x="18" y="${y + 10}" font-size="10">${esc(l.label)}</text>`,
    );
  });
  out.push('</g></svg>');
  return out.join('');
}

export interface TornadoRow {
  label: string;
  low: number;
  high: number;
  /** Hover text. */
  title: string;
}

/**
 * A tornado chart: per row (largest effect first, as given) a bar from the
 * baseline to the figure at the parameter's low end (upper half of the row)
 * and one to the figure at its high end (lower half); the baseline as a line.
 */
export function tornadoSvg(
  title: string,
  xLabel: string,
  baseline: number,
  rows: readonly TornadoRow[],
  fmt: (v: number) => string,
): string {
  const W = 720;
  const rowH = 18;
  const m = { l: 280, r: 30, t: 44, b: 40 };
  const H = m.t + m.b + Math.max(1, rows.length) * rowH;
  const vals = [baseline, ...rows.flatMap((r) => [r.low, r.high])].filter((v) => Number.isFinite(v));
  let lo = Math.min(...vals);
  let hi = Math.max(...vals);
  const pad = hi > lo ? (hi - lo) * 0.05 : Math.max(Math.abs(baseline) * 0.01, 1e-3);
  lo -= pad;
  hi += pad;
  const pw = W - m.l - m.r;
  const sx = (v: number): number => ((v - lo) / (hi - lo)) * pw;
  const out: string[] = [];
  out.push(
    `<svg class="plot" xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" role="img" aria-label="${esc(title)}">`,
  );
  out.push(`<text x="${W / 2}" y="16" text-anchor="middle" font-size="13" font-weight="bold">${esc(title)}</text>`);
  out.push(
    `<rect x="${m.l}" y="24" width="10" height="8" fill="${colour(0)}"/><text x="${m.l + 14}" y="32" font-size="10">low end</text><rect x="${m.l + 70}" y="24" width="10" height="8" fill="${colour(1)}"/><text x="${m.l + 84}" y="32" font-size="10">high end</text>`,
  );
  out.push(`<g transform="translate(${m.l},${m.t})">`);
  const b = sx(baseline);
  rows.forEach((r, i) => {
    const y = i * rowH;
    out.push(
      `<text x="-6" y="${y + 12}" text-anchor="end" font-size="10">${esc(r.label)}</text><line x1="0" x2="${pw}" y1="${y + rowH}" y2="${y + rowH}" stroke="#eee"/>`,
    );
    const bar = (v: number, dy: number, c: string, end: string): void => {
      if (!Number.isFinite(v)) return;
      const x0 = Math.min(b, sx(v));
      const w = Math.max(1, Math.abs(sx(v) - b));
      out.push(
        `<rect class="bar" x="${x0.toFixed(1)}" y="${y + dy}" width="${w.toFixed(1)}" height="${rowH / 2 - 2}" fill="${c}"><title>${esc(`${r.title}: ${end} end ${fmt(v)} (as written ${fmt(baseline)})`)}</title></rect>`,
      );
    };
    bar(r.low, 2, colour(0), 'low');
    bar(r.high, rowH / 2, colour(1), 'high');
  });
  const ph = Math.max(1, rows.length) * rowH;
  out.push(`<line x1="${b.toFixed(1)}" x2="${b.toFixed(1)}" y1="0" y2="${ph}" stroke="#333" stroke-width="1"/>`);
  for (const v of [lo + pad, baseline, hi - pad])
    out.push(`<text x="${sx(v).toFixed(1)}" y="${ph + 14}" text-anchor="middle" font-size="10">${esc(fmt(v))}</text>`);
  out.push(`<text x="${pw / 2}" y="${ph + 30}" text-anchor="middle" font-size="11">${esc(xLabel)}</text>`);
  out.push('</g></svg>');
  return out.join('');
}
