// Timeline tab: CPU thread and GPU stream lanes on one canvas, in the manner of Perfetto's UI: a
// time ruler, zoom (wheel, W/S) and pan (shift+drag, A/D), click a slice for its args, parents,
// flows and launching op, search by name, drag to select an area and get its per-name totals,
// lanes that collapse and pin. Events arrive in the compact encoding of render/timeline_data.cpp:
// gzip of LEB128 varint columns per lane, timestamps delta-encoded, names in a string table.
// Drawing stays fast at 10M events: per lane and depth, slices are sorted and disjoint, so the
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
  if (version !== 3) throw new Error(`timeline data version ${version}: this page reads version 3`);
  const begin = z();
  const dec = new TextDecoder();
  const readStrings = () => {
    const n = u(), out = new Array(n);
    for (let i = 0; i < n; i++) { const m = u(); out[i] = dec.decode(buf.subarray(p, p + m)); p += m; }
    return out;
  };
  const strings = readStrings();
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
    // Binary searches need monotonic ends: `e` is clamped where a slice ends before the one
    // before it; `x` keeps the true ends (the same array when nothing was clamped).
    for (const r of rows) {
      r.x = r.e;
      for (let i = 1; i < r.e.length; i++) {
        if (r.e[i] < r.e[i - 1]) {
          if (r.x === r.e) r.e = Float64Array.from(r.x);
          r.e[i] = r.e[i - 1];
        }
      }
    }
    lanes.push({ name, gpu, count: n, rows, depth });
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
  // Args (version 3): strings, distinct sets, id keys; per lane a set column and id columns,
  // kept as bytes and decoded for one lane when one of its slices is clicked.
  const argStrings = readStrings();
  const nsets = u();
  const sets = new Array(nsets);
  for (let i = 0; i < nsets; i++) {
    const m = u(), pairs = new Array(m);
    for (let k = 0; k < m; k++) { const key = u(); pairs[k] = [key, u()]; }
    sets[i] = pairs;
  }
  const idKeys = [];
  for (let i = u(); i > 0; i--) idKeys.push(u());
  const argBase = p;
  for (const lane of lanes) {  // each lane's block: its size, then the block (read on demand)
    const size = u();
    lane.argBlock = p - argBase;
    p += size;
  }
  const args = { strings: argStrings, sets, idKeys, bytes: buf.slice(argBase, p) };
  const end = lanes.reduce((m, l) => Math.max(m, ...l.rows.map((r) => (r.e.length ? r.e[r.e.length - 1] : 0))), 0);
  return { version, begin, strings, lanes, flows, end, args };
}

