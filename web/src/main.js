// mlprof's front end: the same code draws a self-contained report (data embedded in the page)
// and the `mlprof serve` dashboard (data from the REST API, refreshed when trace files change).
import './style.css';
import { el, fmtNs, fmtBytes, unavailable, note, setOrigin, getOrigin } from './util.js';
import { dataTable } from './table.js';
import { cards, renderGeneric } from './generic.js';
import { renderFlame } from './flame.js';
import { base64Bytes, decodeEvents, renderTimeline, tileData } from './timeline.js';
import { barChart, lineChart } from './charts.js';
import { overview } from './overview.js';
import { inputTabs } from './inputs.js';
import { rankGroups } from './rank_groups.js';
import { roofline } from './roofline.js';
import { missing, operators, kernels, memory, gpu, modules, graphs, compile, criticalPath, criticalPathShown, ranks } from './views.js';

const TABS = [
  ['overview', 'Overview'], ['operators', 'Operators'], ['kernels', 'Kernels'],
  ['timeline', 'Timeline'], ['flame', 'Flame graph'], ['memory', 'Memory'],
  ['gpu', 'GPU metrics'], ['roofline', 'Roofline'], ['modules', 'Modules'], ['graphs', 'CUDA graphs'], ['compile', 'torch.compile'],
  ['critical_path', 'Critical path'], ['ranks', 'Ranks'], ['compare', 'Compare'],
];
// Tabs shown only when their analysis has something to show.
const OPTIONAL = {
  compile: (r) => r && !unavailable(r),
  modules: (r) => r && !unavailable(r),
  critical_path: async (r, src) => criticalPathShown(r, await src.get('summary')),
  roofline: (r) => r && !unavailable(r),
  graphs: (r) => r && !unavailable(r) && ((r.replays || []).length > 0 || (r.captures || []).length > 0),
};

// ---- data sources -------------------------------------------------------------------------

class EmbeddedSource {
  constructor(data) {
    this.data = data;
    this.rankSet = !!data.ranks && !unavailable(data.ranks);  // a report of a rank directory
  }
  async get(name) {
    const a = this.data.analyses || {};
    if (name === 'ranks') return this.data.ranks ?? a.ranks ?? { unavailable: 'One trace: the Ranks tab needs a directory of rank traces (mlprof report DIR).' };
    if (name === 'compare') return this.data.compare ?? { unavailable: 'Compare needs two traces: mlprof report BASE NEW -o r.html.' };
    return a[name] ?? { unavailable: `This report was made without the ${name} analysis.` };
  }
  async events() {
    const node = document.getElementById('mlprof-events');
    if (!node || !node.textContent.trim()) return null;
    return decodeEvents(base64Bytes(node.textContent.trim()));
  }
}

class RestSource {
  constructor(trace, base) { this.trace = trace; this.base = base; this.cache = new Map(); }
  async get(name) {
    if (this.cache.has(name)) return this.cache.get(name);
    let url = `api/profiler/${name}?trace=${encodeURIComponent(this.trace)}`;
    if (name === 'compare') {
      if (!this.base) return { unavailable: 'Pick a base trace above to compare against.' };
      url = `api/profiler/compare?base=${encodeURIComponent(this.base)}&new=${encodeURIComponent(this.trace)}`;
    }
    const p = fetch(url).then(async (r) => {
      const body = await r.json().catch(() => ({}));
      if (!r.ok) return { unavailable: body.error || `HTTP ${r.status}` };
      return body;
    });
    this.cache.set(name, p);
    return p;
  }
  // The critical path of ProfilerStep#step (the tab's step selector).
  async criticalPathOf(step) {
    const key = `critical_path#step=${step}`;
    if (!this.cache.has(key)) {
      this.cache.set(key, fetch(`api/profiler/critical_path?trace=${encodeURIComponent(this.trace)}&step=${encodeURIComponent(step)}`)
        .then(async (r) => {
          const body = await r.json().catch(() => ({}));
          return r.ok ? body : { unavailable: body.error || `HTTP ${r.status}` };
        }));
    }
    return this.cache.get(key);
  }
  async events() {
    const r = await fetch(`api/profiler/timeline/events?trace=${encodeURIComponent(this.trace)}`);
    if (!r.ok) return null;
    return decodeEvents(new Uint8Array(await r.arrayBuffer()));
  }
  // A level-of-detail tile of [t0, t1) ns from the timeline's start, px pixels wide: the
  // dashboard's timeline holds one screen's marks, never the whole trace.
  async tile(t0, t1, px) {
    const q = `trace=${encodeURIComponent(this.trace)}&t0=${Math.floor(t0)}&t1=${Math.ceil(t1)}&px=${Math.round(px)}`;
    const r = await fetch(`api/profiler/timeline/tiles?${q}`);
    if (!r.ok) return null;
    return r.json();
  }
}

