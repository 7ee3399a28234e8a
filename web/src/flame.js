// Flame graph tab: d3-flame-graph drawing an icicle (root on top) from the flat frame table of
// `mlprof flame --json`. Click zooms into a frame, the search box highlights matches, hover shows
// total, self and share of the root.
import { select } from 'd3-selection';
import flamegraph, { tooltip } from 'd3-flame-graph';
import { el, fmtNs, hashColor } from './util.js';

export function flameTree(result) {
  const frames = result.frames;
  const nodes = frames.map((f, i) => ({ name: f.name, value: f.total_ns, self: f.self_ns,
    count: f.count, id: i, children: [] }));
  for (let i = 1; i < frames.length; i++) nodes[frames[i].parent]?.children.push(nodes[i]);
  return nodes[0];
}

export function renderFlame(container, result) {
  if (!result.frames || result.frames.length <= 1) {
    container.append(el('p', { class: 'note', 'data-testid': 'no-data' },
      'No slices to draw: the trace has no duration events on CPU threads or GPU streams.'));
    return;
  }
  const root = flameTree(result);
  const total = root.value || 1;
  const search = el('input', { type: 'search', placeholder: 'search frames (regex)…',
    'data-testid': 'flame-search', class: 'filter' });
  const matches = el('span', { class: 'muted', 'data-testid': 'flame-matches' });
  const reset = el('button', { 'data-testid': 'flame-reset' }, 'Reset zoom');
  const details = el('div', { class: 'flame-details', 'data-testid': 'flame-details' },
    'Click a frame to zoom in; hover for total / self time.');
  const chartDiv = el('div', { class: 'flame-chart', 'data-testid': 'flame-chart' });
  container.append(el('div', { class: 'toolbar' }, search, matches, reset),
    el('div', { class: 'cards' },
      card('CPU time', result.cpu_ns, 'flame.cpu_ns'), card('GPU time', result.gpu_ns, 'flame.gpu_ns'),
      el('div', { class: 'card', 'data-key': 'flame.frames', 'data-value': String(result.frames.length) },
        el('div', { class: 'card-value' }, result.frames.length.toLocaleString('en-US')),
        el('div', { class: 'card-label' }, 'frames'))),
    details, chartDiv);

  const describe = (d) => {
    const n = d.data;
    return `${n.name} — total ${fmtNs(n.value)} (${(100 * n.value / total).toFixed(2)}%), ` +
           `self ${fmtNs(n.self)}, ${n.count} calls`;
  };
  const tip = tooltip.defaultFlamegraphTooltip().text(describe);
  const width = Math.max(600, container.clientWidth || document.body.clientWidth - 40);
  const chart = flamegraph()
    .width(width)
    .cellHeight(18)
    .inverted(true)
    .minFrameSize(1)
    .transitionDuration(0)
    .sort(false)
    .tooltip(tip)
    .getName((d) => d.data.name)
    .setColorMapper((d, orig) => (d.highlight ? '#e040fb' : hashColor(d.data.name, false)))
    .onHover((d) => { details.textContent = describe(d); })
    .onClick((d) => {
      details.textContent = 'Zoomed: ' + describe(d);
      chartDiv.dataset.zoomed = d.data.name;
    });
  select(chartDiv).datum(root).call(chart);
  search.addEventListener('input', () => {
    const term = search.value.trim();
    if (!term) { chart.clear(); matches.textContent = ''; return; }
    let re;
    try { re = new RegExp(term, 'i'); } catch { re = null; }
    chart.setSearchMatch((d, t) => (re ? re.test(d.data.name) : d.data.name.includes(t)));
    chart.search(term);
    const n = chartDiv.querySelectorAll('.d3-flame-graph rect').length;
    let hit = 0;
    const walk = (node) => { if (re ? re.test(node.name) : node.name.includes(term)) hit++; node.children.forEach(walk); };
    walk(root);
    matches.textContent = `${hit} matching frames`;
    matches.dataset.count = String(hit);
    void n;
  });
  reset.addEventListener('click', () => { chart.resetZoom(); delete chartDiv.dataset.zoomed; });
  window.mlprofFlame = chart;
}

function card(label, v, key) {
  return el('div', { class: 'card', 'data-key': key, 'data-value': String(v) },
    el('div', { class: 'card-value' }, fmtNs(v)), el('div', { class: 'card-label' }, label));
}
