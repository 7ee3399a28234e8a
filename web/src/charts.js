// Charts drawn with uPlot (small, canvas-based): line charts with a peak marker (memory,
// counters) and bar charts (ops, per-step breakdown; stacked bars are cumulative overlays).
// Rules that keep them honest: value axes of bars, stacks and byte/time curves start at zero;
// legends are static keys that carry each series' total (never "-" until hovered); a line under
// the chart names the values at the pointer; x axes of time series are relative to the trace.
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { el, fmtNs, fmtNsTick, fmtBytes, fmtBytesTick, distinctLabels, getSpan } from './util.js';

export const PALETTE = ['#4e79a7', '#f28e2b', '#e15759', '#76b7b2', '#59a14f', '#edc948', '#b07aa1',
  '#ff9da7', '#9c755f', '#bab0ac'];

function width(container, wanted) {
  if (wanted) return wanted;
  return Math.max(400, Math.min(1400, (container.clientWidth || document.body.clientWidth || 1000) - 20));
}

const fromZero = (u, min, max) => [Math.min(0, min), max > 0 ? max * 1.05 : 1];

// Ticks at round values in the axis' own unit: 1, 2, 5 x 10^k for times and counts (uPlot's
// default), 1, 2, 4, 8... x 1024^k for bytes ("256 KiB", not "244.14 KiB").
const BYTE_INCRS = [];
for (let p = 1; p < 2 ** 50; p *= 2) BYTE_INCRS.push(p);
function valueAxis(yFmt, yTick) {
  const bytes = yFmt === fmtBytes;
  const tick = yTick || (yFmt === fmtNs ? fmtNsTick : bytes ? fmtBytesTick : yFmt);
  return { values: (u, v) => v.map(tick), incrs: bytes ? BYTE_INCRS : undefined,
    // Wide enough for the longest tick label (never clipped at the left edge).
    size: (u, values) => Math.max(50, 26 + 7 * Math.max(0, ...(values || []).map((x) => String(x).length))) };
}

function frame(container, testid, title) {
  const div = el('div', { class: 'chart', 'data-testid': testid || 'chart' });
  const hover = el('div', { class: 'chart-hover', 'data-testid': 'chart-hover' }, '\u00a0');
  if (title) div.append(el('div', { class: 'chart-title' }, title));
  container.append(div);
  return { div, hover };
}

function recordScale(div) {
  return (u) => { div.dataset.yMin = String(u.scales.y.min); div.dataset.yMax = String(u.scales.y.max); };
}

// xs: numbers (ns since trace start; else xIsTime false and xFmt/xTick format them); series:
// [{label, values, legend}];
// marker: {x, label} drawn as a line. zero: the y axis starts at 0 (default; counters that hover
// far from 0 pass false).
export function lineChart(container, { title, xs, series, yFmt = (v) => String(v), marker, testid, height = 260,
  zero = true, width: w, xLabel = 'time since trace start', yTick, stepped = false, xFmt = fmtNs, xTick = fmtNsTick,
  xIsTime = true, onSelect }) {
  const { div, hover } = frame(container, testid, title);
  const hooks = { setScale: [recordScale(div)], setCursor: [(u) => {
    const i = u.cursor.idx;
    if (i == null) { hover.textContent = '\u00a0'; return; }
    hover.textContent = `at ${xFmt(xs[i])}: ` + series.map((s) => `${s.label} ${s.values[i] == null ? 'n/a' : yFmt(s.values[i])}`).join(' · ');
  }] };
  if (marker) {
    hooks.draw = [(u) => {
      const x = u.valToPos(marker.x, 'x', true);
      const c = u.ctx;
      c.save(); c.strokeStyle = '#d62728'; c.setLineDash([4, 3]); c.lineWidth = 1.5;
      c.beginPath(); c.moveTo(x, u.bbox.top); c.lineTo(x, u.bbox.top + u.bbox.height); c.stroke();
      c.fillStyle = '#d62728'; c.font = `${12 * devicePixelRatio}px sans-serif`;
      // The label beside the line, on whichever side has room, inside the plot area.
      const w = c.measureText(marker.label).width, pad = 4 * devicePixelRatio;
      const right = u.bbox.left + u.bbox.width;
      const lx = x + pad + w <= right ? x + pad : Math.max(u.bbox.left + pad, x - pad - w);
      c.fillText(marker.label, lx, u.bbox.top + 14 * devicePixelRatio);
      c.restore();
    }];
  }
  // onSelect(lo, hi): a drag selects an x range (kept drawn) instead of zooming; a click clears it.
  if (onSelect) {
    hooks.setSelect = [(u) => {
      if (u.select.width < 2) { onSelect(null, null); return; }
      onSelect(u.posToVal(u.select.left, 'x'), u.posToVal(u.select.left + u.select.width, 'x'));
    }];
  }
  const opts = {
    width: width(container, w), height,
    cursor: onSelect ? { drag: { x: true, y: false, setScale: false } } : undefined,
    // Time axes run over the whole trace (charts of one report line up) when the data fits in it.
    scales: { x: { time: false, range: (u, min, max) => (xIsTime && getSpan() && min >= 0 && max <= getSpan() * 1.001 ? [0, getSpan()] : [min, max]) },
      y: zero ? { range: fromZero } : {} },
    axes: [{ values: (u, v) => v.map((x) => xTick(x)), label: xLabel, labelSize: 20 },
      valueAxis(yFmt, yTick)],
    legend: { live: false },
    series: [{ label: xLabel },
      ...series.map((s, i) => ({ label: s.legend || s.label, stroke: s.color || PALETTE[i % PALETTE.length],
        width: 1.5, fill: s.fill, paths: stepped ? uPlot.paths.stepped({ align: 1 }) : undefined })) ],
    hooks,
  };
  const u = new uPlot(opts, [xs, ...series.map((s) => s.values)], div);
  div.append(hover);
  return u;
}