// The dashboard's timeline: a tile three screens wide around the view, fetched again once the
// view leaves it or needs a finer one (after zooming in), 150 ms after the view settles.
async function tiledTimeline(holder, src, t) {
  const span = Math.max(1, t.end_ns - t.begin_ns);
  const width = Math.max(300, holder.clientWidth || 1000);
  const first = await src.tile(0, span, Math.min(16384, width));
  if (!first) return false;
  let cur = first, timer = 0, seq = 0, api = null;
  const onView = (t0, t1, W) => {
    const need = (t1 - t0) / W;  // ns per pixel of the view
    const inside = t0 >= cur.t0 && t1 <= cur.t1;
    if (inside && (cur.exact || (cur.t1 - cur.t0) / cur.px <= need * 1.5)) return;
    clearTimeout(timer);
    timer = setTimeout(async () => {
      const w = t1 - t0, a = Math.max(0, t0 - w), b = Math.min(span, t1 + w);
      const mine = ++seq;
      const tile = await src.tile(a, Math.max(b, a + 1), Math.min(16384, Math.max(1, W * (b - a) / w)));
      if (!tile || mine !== seq) return;
      cur = tile;
      api.setData(tileData(tile));
    }, 150);
  };
  api = renderTimeline(holder, tileData(first), t, { onView });
  return true;
}

// ---- tabs ---------------------------------------------------------------------------------


async function timeline(c, src) {
  const t = await src.get('timeline');
  if (missing(c, t, 'Timeline')) return;
  c.append(cards(t, 'timeline', ['cpu_busy_ns', 'gpu_busy_ns', 'overlap_ns', 'gpu_idle_ns',
    'gpu_busy_overlapped_pct', 'slices', 'flows'].filter((k) => k in t)));
  const tr = src.data && src.data.timeline_ranks;
  if (tr && tr.ranks && tr.ranks.length) {
    const steps = tr.steps || [];
    c.append(el('p', { class: 'note', 'data-testid': 'timeline-ranks' },
      `Rank directory: the lanes of ${tr.ranks.length} ranks (${tr.ranks.join(', ')})` +
      (tr.ranks_left_out ? `, ${tr.ranks_left_out} more left out` : '') +
      (steps.length ? `, over step${steps.length > 1 ? 's' : ''} ${steps.length > 1 ? steps[0] + '–' + steps[steps.length - 1] : steps[0]}; ` +
        `each rank is aligned at its own start of step ${steps[0]} (machines' clocks differ)` : ', each from its own start') +
      `. Window ${fmtNs(tr.window_ns)}, ${tr.slices.toLocaleString('en-US')} slices. The numbers above are those of the rank analyzed in depth.`));
  }
  const holder = el('div', { class: 'tl-holder' });
  c.append(holder);
  // Serve: a big trace's timeline is drawn from tiles (mlprof serve --tiles-above N), so the page
  // holds a few screens of marks; a smaller one gets every slice, with flows and args.
  const tilesAbove = window.mlprofData && window.mlprofData.tiles_above;
  if (src instanceof RestSource && typeof tilesAbove === 'number' && 'end_ns' in t && (t.slices ?? 0) > tilesAbove &&
      await tiledTimeline(holder, src, t)) {
    c.append(el('p', { class: 'note', 'data-testid': 'timeline-tiled' },
      `${(t.slices ?? 0).toLocaleString('en-US')} slices: drawn from level-of-detail tiles (runs of slices under a pixel merged; zoom in for each slice). Flows and args are not shown in this mode.`));
    if (t.lanes) c.append(el('h3', {}, 'Lanes'), dataTable(t.lanes, { id: 'timeline.lanes' }));
    return;
  }
  const ev = await src.events();
  performance.mark('mlprof:events-decoded');
  if (!ev) { holder.append(note('The event data for the timeline is not in this page.')); return; }
  renderTimeline(holder, ev, t);
  if (t.lanes) c.append(el('h3', {}, 'Lanes'), dataTable(t.lanes, { id: 'timeline.lanes' }));
}

