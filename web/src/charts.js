// Charts drawn with uPlot (small, canvas-based): line charts with a peak marker (memory,
// counters) and bar charts (ops, per-step breakdown; stacked bars are cumulative overlays).
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { el, fmtNs } from './util.js';

const PALETTE = ['#4e79a7', '#f28e2b', '#e15759', '#76b7b2', '#59a14f', '#edc948', '#b07aa1',
  '#ff9da7', '#9c755f', '#bab0ac'];

function width(container) {
  return Math.max(400, Math.min(1400, (container.clientWidth || document.body.clientWidth || 1000) - 20));
}

// xs: numbers (ns since trace start); series: [{label, values}]; marker: {x, label} drawn as a line.
export function lineChart(container, { title, xs, series, yFmt = (v) => String(v), marker, testid, height = 260 }) {
  const div = el('div', { class: 'chart', 'data-testid': testid || 'chart' });
  container.append(div);
  const opts = {
    title, width: width(container), height,
    scales: { x: { time: false } },
    axes: [{ values: (u, v) => v.map((x) => fmtNs(x)) }, { values: (u, v) => v.map(yFmt), size: 80 }],
    series: [{ value: (u, v) => (v == null ? '-' : fmtNs(v)) },
      ...series.map((s, i) => ({ label: s.label, stroke: s.color || PALETTE[i % PALETTE.length],
        width: 1.5, value: (u, v) => (v == null ? '-' : yFmt(v)) }))],
    hooks: marker ? { draw: [(u) => {
      const x = u.valToPos(marker.x, 'x', true);
      const c = u.ctx;
      c.save(); c.strokeStyle = '#d62728'; c.setLineDash([4, 3]); c.lineWidth = 1.5;
      c.beginPath(); c.moveTo(x, u.bbox.top); c.lineTo(x, u.bbox.top + u.bbox.height); c.stroke();
      c.fillStyle = '#d62728'; c.font = '12px sans-serif'; c.fillText(marker.label, x + 4, u.bbox.top + 12);
      c.restore();
    }] } : {},
  };
  return new uPlot(opts, [xs, ...series.map((s) => s.values)], div);
}

// labels: category names; series: [{label, values}] (stacked when stacked=true).
export function barChart(container, { title, labels, series, stacked = false, yFmt = (v) => String(v), testid, height = 280 }) {
  const div = el('div', { class: 'chart', 'data-testid': testid || 'chart' });
  container.append(div);
  const xs = labels.map((_, i) => i);
  let data = series.map((s) => s.values.map((v) => v || 0));
  if (stacked) {
    const acc = labels.map(() => 0);
    data = data.map((vals) => vals.map((v, i) => (acc[i] += v)));
    data.reverse();  // tallest (cumulative) first, so shorter bars paint on top
  }
  const ser = stacked ? [...series].reverse() : series;
  const n = ser.length;
  const bars = uPlot.paths.bars({ size: [stacked ? 0.7 : Math.min(0.8, 0.8 / n * 2), 80] });
  const opts = {
    title, width: width(container), height,
    scales: { x: { time: false, range: [-0.5, labels.length - 0.5] } },
    axes: [{ values: (u, v) => v.map((i) => (Number.isInteger(i) && labels[i] !== undefined ? shorten(labels[i]) : '')),
      rotate: -30, size: 70, gap: 2 }, { values: (u, v) => v.map(yFmt), size: 80 }],
    series: [{ value: (u, i) => (labels[i] ?? '') },
      ...ser.map((s, i) => {
        const color = s.color || PALETTE[(stacked ? n - 1 - i : i) % PALETTE.length];
        return { label: s.label, fill: color, stroke: color, paths: bars, points: { show: false },
          value: (u, v) => (v == null ? '-' : yFmt(v)) };
      })],
    legend: { show: true },
  };
  return new uPlot(opts, [xs, ...data], div);
}

function shorten(s) { return s.length > 18 ? s.slice(0, 16) + '…' : s; }