// The args of slice `idx` (in the lane's order as sent) of a lane: [[key, value], ...].
export function sliceArgs(data, lane, idx) {
  const a = data.args;
  if (!a || lane.argBlock === undefined) return [];
  const b = a.bytes;
  let p = 0;
  const u = () => { let x = 0, mul = 1, c; do { c = b[p++]; x += (c & 0x7f) * mul; mul *= 128; } while (c & 0x80); return x; };
  const skip = (n) => { for (let k = 0; k < n; p++) if (!(b[p] & 0x80)) k++; };
  if (!lane.argIds) {  // first use: where the lane's id columns start
    p = lane.argBlock;
    skip(lane.count);
    lane.argIds = [];
    for (let c = u(); c > 0; c--) { const key = u(); lane.argIds.push([key, p]); skip(lane.count); }
  }
  // The idx-th value of the column at `off`; id columns add up their deltas on the way.
  const column = (off, acc) => {
    p = off;
    let sum = 0, val = 0;
    for (let k = 0; k <= idx; k++) {
      val = u();
      if (acc && val > 0) { const v = val - 1; sum += v % 2 ? -(v + 1) / 2 : v / 2; }
    }
    return acc ? (val > 0 ? sum : null) : val;
  };
  const out = [];
  const set = column(lane.argBlock, false);
  if (set > 0) for (const [k, v] of a.sets[set - 1]) out.push([a.strings[k], a.strings[v]]);
  for (const [key, off] of lane.argIds) {
    const v = column(off, true);
    if (v !== null) out.push([a.strings[a.idKeys[key]], String(v)]);
  }
  return out;
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

// Ruler ticks: the round step (1, 2 or 5 x 10^k ns) that leaves at least minPx between labels.
export function tickStep(windowNs, widthPx, minPx = 90) {
  const raw = (windowNs / widthPx) * minPx;
  const p = Math.pow(10, Math.floor(Math.log10(Math.max(raw, 1e-3))));
  for (const m of [1, 2, 5, 10]) if (m * p >= raw) return m * p;
  return 10 * p;
}
// A tick label in the unit of the view's magnitude (so labels far from 0 stay short: "1.423452 s"
// rather than "1423452 µs") with just the decimals the step needs.
export function tickLabel(t, step, magnitude = t) {
  const units = [[1e9, 's'], [1e6, 'ms'], [1e3, 'µs'], [1, 'ns']];
  const [div, unit] = units.find(([d]) => Math.abs(magnitude) >= d) || units[3];
  const dec = Math.max(0, Math.ceil(-Math.log10(step / div) - 1e-9));
  return `${(t / div).toFixed(Math.min(dec, 9))} ${unit}`;
}

// Doubles arrive as %.17g text (0.012500000000000001): shown in the shortest form that reads back.
const shortNumber = (v) => (/^-?\d+\.\d{12,}(e[-+]?\d+)?$/.test(v) ? String(Number(v)) : v);

const ROW = 16, LANE_HEAD = 18, RULER = 22, PIN_W = 34, PROC_HEAD = 16;
const rankOf = (name) => (/^rank (\d+) · /.exec(name) || [])[1];
// All flows in view are drawn only when there is at least this much room per flow.
const FLOW_SPACING_PX = 12;
// Lanes the trace writer made up rather than threads that ran: Kineto's "Spans" process (the
// profiler's own whole-recording spans), any one-slice lane. Folded by default.
const isSynthetic = (l) => !l.gpu && (/\(pid Spans /.test(l.name) || l.count <= 1);
// Runtime calls between an op and its kernel (cudaLaunchKernel, hipLaunchKernel, mtia...).
const RUNTIME = /^(cuda|cu[A-Z]|hip|mtia|nccl|Runtime|runtime)/;

// A serve tile (/api/profiler/timeline/tiles) as the decoded events renderTimeline draws: per
// lane and row its slices and its runs of merged sub-pixel slices (a run: one mark named
// "N slices merged", with its count in `c` and busy time in `b`). No flows or args.
export function tileData(tile) {
  const strings = [...tile.names];
  const merged = strings.length;
  strings.push('(merged slices)');
  let held = 0;
  const lanes = tile.lanes.map((l) => {
    const nrows = Math.max(1, l.rows);
    const items = Array.from({ length: nrows }, () => []);
    for (const [ts, dur, d, nm] of l.slices) items[Math.min(d, nrows - 1)].push([ts, ts + dur, nm, 1, dur]);
    for (const [ts, end, d, count, busy] of l.runs) items[Math.min(d, nrows - 1)].push([ts, end, merged, count, busy]);
    const rows = items.map((it) => {
      it.sort((a, b) => a[0] - b[0]);
      const r = { s: new Float64Array(it.length), e: new Float64Array(it.length), n: new Uint32Array(it.length),
        c: new Float64Array(it.length), b: new Float64Array(it.length) };
      it.forEach((v, i) => { r.s[i] = v[0]; r.e[i] = v[1]; r.n[i] = v[2]; r.c[i] = v[3]; r.b[i] = v[4]; });
      r.x = r.e;
      for (let i = 1; i < r.e.length; i++) {
        if (r.e[i] < r.e[i - 1]) { if (r.x === r.e) r.e = Float64Array.from(r.x); r.e[i] = r.e[i - 1]; }
      }
      held += it.length;
      return r;
    });
    return { name: l.name, gpu: l.gpu, count: l.total_slices, rows, depth: null };
  });
  return { version: 3, begin: tile.begin_ns, strings, lanes, flows: new Float64Array(0), end: tile.t1, args: null,
    tile: { t0: tile.t0, t1: tile.t1, px: tile.px, exact: tile.exact, held } };
}

// opts.onView(t0, t1, widthPx): called after each frame (serve mode fetches tiles for the view);
// the returned api's setData(data) swaps the slices drawn (same lanes, in the same order).
export function renderTimeline(container, data, stats, opts = {}) {
  let lanes = data.lanes;
  if (!lanes.length) {
    container.append(el('p', { class: 'note', 'data-testid': 'no-data' }, 'No slices on any thread or stream.'));
    return null;
  }
  const HELP = 'Wheel or W/S: zoom · shift+drag, shift+wheel or A/D: pan · drag: select an area · click a slice: its args · click a lane name: fold it, the pin: keep it on top · double-click: reset.';
  const info = el('div', { class: 'tl-info', 'data-testid': 'timeline-hover' }, HELP);
  const range = el('span', { class: 'muted', 'data-testid': 'timeline-range' });
  const resetBtn = el('button', { 'data-testid': 'timeline-reset' }, 'Reset');
  const flowsBox = el('input', { type: 'checkbox', checked: true, 'data-testid': 'timeline-flows' });
  const searchBox = el('input', { type: 'search', placeholder: 'Search names (/regex/)', 'data-testid': 'timeline-search', size: 28 });
  const prevBtn = el('button', { 'data-testid': 'timeline-search-prev', title: 'Previous match (shift+Enter)' }, '◀');
  const nextBtn = el('button', { 'data-testid': 'timeline-search-next', title: 'Next match (Enter)' }, '▶');
  const searchInfo = el('span', { class: 'muted', 'data-testid': 'timeline-search-count' });
  const foldAll = el('button', { 'data-testid': 'timeline-fold-all' }, 'Fold all');
  const openAll = el('button', { 'data-testid': 'timeline-unfold-all' }, 'Unfold all');
  const details = el('div', { class: 'tl-details', 'data-testid': 'timeline-details' });
  let selected = null;
  const canvas = el('canvas', { class: 'tl-canvas', 'data-testid': 'timeline-canvas', tabindex: 0 });
  const scroller = el('div', { class: 'tl-scroll' }, canvas);
  container.append(
    el('div', { class: 'toolbar' }, resetBtn, foldAll, openAll,
      el('label', { title: 'Draw every flow in view once zoomed in far enough to tell them apart; a selected slice always shows its own.' }, flowsBox, ' all flows when zoomed in'),
      searchBox, prevBtn, nextBtn, searchInfo),
    el('div', { class: 'toolbar' }, range), info, scroller, details);

  // Lane layout: pinned lanes under the ruler, fixed while the rest scrolls; folded lanes show
  // their header and top-level slices only (synthetic lanes: the header alone).
  const folded = lanes.map((l) => isSynthetic(l));
  const pinned = lanes.map(() => false);
  const laneTop = new Array(lanes.length).fill(0);
  const laneRows = new Array(lanes.length).fill(0);
  let order = [], pinnedH = 0, totalH = 0;
  const laneH = (li) => LANE_HEAD + laneRows[li] * ROW + 4;
  // Per-process lane groups (Perfetto's process tracks): the analysis' lane list names each lane's
  // process (GPU streams: their device); with two or more, a header above each run of a process'
  // lanes folds or unfolds them all. Without the list (a rank directory's lanes), no groups.
  const statLanes = (stats && stats.lanes) || [];
  const procKey = lanes.map((l, li) => {
    const sl = statLanes[li];
    return sl && sl.name === l.name && sl.pid !== undefined ? `${l.gpu ? 'gpu' : 'cpu'}:${sl.pid}` : null;
  });
  const grouped = procKey.every((k) => k !== null) && new Set(procKey).size > 1;
  const procLabel = (li) => {
    const l = lanes[li], pid = statLanes[li].pid;
    if (l.gpu) return `GPU ${pid}`;
    if (/\(pid Spans /.test(l.name)) return 'profiler spans';
    const m = procKey.map((k, j) => (k === procKey[li] ? /\(([^()]+)\) \(pid /.exec(lanes[j].name) : null)).find((x) => x);
    return `process ${pid}${m ? ` (${m[1]})` : ''}`;
  };
  let procHeads = [];  // {key, label, y, lanes}: the groups in drawing order (unpinned lanes)
  function layout() {
    lanes.forEach((l, li) => {
      laneRows[li] = folded[li] ? (isSynthetic(l) ? 0 : Math.min(1, l.rows.length)) : Math.max(1, l.rows.length);
    });
    order = [...lanes.keys()].filter((li) => pinned[li]).concat([...lanes.keys()].filter((li) => !pinned[li]));
    pinnedH = 0;
    for (const li of order) if (pinned[li]) pinnedH += laneH(li);
    let y = RULER + pinnedH;
    procHeads = [];
    for (const li of order) {
      if (pinned[li]) continue;
      if (grouped && (!procHeads.length || procHeads[procHeads.length - 1].key !== procKey[li])) {
        procHeads.push({ key: procKey[li], label: procLabel(li), y, lanes: [] });
        y += PROC_HEAD;
      }
      if (grouped) procHeads[procHeads.length - 1].lanes.push(li);
      laneTop[li] = y; y += laneH(li);
    }
    totalH = Math.min(y, 30000);
    placePinned();
  }
  function placePinned() {  // pinned lanes follow the scroll position
    let y = scroller.scrollTop + RULER;
    for (const li of order) if (pinned[li]) { laneTop[li] = y; y += laneH(li); }
  }
  // Device lanes on the first screen: when the CPU lanes above the first GPU lane would push it
  // out, the deepest CPU lanes start folded.
  layout();
  const firstGpu = lanes.findIndex((l) => l.gpu);
  const screenH = Math.min(window.innerHeight * 0.7, 700) - 60;
  if (firstGpu > 0) {
    const cpu = [...lanes.keys()].filter((li) => !lanes[li].gpu && !folded[li] && li < firstGpu)
      .sort((a, b) => lanes[b].rows.length - lanes[a].rows.length);
    for (const li of cpu) {
      if (laneTop[firstGpu] <= screenH) break;
      folded[li] = true;
      layout();
    }
  }

  const span = Math.max(1, data.end);
  const view = { t0: 0, t1: span };
  const dpr = window.devicePixelRatio || 1;
  let W = 0;
  const ctx = canvas.getContext('2d');
  let raf = 0;
  let colors = new Array(data.strings.length);
  const colorOf = (nm, gpu) => colors[nm] || (colors[nm] = hashColor(data.strings[nm], gpu));
  // Search: names matching the query (by string index); non-matching slices are drawn grey.
  let match = null, matchCount = 0;
  const DIM = '#dedee4';

  function resize() {
    layout();
    W = Math.max(300, scroller.clientWidth || container.clientWidth || 1000);
    canvas.width = W * dpr; canvas.height = totalH * dpr;
    canvas.style.width = W + 'px'; canvas.style.height = totalH + 'px';
    draw();
  }
  function schedule() { if (!raf) raf = requestAnimationFrame(() => { raf = 0; draw(); }); }

  function drawLane(li, t0, t1, scale) {  // returns the marks drawn
    const lane = lanes[li];
    const m = match;  // a local: read once per slice in the loop below
    let drawn = 0;
    const top = laneTop[li];
    ctx.fillStyle = lane.gpu ? '#eef6ee' : '#f4f4f8';
    ctx.fillRect(0, top, W, LANE_HEAD - 2);
    if (li > 0 && rankOf(lane.name) !== rankOf(lanes[li - 1].name) && !pinned[li]) {  // a rank directory: rule between ranks
      ctx.fillStyle = '#7a7a90';
      ctx.fillRect(0, top - 3, W, 2);
    }
    ctx.fillStyle = '#333';
    const hidden = lane.rows.length - laneRows[li];
    // A folded lane's summary: its busy time in view (top-level slices, clipped to the view) and,
    // when the header is all that shows, where in the view it was busy, as a strip.
    const busy = hidden > 0 ? busyInView(li, t0, t1) : null;
    ctx.fillText(`${folded[li] ? '▸' : '▾'} ${lane.gpu ? 'GPU' : 'CPU'} · ${lane.name} · ${lane.count.toLocaleString('en-US')} slice${lane.count === 1 ? '' : 's'}` +
      (hidden > 0 ? ` (folded: ${laneRows[li] ? 'top level only' : 'click to show'}; busy ${fmtNs(busy)}, ${(100 * busy / Math.max(1, t1 - t0)).toFixed(1)} % of the view)` : ''), 4, top + 8);
    if (hidden > 0 && !laneRows[li] && lane.rows.length) {
      const r = lane.rows[0];
      ctx.fillStyle = lane.gpu ? '#5a9a5a' : '#6a6a8a';
      let i = lowerBound(r.e, t0);
      while (i < r.s.length && r.s[i] < t1) {  // one mark per pixel, as drawLane's rows
        const xa = Math.max(0, Math.floor((r.s[i] - t0) * scale)), xb = Math.min(W, Math.max(xa + 1, (r.x[i] - t0) * scale));
        ctx.fillRect(xa, top + LANE_HEAD - 5, xb - xa, 3);
        i = Math.max(i + 1, firstAtOrAfter(r.s, t0 + Math.ceil(xb) / scale, i + 1));
      }
    }
    ctx.fillStyle = pinned[li] ? '#1f5fbf' : '#9a9aaa';
    ctx.fillText(pinned[li] ? 'unpin' : 'pin', W - PIN_W + 4, top + 8);
    for (let d = 0; d < laneRows[li]; d++) {
      const r = lane.rows[d];
      const ry = top + LANE_HEAD + d * ROW;
      let i = lowerBound(r.e, t0);
      let lastName = -1;
      while (i < r.s.length && r.s[i] < t1) {
        const x0 = (r.s[i] - t0) * scale, x1 = (r.e[i] - t0) * scale;
        const w = x1 - x0;
        const nm = r.n[i];
        if (nm !== lastName) { ctx.fillStyle = m !== null && !m[nm] ? DIM : colorOf(nm, lane.gpu); lastName = nm; }
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
    }
    return drawn;
  }

  // Busy time of a lane's top-level slices inside [t0, t1): prefix sums of their durations (built
  // once per lane), clipped at both ends, so a folded lane's summary costs O(log n) per frame.
  let prefix = new Array(lanes.length).fill(null);
  function busyInView(li, t0, t1) {
    const r = lanes[li].rows[0];
    if (!r || !r.s.length) return 0;
    let p = prefix[li];
    if (!p) {
      p = prefix[li] = new Float64Array(r.s.length + 1);
      for (let k = 0; k < r.s.length; k++) p[k + 1] = p[k] + (r.x[k] - r.s[k]);
    }
    const i0 = lowerBound(r.e, t0), i1 = firstAtOrAfter(r.s, t1, i0);
    if (i1 <= i0) return 0;
    let sum = p[i1] - p[i0];
    for (let k = i0; k < i1 && r.s[k] < t0; k++) sum -= Math.min(r.x[k], t0) - r.s[k];
    for (let k = i1 - 1; k >= i0 && r.x[k] > t1; k--) sum -= r.x[k] - Math.max(r.s[k], t1);
    return sum;
  }

  let ticks = [];
  function drawRuler(t0, t1, scale, top, gridBottom) {
    ctx.fillStyle = '#fafafc';
    ctx.fillRect(0, top, W, RULER);
    ctx.fillStyle = '#c8c8d4';
    ctx.fillRect(0, top + RULER - 1, W, 1);
    const step = tickStep(t1 - t0, W);
    ticks = [];
    ctx.fillStyle = '#444';
    for (let t = Math.ceil(t0 / step) * step; t <= t1; t += step) {
      const x = Math.round((t - t0) * scale) + 0.5;
      const label = tickLabel(t, step, Math.max(Math.abs(t0), Math.abs(t1)));
      ticks.push(label);
      ctx.fillRect(x, top + RULER - 7, 1, 6);
      ctx.fillText(label, x + 3, top + 8);
    }
    // Faint grid lines through the lanes at the same ticks.
    ctx.fillStyle = 'rgba(0,0,0,0.07)';
    for (let t = Math.ceil(t0 / step) * step; t <= t1; t += step) {
      ctx.fillRect(Math.round((t - t0) * scale), top + RULER, 1, gridBottom - top - RULER);
    }
  }

  function draw() {
    const t0 = view.t0, t1 = view.t1, scale = W / (t1 - t0);
    placePinned();
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, W, totalH);
    ctx.font = '11px system-ui, sans-serif';
    ctx.textBaseline = 'middle';
    const st = scroller.scrollTop;
    const vis0 = st + RULER + pinnedH - 4, vis1 = st + (scroller.clientHeight || 800) + 50;
    const counter = { drawn: 0 };
    for (const li of order) {
      if (pinned[li]) continue;
      const top = laneTop[li];
      if (top > vis1 || top + laneH(li) < vis0) continue;
      counter.drawn += drawLane(li, t0, t1, scale);
    }
    for (const g of procHeads) {
      if (g.y > vis1 || g.y + PROC_HEAD < vis0) continue;
      const open = g.lanes.some((li) => !folded[li]);
      ctx.fillStyle = '#dfe3ee';
      ctx.fillRect(0, g.y, W, PROC_HEAD - 1);
      ctx.fillStyle = '#1d2540';
      ctx.font = 'bold 11px system-ui, sans-serif';
      ctx.fillText(`${open ? '▾' : '▸'} ${g.label} · ${g.lanes.length} lane${g.lanes.length === 1 ? '' : 's'} (click: ${open ? 'fold' : 'unfold'} them all)`, 4, g.y + PROC_HEAD / 2);
      ctx.font = '11px system-ui, sans-serif';
    }
    // The fixed strip: ruler, then the pinned lanes, over whatever scrolled beneath them.
    ctx.clearRect(0, st, W, RULER + pinnedH);
    for (const li of order) if (pinned[li]) counter.drawn += drawLane(li, t0, t1, scale);
    if (pinnedH) { ctx.fillStyle = '#1f5fbf'; ctx.fillRect(0, st + RULER + pinnedH - 2, W, 2); }
    drawRuler(t0, t1, scale, st, Math.min(totalH, vis1));
    // Area selection: shaded outside the range, the selected lanes outlined.
    if (area) {
      const xa = (area.t0 - t0) * scale, xb = (area.t1 - t0) * scale;
      ctx.fillStyle = 'rgba(40,90,200,0.10)';
      ctx.fillRect(Math.max(0, xa), st, Math.max(1, Math.min(W, xb) - Math.max(0, xa)), totalH - st);
      ctx.strokeStyle = 'rgba(40,90,200,0.8)'; ctx.lineWidth = 1;
      for (const li of area.lanes) {
        if (laneTop[li] > vis1) continue;
        ctx.strokeRect(Math.max(0, xa) + 0.5, laneTop[li] + 0.5, Math.max(1, Math.min(W, xb) - Math.max(0, xa)) - 1, laneH(li) - 1);
      }
      ctx.fillStyle = 'rgba(40,90,200,0.9)';
      ctx.fillText(`selected ${fmtNs(area.t1 - area.t0)}`, Math.max(2, Math.min(W - 120, xa + 3)), st + RULER - 6);
    }
    // Flows: those of the selected slice always; all of them only when few enough are in view to
    // tell apart (zoomed out, thousands of launch -> kernel arrows paint a solid block).
    let flowsDrawn = 0, flowsInView = 0;
    const f = data.flows;
    if (selected && laneRows[selected.li] > selected.d) {
      const r = lanes[selected.li].rows[selected.d];
      const a = r.s[selected.i], b = r.x[selected.i];
      ctx.strokeStyle = '#111'; ctx.lineWidth = 2;
      const x0 = (a - t0) * scale, y0 = laneTop[selected.li] + LANE_HEAD + selected.d * ROW;
      ctx.strokeRect(Math.max(-2, x0), y0, Math.max(2, Math.min(W + 4, (b - t0) * scale) - Math.max(-2, x0)), ROW - 1);
    }
    if (selected) {
      const r = lanes[selected.li].rows[selected.d];
      const a = r.s[selected.i], b = r.x[selected.i];
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
    range.textContent = `${fmtNs(Math.max(0, t0))} – ${fmtNs(t1)} since trace start (window ${fmtNs(t1 - t0)}, ${counter.drawn.toLocaleString('en-US')} marks)${flowNote}`;
    canvas.dataset.t0 = String(t0); canvas.dataset.t1 = String(t1); canvas.dataset.drawn = String(counter.drawn);
    canvas.dataset.flowsDrawn = String(flowsDrawn); canvas.dataset.flowsInView = String(flowsInView);
    canvas.dataset.ticks = ticks.join('|');
    if (data.tile) {
      canvas.dataset.held = String(data.tile.held);
      canvas.dataset.tile = `${data.tile.t0}-${data.tile.t1}@${data.tile.px}${data.tile.exact ? ' exact' : ''}`;
    }
    if (opts.onView) opts.onView(t0, t1, W);
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
  function reset() { view.t0 = 0; view.t1 = span; schedule(); }

  // ---- mouse: wheel zooms, shift+drag pans, drag selects an area, click selects a slice ----
  canvas.addEventListener('wheel', (e) => {
    e.preventDefault();
    if (e.shiftKey || Math.abs(e.deltaX) > Math.abs(e.deltaY)) { panBy(-(e.shiftKey ? e.deltaY : e.deltaX)); return; }
    zoomAt(e.offsetX, Math.exp(e.deltaY * 0.002));
  }, { passive: false });
  let drag = null, wasDrag = false, area = null;
  let mouseX = null;
  const timeAt = (x) => view.t0 + (x / W) * (view.t1 - view.t0);
  canvas.addEventListener('mousedown', (e) => {
    canvas.focus({ preventScroll: true });
    drag = { x: e.clientX, x0: e.offsetX, y0: e.offsetY, moved: 0, pan: e.shiftKey || e.button === 1 };
  });
  window.addEventListener('mouseup', (e) => {
    if (drag && !drag.pan && drag.moved > 3) {
      const r = canvas.getBoundingClientRect();
      selectArea(drag.x0, drag.y0, e.clientX - r.left, e.clientY - r.top);
    }
    wasDrag = !!drag && drag.moved > 3; drag = null;
  });
  canvas.addEventListener('mousemove', (e) => {
    mouseX = e.offsetX;
    if (drag) {
      drag.moved += Math.abs(e.clientX - drag.x);
      if (drag.pan) panBy(e.clientX - drag.x);
      else if (drag.moved > 3) {
        const ta = timeAt(Math.min(drag.x0, e.offsetX)), tb = timeAt(Math.max(drag.x0, e.offsetX));
        area = { t0: ta, t1: tb, lanes: lanesIn(drag.y0, e.offsetY) };
        schedule();
      }
      drag.x = e.clientX;
      return;
    }
    const hit = hitTest(e.offsetX, e.offsetY);
    info.textContent = hit ? describe(hit) : (selected ? 'Selected: ' + describe(selected) : HELP);
  });
  canvas.addEventListener('mouseleave', () => { mouseX = null; });
  canvas.addEventListener('click', (e) => {
    if (e.detail > 1 || wasDrag) return;
    const g = procHeadAt(e.offsetY);
    if (g) {
      const fold = g.lanes.some((li) => !folded[li]);
      for (const li of g.lanes) folded[li] = fold;
      resize();
      return;
    }
    const head = headerAt(e.offsetY);
    if (head !== null) {
      if (e.offsetX >= W - PIN_W) pinned[head] = !pinned[head];
      else folded[head] = !folded[head];
      resize();
      return;
    }
    const hit = hitTest(e.offsetX, e.offsetY);
    area = null;
    select(hit);
  });
  canvas.addEventListener('dblclick', reset);
  resetBtn.addEventListener('click', reset);
  foldAll.addEventListener('click', () => { folded.fill(true); resize(); });
  openAll.addEventListener('click', () => { folded.fill(false); resize(); });
  flowsBox.addEventListener('change', schedule);
  scroller.addEventListener('scroll', schedule);
  window.addEventListener('resize', resize);

  // ---- keyboard: W/S zoom at the pointer (else the centre), A/D pan a fifth of the window ----
  window.addEventListener('keydown', (e) => {
    if (!canvas.isConnected || canvas.offsetParent === null) return;
    const tag = (e.target && e.target.tagName) || '';
    if (tag === 'INPUT' || tag === 'TEXTAREA' || tag === 'SELECT' || e.ctrlKey || e.metaKey || e.altKey) return;
    const x = mouseX !== null ? mouseX : W / 2;
    const k = e.key.toLowerCase();
    if (k === 'w') zoomAt(x, 0.7);
    else if (k === 's') zoomAt(x, 1 / 0.7);
    else if (k === 'a') panBy(W / 5);
    else if (k === 'd') panBy(-W / 5);
    else if (k === 'escape') { area = null; select(null); }
    else return;
    e.preventDefault();
  });

  function procHeadAt(yy) {
    if (yy < scroller.scrollTop + RULER + pinnedH) return null;
    return procHeads.find((g) => yy >= g.y && yy < g.y + PROC_HEAD) || null;
  }
  function headerAt(yy) {
    const st = scroller.scrollTop;
    if (yy < st + RULER) return null;
    const inFixed = yy < st + RULER + pinnedH;
    for (const li of order) {
      if (pinned[li] === inFixed && yy >= laneTop[li] && yy < laneTop[li] + LANE_HEAD) return li;
    }
    return null;
  }
  // The lanes a drag from y0 to y1 covers (on the ruler: every lane).
  function lanesIn(y0, y1) {
    const st = scroller.scrollTop;
    if (Math.min(y0, y1) < st + RULER) return [...lanes.keys()];
    const lo = Math.min(y0, y1), hi = Math.max(y0, y1);
    return order.filter((li) => laneTop[li] < hi && laneTop[li] + laneH(li) > lo);
  }
  function hitTest(x, yy) {
    const t = timeAt(x);
    const tol = 2 * (view.t1 - view.t0) / W;
    const inFixed = yy < scroller.scrollTop + RULER + pinnedH;
    for (const li of order) {
      if (pinned[li] !== inFixed) continue;
      const d = Math.floor((yy - laneTop[li] - LANE_HEAD) / ROW);
      if (yy < laneTop[li] + LANE_HEAD || d >= laneRows[li]) continue;
      const r = lanes[li].rows[d];
      if (!r) continue;
      const i = lowerBound(r.e, t - tol);
      if (i < r.s.length && r.s[i] <= t + tol) return { li, d, i };
    }
    return null;
  }
  function flowsOf(h) {
    const r = lanes[h.li].rows[h.d];
    const a = r.s[h.i], b = r.x[h.i];
    const f = data.flows, out = [];
    for (let k = 0; k < f.length; k += 4) {
      if (f[k] === h.li && f[k + 1] >= a && f[k + 1] <= b) out.push({ out: true, lane: f[k + 2], t: f[k + 3] });
      else if (f[k + 2] === h.li && f[k + 3] >= a && f[k + 3] <= b) out.push({ out: false, lane: f[k], t: f[k + 1] });
    }
    return out;
  }
  function describe(h) {
    const r = lanes[h.li].rows[h.d];
    const a = r.s[h.i], b = r.x[h.i];
    const nflows = flowsOf(h).length;
    if (r.c && r.c[h.i] > 1) {  // a serve tile's run of merged sub-pixel slices
      return `${r.c[h.i].toLocaleString('en-US')} slices merged (each under a pixel): busy ${fmtNs(r.b[h.i])} of ${fmtNs(b - a)} from +${fmtNs(a)} (${lanes[h.li].name}); zoom in for each slice`;
    }
    return `${data.strings[r.n[h.i]]} — starts +${fmtNs(a)} after the trace start, lasts ${fmtNs(b - a)} (${lanes[h.li].name})` +
      (nflows ? `, ${nflows} flow${nflows > 1 ? 's' : ''}` : '');
  }

  // ---- the slice under a time on a lane, parents, launching op ----
  // Deepest slice of lane li containing time t (at depth <= maxD), or null.
  function sliceAt(li, t, maxD = Infinity) {
    const rows = lanes[li].rows;
    for (let d = Math.min(rows.length - 1, maxD); d >= 0; d--) {
      const r = rows[d];
      let i = lowerBound(r.s, t) - 1;
      // a slice ending before t may hide a longer one before it only when ends were clamped
      if (i >= 0 && r.x[i] >= t) return { li, d, i };
    }
    return null;
  }
  function parents(h) {
    const out = [];
    const t = lanes[h.li].rows[h.d].s[h.i];
    for (let p = h.d > 0 ? sliceAt(h.li, t, h.d - 1) : null; p; p = p.d > 0 ? sliceAt(h.li, t, p.d - 1) : null) out.push(p);
    return out;
  }
  const nameOf = (h) => data.strings[lanes[h.li].rows[h.d].n[h.i]];
  // A kernel's launch: the slice at the source end of a flow into it, and the op and module
  // enclosing that launch on its CPU thread.
  function launchOf(h) {
    if (!lanes[h.li].gpu) return null;
    const fin = flowsOf(h).find((fl) => !fl.out && !lanes[fl.lane].gpu);
    if (!fin) return null;
    const launch = sliceAt(fin.lane, fin.t);
    if (!launch) return null;
    const chain = [launch, ...parents(launch)];
    const op = chain.find((p) => !RUNTIME.test(nameOf(p)) && !/^nn\.Module|^## |^ProfilerStep/.test(nameOf(p)));
    const mod = chain.find((p) => /^nn\.Module:|^## /.test(nameOf(p)));
    return { launch, op, mod };
  }
  // The slice's index among its lane's slices as sent (the args columns' order).
  function sentIndex(h) {
    const depth = lanes[h.li].depth;
    if (!depth) return -1;  // a serve tile: no args sent
    for (let j = 0, k = 0; j < depth.length; j++) if (depth[j] === h.d && k++ === h.i) return j;
    return -1;
  }

  function reveal(h) {  // unfold its lane if needed, scroll it into view, centre it in time
    if (h.d >= laneRows[h.li]) { folded[h.li] = false; resize(); }
    const r = lanes[h.li].rows[h.d];
    const a = r.s[h.i], b = r.x[h.i];
    const w = view.t1 - view.t0;
    if (b - a > w * 0.8 || a < view.t0 || b > view.t1) {
      const nw = Math.max(w > (b - a) * 1.25 ? w : (b - a) * 3, 1000);
      view.t0 = (a + b) / 2 - nw / 2; view.t1 = view.t0 + nw;
    }
    if (!pinned[h.li]) {
      const y = laneTop[h.li] + LANE_HEAD + h.d * ROW;
      const st = scroller.scrollTop, vh = scroller.clientHeight || 600;
      if (y < st + RULER + pinnedH || y + ROW > st + vh) scroller.scrollTop = Math.max(0, y - RULER - pinnedH - 40);
    }
  }
  const link = (h, text) => el('a', { href: '#', 'data-slice': `${h.li}:${h.d}:${h.i}`,
    onclick: (e) => { e.preventDefault(); select(h, true); } }, text);

  function select(h, jump = false) {
    selected = h;
    canvas.dataset.selected = h ? nameOf(h) : '';
    info.textContent = h ? 'Selected: ' + describe(h) : HELP;
    if (h && jump) reveal(h);
    showDetails();
    schedule();
  }

  function showDetails() {
    details.replaceChildren();
    if (area) { details.append(aggregate()); return; }
    if (!selected) return;
    const h = selected;
    const lane = lanes[h.li], r = lane.rows[h.d];
    const a = r.s[h.i], b = r.x[h.i];
    const rows = [
      ['Name', nameOf(h)], ['Lane', `${lane.gpu ? 'GPU' : 'CPU'} · ${lane.name}`],
      ['Start', `+${fmtNs(a)} after the trace start`], ['Duration', fmtNs(b - a)],
      ['Self', fmtNs(selfOf(h.li, h.d, h.i))], ['Depth', String(h.d)],
    ];
    if (r.c && r.c[h.i] > 1) rows.push(['Merged', `${r.c[h.i].toLocaleString('en-US')} slices under a pixel each, busy ${fmtNs(r.b[h.i])}: zoom in for each`]);
    const idx = sentIndex(h);
    const args = idx >= 0 ? sliceArgs(data, lane, idx) : [];
    const table = el('table', { class: 'tl-args', 'data-testid': 'timeline-args' },
      el('tbody', {}, rows.map(([k, v]) => el('tr', {}, el('th', {}, k), el('td', {}, v))),
        args.length ? el('tr', {}, el('th', { colspan: 2, class: 'tl-sub' }, 'Args')) : null,
        args.map(([k, v]) => el('tr', { 'data-arg': k }, el('th', {}, k), el('td', {}, shortNumber(v))))));
    details.append(table);
    const launch = launchOf(h);
    if (launch) {
      details.append(el('div', { 'data-testid': 'timeline-launch' }, el('b', {}, 'Launched by: '),
        launch.op ? link(launch.op, nameOf(launch.op)) : '(no op around the launch)',
        ' via ', link(launch.launch, nameOf(launch.launch)),
        launch.mod ? [' in module ', link(launch.mod, nameOf(launch.mod))] : '',
        ` (${lanes[launch.launch.li].name})`));
    }
    const ps = parents(h);
    if (ps.length) {
      details.append(el('div', { 'data-testid': 'timeline-parents' }, el('b', {}, 'Parents: '),
        ps.flatMap((p, k) => [k ? ' ‹ ' : '', link(p, nameOf(p))])));
    }
    const fl = flowsOf(h);
    if (fl.length) {
      details.append(el('div', { 'data-testid': 'timeline-flow-list' }, el('b', {}, `Flows (${fl.length}): `),
        fl.slice(0, 50).flatMap((x, k) => {
          const other = sliceAt(x.lane, x.t);
          const label = `${x.out ? '→' : '←'} ${other ? nameOf(other) : fmtNs(x.t)} on ${lanes[x.lane].name}`;
          return [k ? ' · ' : '', other ? link(other, label) : label];
        }), fl.length > 50 ? ` · ${fl.length - 50} more` : ''));
    }
  }

  // Self time: the duration minus the parts of its children (one depth down) inside it.
  function selfOf(li, d, i) {
    const rows = lanes[li].rows;
    const a = rows[d].s[i], b = rows[d].x[i];
    let self = b - a;
    const c = rows[d + 1];
    if (!c) return self;
    for (let j = firstAtOrAfter(c.s, a, 0); j < c.s.length && c.s[j] < b; j++) self -= Math.min(c.x[j], b) - c.s[j];
    return Math.max(0, self);
  }

  // ---- area selection: per name over the slices of the chosen lanes that overlap the range ----
  function selectArea(x0, y0, x1, y1) {
    const ta = timeAt(Math.min(x0, x1)), tb = timeAt(Math.max(x0, x1));
    setArea(ta, tb, lanesIn(y0, y1));
  }
  function setArea(ta, tb, laneList) {
    // Whole nanoseconds, outward: the range a reader (or a test) can state exactly.
    area = { t0: Math.floor(ta), t1: Math.ceil(tb), lanes: laneList };
    selected = null; canvas.dataset.selected = '';
    showDetails();
    schedule();
  }
  // Like Perfetto's area selection: every slice (all depths, folded rows too) that overlaps the
  // range counts whole: count, total and self duration, mean. `inRange`: the part of those slices
  // inside the range (what the selection itself spends on each name).
  function aggregateRows() {
    const by = new Map();
    let count = 0;
    for (const li of area.lanes) {
      lanes[li].rows.forEach((r, d) => {
        for (let i = lowerBound(r.e, area.t0); i < r.s.length && r.s[i] < area.t1; i++) {
          const dur = r.x[i] - r.s[i];
          if (!(r.x[i] > area.t0) && !(dur === 0 && r.s[i] >= area.t0)) continue;
          const nm = r.n[i];
          let g = by.get(nm);
          if (!g) by.set(nm, g = { name: data.strings[nm], count: 0, total: 0, self: 0, inRange: 0 });
          g.count++; g.total += dur; g.self += selfOf(li, d, i); count++;
          g.inRange += Math.max(0, Math.min(r.x[i], area.t1) - Math.max(r.s[i], area.t0));
        }
      });
    }
    return { rows: [...by.values()].sort((x, y) => y.total - x.total || x.name.localeCompare(y.name)), count };
  }
  function aggregate() {
    const { rows, count } = aggregateRows();
    const box = el('div', { 'data-testid': 'timeline-aggregate' });
    box.append(el('div', { 'data-testid': 'timeline-area-summary' },
      el('b', {}, `Selected ${fmtNs(area.t1 - area.t0)}`),
      ` (+${fmtNs(Math.max(0, area.t0))} to +${fmtNs(area.t1)}) on ${area.lanes.length} lane${area.lanes.length === 1 ? '' : 's'}: ` +
      `${count.toLocaleString('en-US')} slices of ${rows.length.toLocaleString('en-US')} names overlap it. Total, self and mean count each slice whole (Perfetto's definition); in range: only its part inside the selection. Esc clears.`));
    const shown = rows.slice(0, 200);
    box.append(el('table', { class: 'tl-agg' },
      el('thead', {}, el('tr', {}, ['Name', 'Count', 'Total', 'Self', 'Mean', 'In range'].map((h) => el('th', {}, h)))),
      el('tbody', {}, shown.map((g) => el('tr', { 'data-name': g.name, 'data-count': g.count, 'data-total-ns': g.total, 'data-self-ns': g.self, 'data-in-range-ns': g.inRange },
        el('td', { title: g.name }, g.name), el('td', {}, g.count.toLocaleString('en-US')), el('td', {}, fmtNs(g.total)),
        el('td', {}, fmtNs(g.self)), el('td', {}, fmtNs(g.total / g.count)), el('td', {}, fmtNs(g.inRange)))))));
    if (rows.length > shown.length) box.append(el('p', { class: 'muted' }, `${rows.length - shown.length} more names (smaller totals) not listed.`));
    return box;
  }

  // ---- search ----
  let cursor = null;  // the current match
  function setQuery(q) {
    q = q.trim();
    cursor = null;
    if (!q) { match = null; matchCount = 0; searchInfo.textContent = ''; canvas.dataset.matches = ''; schedule(); return; }
    let re;
    const m = /^\/(.*)\/([a-z]*)$/.exec(q);
    try { re = m ? new RegExp(m[1], m[2].includes('i') ? 'i' : '') : null; } catch (err) { searchInfo.textContent = `bad regex: ${err.message}`; return; }
    const needle = q.toLowerCase();
    match = new Uint8Array(data.strings.length);
    for (let k = 0; k < data.strings.length; k++) {
      const s = data.strings[k];
      match[k] = re ? re.test(s) : s.toLowerCase().includes(needle);
    }
    matchCount = 0;
    for (const lane of lanes) for (const r of lane.rows) for (let i = 0; i < r.n.length; i++) matchCount += match[r.n[i]];
    searchInfo.textContent = `${matchCount.toLocaleString('en-US')} match${matchCount === 1 ? '' : 'es'}`;
    canvas.dataset.matches = String(matchCount);
    schedule();
  }
  // The next (dir 1) or previous (-1) matching slice in time order after the cursor (ties: lane,
  // then depth).
  function step(dir) {
    if (!match || !matchCount) return null;
    const key = (h) => [lanes[h.li].rows[h.d].s[h.i], h.li, h.d];
    const cmp = (x, y) => x[0] - y[0] || x[1] - y[1] || x[2] - y[2];
    const cur = cursor ? key(cursor) : (dir > 0 ? [-Infinity, -1, -1] : [Infinity, 1e9, 1e9]);
    let best = null, bestKey = null;
    lanes.forEach((lane, li) => lane.rows.forEach((r, d) => {
      if (dir > 0) {
        for (let i = firstAtOrAfter(r.s, cur[0], 0); i < r.s.length; i++) {
          if (!match[r.n[i]]) continue;
          const k = [r.s[i], li, d];
          if (cmp(k, cur) <= 0) continue;
          if (!best || cmp(k, bestKey) < 0) { best = { li, d, i }; bestKey = k; }
          break;
        }
      } else {
        for (let i = lowerBound(r.s, cur[0]) - 1; i >= 0; i--) {
          if (!match[r.n[i]]) continue;
          const k = [r.s[i], li, d];
          if (cmp(k, cur) >= 0) continue;
          if (!best || cmp(k, bestKey) > 0) { best = { li, d, i }; bestKey = k; }
          break;
        }
      }
    }));
    if (!best) return null;
    cursor = best;
    select(best, true);
    return best;
  }
  let searchTimer = 0;
  searchBox.addEventListener('input', () => { clearTimeout(searchTimer); searchTimer = setTimeout(() => setQuery(searchBox.value), 150); });
  searchBox.addEventListener('keydown', (e) => {
    if (e.key !== 'Enter') return;
    clearTimeout(searchTimer);
    if (!match) setQuery(searchBox.value);
    step(e.shiftKey ? -1 : 1);
  });
  nextBtn.addEventListener('click', () => { if (!match) setQuery(searchBox.value); step(1); });
  prevBtn.addEventListener('click', () => { if (!match) setQuery(searchBox.value); step(-1); });

  function setData(d) {  // a new tile: same lanes, other slices
    data = d; lanes = d.lanes;
    colors = new Array(data.strings.length);
    prefix = new Array(lanes.length).fill(null);
    selected = null; cursor = null;
    if (match) setQuery(searchBox.value);
    layout();
    schedule();
  }
  resize();
  const api = { setData, view: () => ({ ...view }), panBy, zoomAt, draw, lanes: lanes.length, stats,
    select: (h) => { selected = h; draw(); }, hitTest, laneTop, flows: data.flows,
    laneNames: lanes.map((l) => l.name), laneSlices: lanes.map((l) => l.count),
    begin: data.begin, setView: (t0, t1) => { view.t0 = t0; view.t1 = t1; draw(); },
    setArea: (t0, t1, laneList) => setArea(t0, t1, laneList), areaRange: () => area && { t0: area.t0, t1: area.t1, lanes: [...area.lanes] }, aggregate: () => (area ? aggregateRows() : null),
    search: (q) => { searchBox.value = q; setQuery(q); return matchCount; }, next: () => step(1), prev: () => step(-1),
    fold: (li, v) => { folded[li] = v; resize(); }, pin: (li, v) => { pinned[li] = v; resize(); },
    unfoldAll: () => { folded.fill(false); resize(); }, folded: () => [...folded], pinned: () => [...pinned],
    selectSlice: (h) => select(h, true), selected: () => selected, ticks: () => [...ticks],
    laneGpu: lanes.map((l) => l.gpu), rowHeight: ROW, laneHead: LANE_HEAD,
    rows: (li) => lanes[li].rows, laneRows: () => [...laneRows], strings: data.strings,
    busyInView: (li) => busyInView(li, view.t0, view.t1),
    processGroups: () => procHeads.map((g) => ({ label: g.label, y: g.y, lanes: [...g.lanes] })) };
  window.mlprofTimeline = api;
  return api;
}