async function flame(c, src) {
  const f = await src.get('flame');
  if (missing(c, f, 'Flame graph')) return;
  renderFlame(c, f);
}

// The step change's causes on the critical path (not the waits), and the waits with what they
// waited for: the same rows and numbers as `mlprof compare`'s text.
function compareCauses(r) {
  const a = r.attribution;
  if (!a) return [];
  const out = [];
  const sign = (ns) => (ns > 0 ? '+' : '') + fmtNs(ns);
  const stepDelta = (r.new?.step_mean_ns ?? 0) - (r.base?.step_mean_ns ?? 0);
  const causes = (a.causes || []).filter((c) => !c.wait && c.delta_ns !== 0 &&
    (r.speedup_basis !== 'step mean' || (c.delta_ns > 0) === (stepDelta > 0))).slice(0, 3);
  if (causes.length) {
    out.push(el('div', { class: 'verdict-sub', 'data-testid': 'compare-causes' },
      'Causes (critical path per step): ' + causes.map((c) => `${c.name} ${sign(c.delta_ns)}`).join(', ')));
  }
  for (const y of a.symptoms || []) {
    out.push(el('div', { class: 'verdict-sub', 'data-testid': 'compare-symptom' },
      `A wait (symptom): ${y.name} ${sign(y.delta_per_step_ns)} per step` +
      (y.waits_for.length ? `, waits for ${y.waits_for.join(', ')}` : '')));
  }
  return out;
}

async function compare(c, src) {
  const r = await src.get('compare');
  if (missing(c, r, 'Compare')) return;
  if (typeof r.overall_speedup === 'number' && r.overall_speedup > 0) {
    const x = r.overall_speedup;
    const by = r.speedup_basis ? ` (${r.speedup_basis})` : '';
    const sig = typeof r.step_p_value === 'number' ? `, p = ${r.step_p_value.toPrecision(2)}${r.step_regression ? ': a significant regression' : ''}` : '';
    c.append(el('div', { class: 'verdict', 'data-testid': 'compare-verdict' }, el('div', { class: 'verdict-line' },
      x >= 1 ? `The new run is ${x.toFixed(2)}x faster${by}${sig}.` : `The new run is ${(1 / x).toFixed(2)}x slower${by}${sig}.`),
      el('div', { class: 'verdict-sub' }, `${r.regressions ?? 0} ops regressed, ${r.improvements ?? 0} improved` +
        (r.worst_regression ? `; worst: ${r.worst_regression} (+${Number(r.worst_regression_pct).toFixed(1)} % per step)` : '')),
      ...compareCauses(r)));
  }
  c.append(renderGeneric(r, 'compare'));
}

// The dashboard's Ranks tab: the served directory's traces grouped by job, one job analysed.
const ranksTab = (c, src) => (src instanceof RestSource ? rankGroups(c) : ranks(c, src));
const RENDER = { overview, operators, kernels, timeline, flame, memory, gpu, roofline, modules, graphs, compile, critical_path: criticalPath, ranks: ranksTab, compare };

// ---- shell --------------------------------------------------------------------------------

