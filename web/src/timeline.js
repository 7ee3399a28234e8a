// Timeline tab: CPU thread and GPU stream lanes on one canvas, zoom (wheel) and pan (drag),
// launch -> kernel flows. Events arrive in the compact encoding of render/timeline_data.cpp:
// gzip of LEB128 varint columns per lane, timestamps delta-encoded, names in a string table.
// Drawing stays fast at 1M events: per lane and depth, slices are sorted and disjoint, so the
// visible range is found by binary search and runs of sub-pixel slices are skipped by searching
// for the next pixel's first slice.
import { el, fmtNs, hashColor } from './util.js';

// A plain loop: Uint8Array.from(atob(s), fn) calls fn per byte and costs ~10x more at 1M events.
export function base64Bytes(base64) {
  const bin = atob(base64);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

// bin: the gzip-compressed encoding (from the report's <script> or the REST endpoint).
export async function decodeEvents(bin) {
  const stream = new Blob([bin]).stream().pipeThrough(new DecompressionStream('gzip'));
  const buf = new Uint8Array(await new Response(stream).arrayBuffer());
  return parseEvents(buf);
}

export function parseEvents(buf) {
  let p = 0;
  const u = () => {  // unsigned LEB128 up to 2^53
    let x = 0, mul = 1, b;
    do { b = buf[p++]; x += (b & 0x7f) * mul; mul *= 128; } while (b & 0x80);
    return x;
  };
  const z = () => { const v = u(); return v % 2 ? -(v + 1) / 2 : v / 2; };
  const magic = String.fromCharCode(buf[0], buf[1], buf[2], buf[3]);
  if (magic !== 'MLTL') throw new Error('bad timeline data');
  p = 4;
  const version = u();
  if (version !== 2) throw new Error(`timeline data version ${version}: this page reads version 2`);
  const begin = z();
  const dec = new TextDecoder();
  const nstr = u();
  const strings = new Array(nstr);
  for (let i = 0; i < nstr; i++) { const n = u(); strings[i] = dec.decode(buf.subarray(p, p + n)); p += n; }
  const nlanes = u();
  const lanes = [];
  const starts = [];  // each lane's slice starts, in the order sent (flows point into them)
  for (let l = 0; l < nlanes; l++) {
    const name = strings[u()];
    const gpu = buf[p++] === 1;
    const n = u();
    const maxDepth = u();
    const ts = new Float64Array(n), dur = new Float64Array(n);
    const nm = new Uint32Array(n), depth = new Uint16Array(n);
    let t = 0;
    for (let i = 0; i < n; i++) { t += z(); ts[i] = t; }
    starts.push(ts);
    for (let i = 0; i < n; i++) dur[i] = u();
    for (let i = 0; i < n; i++) nm[i] = u();
    for (let i = 0; i < n; i++) depth[i] = u();
    // Split by depth: within one depth of one lane slices are disjoint and sorted by start.
    const counts = new Uint32Array(maxDepth);
    for (let i = 0; i < n; i++) counts[depth[i]]++;
    const rows = [];
    for (let d = 0; d < maxDepth; d++) {
      rows.push({ s: new Float64Array(counts[d]), e: new Float64Array(counts[d]), n: new Uint32Array(counts[d]), k: 0 });
    }
    for (let i = 0; i < n; i++) {
      const r = rows[depth[i]];
      r.s[r.k] = ts[i]; r.e[r.k] = ts[i] + dur[i]; r.n[r.k] = nm[i]; r.k++;
    }
    for (const r of rows) {  // ends must be monotonic for the binary search; clamp overlaps
      for (let i = 1; i < r.e.length; i++) if (r.e[i] < r.e[i - 1]) r.e[i] = r.e[i - 1];
    }
    lanes.push({ name, gpu, count: n, rows });
  }
  // Flows (version 2), in columns: source lanes, source slice indexes (deltas from the previous
  // flow's), offsets from those slices' starts, then the same three for the destinations.
  const nflows = u();
  const flows = new Float64Array(nflows * 4);
  for (const side of [0, 2]) {
    for (let i = 0; i < nflows; i++) flows[4 * i + side] = u();
    const idx = new Float64Array(nflows);
    for (let i = 0, k = 0; i < nflows; i++) { k += z(); idx[i] = k; }
    for (let i = 0; i < nflows; i++) {
      const st = starts[flows[4 * i + side]];
      flows[4 * i + side + 1] = (st.length ? st[idx[i]] : 0) + z();
    }
  }
  const end = lanes.reduce((m, l) => Math.max(m, ...l.rows.map((r) => (r.e.length ? r.e[r.e.length - 1] : 0))), 0);
  return { version, begin, strings, lanes, flows, end };
}

// A flow is in view when one of its ends is (an arrow merely crossing the window is not).
function endInView(f, k, t0, t1) {
  return (f[k + 1] >= t0 && f[k + 1] <= t1) || (f[k + 3] >= t0 && f[k + 3] <= t1);
}

function lowerBound(arr, x) {  // first index with arr[i] > x
  let lo = 0, hi = arr.length;
  while (lo < hi) { const m = (lo + hi) >> 1; if (arr[m] <= x) lo = m + 1; else hi = m; }
  return lo;
}
function firstAtOrAfter(arr, x, lo) {  // first index >= lo with arr[i] >= x
  let hi = arr.length;
  while (lo < hi) { const m = (lo + hi) >> 1; if (arr[m] < x) lo = m + 1; else hi = m; }
  return lo;
}

const ROW = 16, LANE_HEAD = 18;
const rankOf = (name) => (/^rank (\d+) · /.exec(name) || [])[1];
// All flows in view are drawn only when there is at least this much room per flow.
const FLOW_SPACING_PX = 12;

export function renderTimeline(container, data, stats) {
  const lanes = data.lanes;
  if (!lanes.length) {
    container.append(el('p', { class: 'note', 'data-testid': 'no-data' }, 'No slices on any thread or stream.'));
    return null;
  }
  const HELP = 'Drag to pan, wheel to zoom, click a slice to select it and see its flows, double-click to reset.';
  const info = el('div', { class: 'tl-info', 'data-testid': 'timeline-hover' }, HELP);
  const range = el('span', { class: 'muted', 'data-testid': 'timeline-range' });
  const resetBtn = el('button', { 'data-testid': 'timeline-reset' }, 'Reset');
  const flowsBox = el('input', { type: 'checkbox', checked: true, 'data-testid': 'timeline-flows' });
  let selected = null;
  const canvas = el('canvas', { class: 'tl-canvas', 'data-testid': 'timeline-canvas' });
  const scroller = el('div', { class: 'tl-scroll' }, canvas);
  container.append(el('div', { class: 'toolbar' }, resetBtn, el('label', { title: 'Draw every flow in view once zoomed in far enough to tell them apart; a selected slice always shows its own.' }, flowsBox, ' all flows when zoomed in'), range), info, scroller);

  const laneTop = [];
  let y = 0;
  for (const l of lanes) { laneTop.push(y); y += LANE_HEAD + Math.max(1, l.rows.length) * ROW + 4; }
  const totalH = Math.min(y, 30000);
  const span = Math.max(1, data.end);
  const view = { t0: 0, t1: span };
  const dpr = window.devicePixelRatio || 1;
  let W = 0;
  const ctx = canvas.getContext('2d');
  let raf = 0;
  const colors = new Array(data.strings.length);
  const colorOf = (nm, gpu) => colors[nm] || (colors[nm] = hashColor(data.strings[nm], gpu));

  function resize() {
    W = Math.max(300, scroller.clientWidth || container.clientWidth || 1000);
    canvas.width = W * dpr; canvas.height = totalH * dpr;
    canvas.style.width = W + 'px'; canvas.style.height = totalH + 'px';
    draw();
  }
  function schedule() { if (!raf) raf = requestAnimationFrame(() => { raf = 0; draw(); }); }

  function draw() {
    const t0 = view.t0, t1 = view.t1, scale = W / (t1 - t0);
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, W, totalH);
    ctx.font = '11px system-ui, sans-serif';
    ctx.textBaseline = 'middle';
    const vis0 = scroller.scrollTop - 50, vis1 = scroller.scrollTop + (scroller.clientHeight || 800) + 50;
    let drawn = 0;
    lanes.forEach((lane, li) => {
      const top = laneTop[li];
      const h = LANE_HEAD + lane.rows.length * ROW;
      if (top > vis1 || top + h < vis0) return;
      ctx.fillStyle = lane.gpu ? '#eef6ee' : '#f4f4f8';
      ctx.fillRect(0, top, W, LANE_HEAD - 2);
      if (li > 0 && rankOf(lane.name) !== rankOf(lanes[li - 1].name)) {  // a rank directory: rule between ranks
        ctx.fillStyle = '#7a7a90';
        ctx.fillRect(0, top - 3, W, 2);
      }
      ctx.fillStyle = '#333';
      ctx.fillText(`${lane.gpu ? 'GPU' : 'CPU'} · ${lane.name} · ${lane.count.toLocaleString('en-US')} slices`, 4, top + 8);
      lane.rows.forEach((r, d) => {
        const ry = top + LANE_HEAD + d * ROW;
        let i = lowerBound(r.e, t0);
        let lastName = -1;
        while (i < r.s.length && r.s[i] < t1) {
          const x0 = (r.s[i] - t0) * scale, x1 = (r.e[i] - t0) * scale;
          const w = x1 - x0;
          const nm = r.n[i];
          if (nm !== lastName) { ctx.fillStyle = colorOf(nm, lane.gpu); lastName = nm; }
          if (w < 1) {
            // Sub-pixel run: one 1px mark, then jump to the first slice starting in the next pixel.
            const px = Math.floor(x0);
            ctx.fillRect(px, ry, 1, ROW - 1);
            drawn++;
            i = firstAtOrAfter(r.s, t0 + (px + 1) / scale, i + 1);
            continue;
          }
          const xa = Math.max(0, x0), xb = Math.min(W, x1);
          ctx.fillRect(xa, ry, xb - xa, ROW - 1);
          drawn++;
          if (xb - xa > 40) {
            ctx.fillStyle = '#111';
            ctx.save(); ctx.beginPath(); ctx.rect(xa, ry, xb - xa - 2, ROW); ctx.clip();
            ctx.fillText(data.strings[nm], xa + 2, ry + ROW / 2);
            ctx.restore();
            lastName = -1;
          }
          i++;
        }
      });
    });
    // Flows: those of the selected slice always; all of them only when few enough are in view to
    // tell apart (zoomed out, thousands of launch -> kernel arrows paint a solid block).
    let flowsDrawn = 0, flowsInView = 0;
    const f = data.flows;
    if (selected) {
      const r = lanes[selected.li].rows[selected.d];
      const a = r.s[selected.i], b = r.e[selected.i];
      ctx.strokeStyle = '#111'; ctx.lineWidth = 2;
      const x0 = (a - t0) * scale, y0 = laneTop[selected.li] + LANE_HEAD + selected.d * ROW;
      ctx.strokeRect(Math.max(-2, x0), y0, Math.max(2, Math.min(W + 4, (b - t0) * scale) - Math.max(-2, x0)), ROW - 1);
      ctx.strokeStyle = 'rgba(200,40,40,0.9)'; ctx.lineWidth = 1.5;
      ctx.beginPath();
      for (let k = 0; k < f.length; k += 4) {
        const mine = (f[k] === selected.li && f[k + 1] >= a && f[k + 1] <= b) ||
                     (f[k + 2] === selected.li && f[k + 3] >= a && f[k + 3] <= b);
        if (mine) { flowPath(f, k, t0, scale); flowsDrawn++; }
      }
      ctx.stroke();
    }
    if (flowsBox.checked && f.length) {
      for (let k = 0; k < f.length; k += 4) {
        if (endInView(f, k, t0, t1)) flowsInView++;
      }
      if (flowsInView && flowsInView <= W / FLOW_SPACING_PX) {
        ctx.strokeStyle = 'rgba(80,80,200,0.55)'; ctx.lineWidth = 1;
        ctx.beginPath();
        for (let k = 0; k < f.length; k += 4) {
          if (!endInView(f, k, t0, t1)) continue;
          flowPath(f, k, t0, scale); flowsDrawn++;
        }
        ctx.stroke();
      }
    }
    const flowNote = !f.length ? '' : flowsInView > W / FLOW_SPACING_PX
      ? ` · ${flowsInView.toLocaleString('en-US')} flows in view: zoom in or click a slice to see them`
      : ` · ${flowsDrawn.toLocaleString('en-US')} flows drawn`;
    range.textContent = `${fmtNs(Math.max(0, t0))} – ${fmtNs(t1)} since trace start (window ${fmtNs(t1 - t0)}, ${drawn.toLocaleString('en-US')} marks)${flowNote}`;
    canvas.dataset.t0 = String(t0); canvas.dataset.t1 = String(t1); canvas.dataset.drawn = String(drawn);
    canvas.dataset.flowsDrawn = String(flowsDrawn); canvas.dataset.flowsInView = String(flowsInView);
  }

  function flowPath(f, k, t0, scale) {
    const xs = (f[k + 1] - t0) * scale, xd = (f[k + 3] - t0) * scale;
    const ys = laneTop[f[k]] + LANE_HEAD, yd = laneTop[f[k + 2]] + LANE_HEAD;
    ctx.moveTo(xs, ys); ctx.lineTo(xd, yd);
  }

  function zoomAt(x, factor) {
    const t = view.t0 + (x / W) * (view.t1 - view.t0);
    let w = (view.t1 - view.t0) * factor;
    w = Math.min(span * 1.05, Math.max(1000, w));
    view.t0 = t - (x / W) * w; view.t1 = view.t0 + w;
    schedule();
  }
  function panBy(dxPixels) {
    const dt = (dxPixels / W) * (view.t1 - view.t0);
    view.t0 -= dt; view.t1 -= dt;
    schedule();
  }
  canvas.addEventListener('wheel', (e) => {
    e.preventDefault();
    if (e.shiftKey) { panBy(-e.deltaY); return; }
    zoomAt(e.offsetX, Math.exp(e.deltaY * 0.002));
  }, { passive: false });
  let drag = null;
  canvas.addEventListener('mousedown', (e) => { drag = { x: e.clientX, moved: 0 }; });
  let wasDrag = false;
  window.addEventListener('mouseup', () => { wasDrag = !!drag && drag.moved > 3; drag = null; });
  canvas.addEventListener('mousemove', (e) => {
    if (drag) { drag.moved += Math.abs(e.clientX - drag.x); panBy(e.clientX - drag.x); drag.x = e.clientX; return; }
    const hit = hitTest(e.offsetX, e.offsetY);
    info.textContent = hit ? describe(hit) : (selected ? 'Selected: ' + describe(selected) : HELP);
  });
  canvas.addEventListener('click', (e) => {
    if (e.detail > 1 || wasDrag) return;
    const hit = hitTest(e.offsetX, e.offsetY);
    selected = hit;
    canvas.dataset.selected = hit ? data.strings[lanes[hit.li].rows[hit.d].n[hit.i]] : '';
    info.textContent = hit ? 'Selected: ' + describe(hit) : HELP;
    schedule();
  });
  canvas.addEventListener('dblclick', () => { view.t0 = 0; view.t1 = span; schedule(); });
  resetBtn.addEventListener('click', () => { view.t0 = 0; view.t1 = span; schedule(); });
  flowsBox.addEventListener('change', schedule);
  scroller.addEventListener('scroll', schedule);
  window.addEventListener('resize', resize);

  function hitTest(x, yy) {
    const t = view.t0 + (x / W) * (view.t1 - view.t0);
    const tol = 2 * (view.t1 - view.t0) / W;
    for (let li = 0; li < lanes.length; li++) {
      const d = Math.floor((yy - laneTop[li] - LANE_HEAD) / ROW);
      const r = lanes[li].rows[d];
      if (!r || yy < laneTop[li] + LANE_HEAD) continue;
      const i = lowerBound(r.e, t - tol);
      if (i < r.s.length && r.s[i] <= t + tol) return { li, d, i };
    }
    return null;
  }
  function describe(h) {
    const r = lanes[h.li].rows[h.d];
    const a = r.s[h.i], b = r.e[h.i];
    let nflows = 0;
    const f = data.flows;
    for (let k = 0; k < f.length; k += 4) {
      if ((f[k] === h.li && f[k + 1] >= a && f[k + 1] <= b) || (f[k + 2] === h.li && f[k + 3] >= a && f[k + 3] <= b)) nflows++;
    }
    return `${data.strings[r.n[h.i]]} — starts +${fmtNs(a)} after the trace start, lasts ${fmtNs(b - a)} (${lanes[h.li].name})` +
      (nflows ? `, ${nflows} flow${nflows > 1 ? 's' : ''}` : '');
  }
  resize();
  const api = { view: () => ({ ...view }), panBy, zoomAt, draw, lanes: lanes.length, stats,
    select: (h) => { selected = h; draw(); }, hitTest, laneTop, flows: data.flows,
    laneNames: lanes.map((l) => l.name), laneSlices: lanes.map((l) => l.count) };
  window.mlprofTimeline = api;
  return api;
}