// labels: category names; series: [{label, values}] (stacked when stacked=true). The legend shows
// each series' total over the categories (and its share when stacked).
export function barChart(container, { title, labels, series, stacked = false, yFmt = (v) => String(v), testid, height = 280,
  width: w, xLabel = '', hoverLabel = (l) => l, yTick }) {
  const { div, hover } = frame(container, testid, title);
  const n = series.length;
  const raw = series.map((s) => s.values.map((v) => v || 0));
  // Grouped (not stacked) series sit side by side: each category gets one x slot per series
  // (null in the others' slots), so no bar hides behind another.
  const grouped = !stacked && n > 1;
  const slot = 0.8 / n;
  let xs = labels.map((_, i) => i);
  let data = raw;
  if (grouped) {
    xs = labels.flatMap((_, i) => series.map((_s, k) => i + (k - (n - 1) / 2) * slot));
    data = raw.map((vals, k) => labels.flatMap((_, i) => series.map((_s, j) => (j === k ? vals[i] : null))));
  }
  const category = (idx) => (grouped ? Math.floor(idx / n) : idx);
  if (stacked) {
    const acc = labels.map(() => 0);
    data = raw.map((vals) => vals.map((v, i) => (acc[i] += v)));
    data.reverse();  // tallest (cumulative) first, so shorter bars paint on top
  }
  const totals = raw.map((vals) => vals.reduce((a, b) => a + b, 0));
  const grand = totals.reduce((a, b) => a + b, 0) || 1;
  const legendOf = (s, k) => s.legend || `${s.label} ${yFmt(totals[k])}` + (stacked ? ` (${(100 * totals[k] / grand).toFixed(1)} %)` : '');
  const order = stacked ? series.map((_, k) => series.length - 1 - k) : series.map((_, k) => k);
  const bars = uPlot.paths.bars({ size: [grouped ? 0.95 : 0.7, 80] });
  // Category labels: shortened in the middle and kept distinct (the full name in the hover line);
  // with more categories than fit, every k-th is labelled.
  const plotW = width(container, w) - 90;
  const maxLen = labels.length > 12 ? 16 : 22;
  const short = distinctLabels(labels.map(String), maxLen);
  const longest = Math.max(0, ...short.map((l) => l.length));
  const rotate = longest > 4 && labels.length * longest * 7 > plotW;
  const every = Math.max(1, Math.ceil(labels.length / Math.max(1, Math.floor(plotW / (rotate ? 18 : longest * 7 + 10)))));
  const axisSize = rotate ? Math.min(140, Math.ceil(longest * 7 * 0.5 + 24)) : 30;
  const opts = {
    width: width(container, w), height,
    // Room on the right for the last rotated label (it runs right of its bar).
    padding: [null, rotate ? Math.min(140, Math.ceil(longest * 6.2 * 0.87) - 20) : null, null, null],
    scales: { x: { time: false, range: [-0.5, labels.length - 0.5] }, y: { range: fromZero } },
    axes: [{ splits: () => labels.map((_, i) => i).filter((i) => i % every === 0),
      values: (u, v) => v.map((i) => (Number.isInteger(i) && labels[i] !== undefined ? short[i] : '')),
      rotate: rotate ? -30 : 0, size: axisSize, gap: 2,
      label: xLabel || undefined, labelSize: xLabel ? 18 : 0 },
      valueAxis(yFmt, yTick)],
    series: [{ label: xLabel || 'category' },
      ...order.map((k) => {
        const s = series[k];
        const color = s.color || PALETTE[k % PALETTE.length];
        return { label: legendOf(s, k), fill: color, stroke: color, paths: bars, points: { show: false } };
      })],
    legend: { show: true, live: false },
    hooks: { setScale: [recordScale(div)], setCursor: [(u) => {
      const i = u.cursor.idx == null ? null : category(u.cursor.idx);
      if (i == null || labels[i] === undefined) { hover.textContent = '\u00a0'; return; }
      const parts = series.map((s, k) => `${s.label} ${yFmt(raw[k][i])}`);
      const sum = stacked ? ` = ${yFmt(raw.reduce((a, vals) => a + vals[i], 0))}` : '';
      hover.textContent = `${hoverLabel(labels[i])}: ${parts.join(' + ').replace(/ \+ /g, stacked ? ' + ' : ' · ')}${sum}`;
    }] },
  };
  const u = new uPlot(opts, [xs, ...data], div);
  div.append(hover);
  return u;
}