function buildTabs(root, src, initial) {
  const nav = el('nav', { class: 'tabs', role: 'tablist' });
  const panes = el('div', { class: 'panes' });
  const done = new Map();
  let current = null;
  setOrigin(null);  // a new trace: its own start time
  async function show(id) {
    current = id;
    for (const b of nav.children) b.classList.toggle('active', b.dataset.tab === id);
    for (const p of panes.children) p.hidden = p.dataset.pane !== id;
    const pane = panes.querySelector(`[data-pane="${id}"]`);
    if (!done.has(id)) {
      const p = (async () => {
        try {
          if (getOrigin() === null) { const sum = await src.get('summary'); if (sum && !unavailable(sum)) setOrigin(sum.begin_ns, sum.span_ns); }
          await RENDER[id](pane, src);
        } catch (e) {
          pane.append(note(`Could not draw this tab: ${e.message}`, 'error'));
          console.error(e);
        }
        pane.dataset.ready = '1';
        performance.mark('mlprof:ready:' + id);
      })();
      done.set(id, p);
    }
    await done.get(id);
    if (location.hash !== '#' + id) history.replaceState(null, '', '#' + id);
  }
  // Tabs that cannot apply to the input (a compile log, a memory snapshot) are hidden.
  const allowed = inputTabs(src).catch(() => null);
  // The dashboard's Ranks tab is about the directory, not the selected trace: always there.
  const applies = async (id) => { const a = await allowed; return !a || a.has(id) || (id === 'ranks' && src instanceof RestSource); };
  const settled = [];
  let drawnFirst;
  const firstDrawn = new Promise((res) => { drawnFirst = res; });
  for (const [id, label] of TABS) {
    const button = el('button', { class: 'tab', role: 'tab', 'data-tab': id, onclick: () => show(id) }, label);
    nav.append(button);
    panes.append(el('section', { class: 'pane', 'data-pane': id, 'data-testid': `pane-${id}`, hidden: true }));
    if (OPTIONAL[id]) {
      button.hidden = true;
      // Asked once the first tab is drawn: on a big trace the server computes what that tab
      // needs first (in parallel), not the critical path of a tab nobody opened yet.
      firstDrawn.then(() => src.get(id)).then(async (r) => { button.hidden = !(await OPTIONAL[id](r, src)); }).catch(() => {});
    }
    settled.push(applies(id).then((ok) => { if (!ok) button.remove(); }));
  }
  Promise.all(settled).then(() => { nav.dataset.tabsReady = '1'; });
  root.append(nav, panes);
  const start = TABS.some(([id]) => id === initial) ? initial : 'overview';
  show(start).finally(drawnFirst);
  return { show, current: () => current };
}

// While the trace parses, its progress (/api/profiler/progress, answered at once by the server):
// bytes and events read, the rate and an ETA; removed once the summary has come.
async function watchLoad(trace, box, ready) {
  let done = false;
  ready.finally(() => { done = true; box.remove(); });
  const mb = (b) => `${(b / 1e6).toFixed(1)} MB`;
  while (!done) {
    try {
      const r = await fetch(`api/profiler/progress?trace=${encodeURIComponent(trace)}`);
      const p = await r.json();
      if (done) break;
      if (p.state === 'loading') {
        const pct = p.total_bytes ? Math.floor(100 * p.bytes_read / p.total_bytes) : 0;
        box.dataset.state = 'loading';
        box.textContent = `Loading ${trace}: ${mb(p.bytes_read)} of ${mb(p.total_bytes)} (${pct} %), ` +
          `${p.events_read.toLocaleString('en-US')} events read, ${p.elapsed_s.toFixed(1)} s` +
          (p.eta_s !== undefined ? `, about ${p.eta_s.toFixed(1)} s left` : '');
      } else if (p.state === 'ready') {
        box.dataset.state = 'analyzing';
        box.textContent = `Analyzing ${trace}…`;
      } else if (p.state === 'failed') {
        box.dataset.state = 'failed';
        box.textContent = p.error || 'The trace did not load.';
        return;
      }
    } catch (e) { /* the summary's own request reports errors */ }
    await new Promise((res) => setTimeout(res, 250));
  }
}

function header(title, sub) {
  return el('header', { class: 'top' }, el('h1', {}, 'mlprof'), el('span', { class: 'title', 'data-testid': 'title' }, title),
    sub ? el('span', { class: 'muted' }, sub) : null);
}

