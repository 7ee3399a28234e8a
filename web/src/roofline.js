// The Roofline tab (`mlprof roofline --json`): a log-log chart of achieved TFLOP/s against
// arithmetic intensity, one point per (op, shapes, dtype) group, area by GPU time, coloured by
// bound, under the device's memory and compute roofs; then the wasted-time table.
import { el, fmtNs, fmtPct, note } from './util.js';
import { dataTable } from './table.js';
import { missing } from './views.js';

const SVG = 'http://www.w3.org/2000/svg';
function svg(tag, attrs = {}, ...children) {
  const e = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) if (v !== undefined && v !== null) e.setAttribute(k, String(v));
  for (const c of children) if (c) e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return e;
}

const COLOR = { compute: '#e15759', memory: '#4e79a7', '': '#999' };

function chart(r) {
  const pts = (r.shapes || []).filter((p) => p.intensity > 0 && p.achieved_tflops > 0 && p.kernel_ns > 0);
  const peaks = r.peaks || {};
  const bw = (peaks.mem_gbs || 0) / 1e3;  // TB/s: TFLOP/s per FLOP/byte
  const ceilings = [['bf16', peaks.bf16_tflops], ['fp32', peaks.fp32_tflops], ['tf32', peaks.tf32_tflops]]
    .filter(([, v]) => v > 0);
  const W = 760, H = 420, L = 64, R = 16, T = 16, B = 48;
  const xs = pts.map((p) => p.intensity), ys = pts.map((p) => p.achieved_tflops);
  const top = Math.max(...ceilings.map(([, v]) => v), ...ys, 1);
  let x0 = Math.min(...xs, 0.1), x1 = Math.max(...xs, 1000);
  let y0 = Math.min(...ys, top / 1e4), y1 = top * 2;
  x0 = 10 ** Math.floor(Math.log10(x0)); x1 = 10 ** Math.ceil(Math.log10(x1));
  y0 = 10 ** Math.floor(Math.log10(y0)); y1 = 10 ** Math.ceil(Math.log10(y1));
  const X = (v) => L + (Math.log10(v) - Math.log10(x0)) / (Math.log10(x1) - Math.log10(x0)) * (W - L - R);
  const Y = (v) => H - B - (Math.log10(v) - Math.log10(y0)) / (Math.log10(y1) - Math.log10(y0)) * (H - T - B);
  const g = svg('svg', { viewBox: `0 0 ${W} ${H}`, width: '100%', class: 'roofline-chart', 'data-testid': 'roofline-chart', role: 'img' });
  for (let d = Math.log10(x0); d <= Math.log10(x1); d++) {
    g.append(svg('line', { x1: X(10 ** d), x2: X(10 ** d), y1: T, y2: H - B, stroke: '#eee' }),
      svg('text', { x: X(10 ** d), y: H - B + 16, 'text-anchor': 'middle', 'font-size': 11 }, String(10 ** d)));
  }
  for (let d = Math.log10(y0); d <= Math.log10(y1); d++) {
    g.append(svg('line', { x1: L, x2: W - R, y1: Y(10 ** d), y2: Y(10 ** d), stroke: '#eee' }),
      svg('text', { x: L - 6, y: Y(10 ** d) + 4, 'text-anchor': 'end', 'font-size': 11 }, String(10 ** d)));
  }
  g.append(svg('text', { x: (L + W - R) / 2, y: H - 8, 'text-anchor': 'middle', 'font-size': 12 }, 'arithmetic intensity (FLOP/byte)'),
    svg('text', { x: 14, y: (T + H - B) / 2, 'text-anchor': 'middle', 'font-size': 12, transform: `rotate(-90 14 ${(T + H - B) / 2})` }, 'achieved TFLOP/s'));
  // Roofs: bandwidth * AI up to each compute ceiling.
  if (bw > 0) {
    for (const [name, c] of ceilings) {
      const ridge = c / bw;
      const a = Math.max(x0, y0 / bw);
      g.append(svg('polyline', { points: `${X(a)},${Y(a * bw)} ${X(Math.min(ridge, x1))},${Y(Math.min(ridge, x1) * bw)} ${X(x1)},${Y(c)}`,
        fill: 'none', stroke: '#333', 'stroke-width': name === 'bf16' ? 2 : 1, 'stroke-dasharray': name === 'bf16' ? '' : '4 3' }),
      svg('text', { x: W - R - 4, y: Y(c) - 4, 'text-anchor': 'end', 'font-size': 11 }, `${name} ${c} TFLOP/s`));
    }
  }
  const maxT = Math.max(...pts.map((p) => p.kernel_ns), 1);
  for (const p of [...pts].sort((a, b) => b.kernel_ns - a.kernel_ns)) {
    const rad = 3 + 17 * Math.sqrt(p.kernel_ns / maxT);
    const c = svg('circle', { cx: X(p.intensity), cy: Y(p.achieved_tflops), r: rad, fill: COLOR[p.bound || ''], 'fill-opacity': 0.55,
      stroke: p.above_compute_peak ? '#000' : 'none', 'data-testid': 'roofline-point' });
    c.append(svg('title', {}, `${p.name} ${p.shapes || ''} ${p.dtype}\n${p.calls} calls, ${fmtNs(p.kernel_ns)} GPU time\n` +
      `${p.intensity.toFixed(1)} FLOP/B, ${p.achieved_tflops.toFixed(2)} TFLOP/s` +
      (typeof p.roofline_pct === 'number' ? `, ${fmtPct(100 * p.roofline_pct)} of roofline, ${p.bound} bound, ${fmtNs(p.wasted_ns)} wasted` : '')));
    g.append(c);
  }
  return g;
}