async function startDashboard(root, data) {
  let traces = [];
  let selected = null, base = '';
  const select = el('select', { 'data-testid': 'trace-select' });
  const baseSelect = el('select', { 'data-testid': 'base-select' });
  const status = el('span', { class: 'muted', 'data-testid': 'live-status' });
  // The server lists a bounded number of files: when it cut the list, say so above everything.
  const truncated = el('div', { 'data-testid': 'listing-truncated', hidden: true });
  const body = el('div');
  root.append(header(data.title || 'dashboard', 'live'), el('div', { class: 'toolbar' },
    el('label', {}, 'Trace ', select), el('label', {}, ' compare with ', baseSelect), status), truncated, body);
  let tabs = null;
  function open() {
    body.replaceChildren();
    if (!selected) { body.append(note('No trace files in this directory yet (.json, .json.gz, .mlprof). Waiting for one…')); return; }
    const src = new RestSource(selected, base);
    const progress = el('div', { class: 'note', 'data-testid': 'load-progress' }, `Opening ${selected}…`);
    body.append(progress);
    watchLoad(selected, progress, src.get('summary'));
    tabs = buildTabs(body, src, tabs ? tabs.current() : (location.hash || '#overview').slice(1));
  }
  select.addEventListener('change', () => { selected = select.value; open(); });
  baseSelect.addEventListener('change', () => { base = baseSelect.value; open(); });
  async function poll() {
    try {
      const r = await fetch('api/traces');
      const listing = await r.json();
      const list = listing.traces || [];
      truncated.hidden = !listing.truncated;
      truncated.replaceChildren(...(listing.truncated ? [el('p', { class: 'warnings' }, listing.note || `Only ${list.length} trace files are listed; the folder has more.`)] : []));
      const key = (t) => `${t.name}|${t.size}|${t.mtime_ns}`;
      const before = new Map(traces.map((t) => [t.name, key(t)]));
      const changed = list.length !== traces.length || list.some((t) => before.get(t.name) !== key(t));
      if (changed) {
        const selChanged = selected && before.has(selected) && list.find((t) => t.name === selected && before.get(t.name) !== key(t));
        traces = list;
        select.replaceChildren(...list.map((t) => el('option', { value: t.name, selected: t.name === selected }, t.name)));
        baseSelect.replaceChildren(el('option', { value: '' }, '(none)'),
          ...list.map((t) => el('option', { value: t.name, selected: t.name === base }, t.name)));
        select.dataset.count = String(list.length);
        if (!selected || !list.some((t) => t.name === selected)) { selected = list[0]?.name || null; open(); }
        else if (selChanged) open();  // the trace file changed: redraw with fresh analyses
      }
      status.textContent = `${list.length}${listing.truncated ? '+' : ''} traces · updated ${new Date().toLocaleTimeString()}`;
    } catch (e) {
      status.textContent = 'server unreachable: ' + e.message;
    }
  }
  await poll();
  if (!tabs) open();
  setInterval(poll, data.poll_ms || 2000);
}

function main() {
  performance.mark('mlprof:main');
  const root = document.getElementById('app');
  const dataNode = document.getElementById('mlprof-data');
  const data = dataNode ? JSON.parse(dataNode.textContent) : { kind: 'dashboard' };
  window.mlprofData = data;
  if (data.kind === 'dashboard') { startDashboard(root, data); return; }
  const src = new EmbeddedSource(data);
  if (data.kind === 'flame') {
    root.append(header(data.title || 'flame graph'));
    const pane = el('section', { class: 'pane', 'data-pane': 'flame', 'data-testid': 'pane-flame' });
    root.append(pane);
    flame(pane, src).then(() => { pane.dataset.ready = '1'; });
    return;
  }
  if (data.kind === 'timeline') {
    root.append(header(data.title || 'timeline'));
    const pane = el('section', { class: 'pane', 'data-pane': 'timeline', 'data-testid': 'pane-timeline' });
    root.append(pane);
    timeline(pane, src).then(() => { pane.dataset.ready = '1'; });
    return;
  }
  root.append(header(data.title || 'report', data.base ? `compared with ${data.base}` : ''));
  buildTabs(root, src, (location.hash || '#overview').slice(1));
}

if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', main);
else main();