export async function roofline(c, src) {
  const r = await src.get('roofline');
  if (missing(c, r, 'Roofline')) return;
  const p = r.peaks;
  c.append(el('p', {}, p ? `${r.device}: ${p.name} peaks (${p.source}).` : `${r.device || 'No device'}: no peak figures (mlprof roofline --peaks FILE).`));
  for (const w of r.warnings || []) c.append(el('p', { class: 'note' }, w));
  if (!r.calls) { c.append(note('No GPU time in modeled ops (record with record_shapes=True for Input Dims).')); return; }
  c.append(el('p', { 'data-testid': 'roofline-summary' },
    `${r.calls} modeled calls in ${fmtNs(r.kernel_ns)} of the ${fmtNs(r.gpu_kernel_ns)} kernel time` +
    (p ? `; at the roofline ${fmtNs(r.roofline_ns)}: ${fmtNs(r.wasted_ns)} wasted.` : '.')));
  if (p) c.append(chart(r), el('p', { class: 'muted' }, 'One point per op, shapes and dtype; area by GPU time; red: compute bound, blue: memory bound; a black ring: faster than the compute peak (a model or attribution problem). Hover for shapes.'));
  const cols = ['name', 'shapes', 'dtype', 'calls', 'kernel_ns', 'intensity', 'achieved_tflops', 'achieved_tbps', 'roofline_pct', 'bound', 'wasted_ns'];
  const rows = (r.shapes || []).map((x) => ({ ...x, roofline_pct: typeof x.roofline_pct === 'number' ? 100 * x.roofline_pct : null }));
  c.append(el('h3', {}, 'Wasted time: kernel time minus roofline time'),
    dataTable(rows, { id: 'roofline.shapes', columns: cols.filter((k) => rows.some((x) => k in x)), sort: ['wasted_ns', true], bars: 'wasted_ns',
      labels: { kernel_ns: 'GPU time', intensity: 'FLOP/B', achieved_tflops: 'TFLOP/s', achieved_tbps: 'TB/s', roofline_pct: '% of roofline', wasted_ns: 'wasted' } }));
  if ((r.steps || []).length) c.append(el('h3', {}, 'Per step'), dataTable(r.steps, { id: 'roofline.steps' }));
  if ((r.unmodeled || []).length) c.append(el('h3', {}, 'Kernel time without a model'), dataTable(r.unmodeled, { id: 'roofline.unmodeled' }));
}
