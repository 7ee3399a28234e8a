// The GPU tab: Holistic Trace Analysis' views (temporal breakdown, idle time by cause per stream,
// queue length, memory bandwidth by copy kind, kernel breakdown, launch statistics) and the
// TensorBoard plugin's GPU summary, from `mlprof gpu --json` and `mlprof kernels --json`.
// A block titled with a peer's name shows that peer's definition; with the HTA toggle on, the
// numbers are `--hta-compatible`'s (HTA's event window and µs time base); otherwise the title
// says "mlprof" and what differs from HTA.
import { el, fmtNs, fmtBytes, fmtCount, fmtPct, unavailable, note, getOrigin } from './util.js';
import { dataTable } from './table.js';
import { card } from './generic.js';
import { barChart, lineChart } from './charts.js';

// What mlprof's default does differently from HTA v0.6.1 (docs/gpu-analysis.md).
export const MLPROF_VS_HTA = 'mlprof: HTA\'s definition with every profiler step kept (HTA drops the last), ' +
  'nanosecond times (HTA rounds to µs) and cuda_sync events not counted as GPU activity';
export const HTA_LABEL = 'HTA v0.6.1 (mlprof --hta-compatible: last step dropped, times in whole µs)';

const QUEUE_CHARTS = 8;   // streams whose queue length is drawn (the longest queues first)
const HTA_COLORS = { host_wait: '#e15759', kernel_wait: '#f28e2b', other: '#bab0ac' };
const CAUSES = [['host_wait', 'host wait'], ['kernel_wait', 'kernel wait'], ['other', 'other']];

// The HTA-compatible variant of an analysis: embedded in the report (data.hta_compatible), or the
// dashboard's ?hta_compatible=1.
const htaCache = new WeakMap();
export async function getHta(src, name) {
  if (src.data) {
    const h = src.data.hta_compatible;
    return (h && h[name]) || { unavailable: 'This report has no HTA-compatible data (a trace without GPU streams).' };
  }
  if (!src.trace) return { unavailable: 'No trace.' };
  let m = htaCache.get(src);
  if (!m) htaCache.set(src, (m = new Map()));
  if (!m.has(name)) {
    m.set(name, fetch(`api/profiler/${name}?trace=${encodeURIComponent(src.trace)}&hta_compatible=1`).then(async (r) => {
      const body = await r.json().catch(() => ({}));
      return r.ok ? body : { unavailable: body.error || `HTTP ${r.status}` };
    }));
  }
  return m.get(name);
}

const streamName = (x) => `GPU ${x.device} stream ${x.stream}`;
const us = (v) => fmtNs(v * 1e3);

function section(c, title, who, testid) {
  const s = el('section', { class: 'gpu-block', 'data-testid': testid });
  s.append(el('h3', {}, title), el('p', { class: 'muted source', 'data-testid': 'block-source' }, who));
  c.append(s);
  return s;
}

export async function gpu(c, src) {
  const base = await src.get('gpu');
  const t = await src.get('timeline');
  if (unavailable(base)) {
    c.append(note(`GPU: ${unavailable(base)}`));
    counters(c, t);
    return;
  }
  const hasHta = !!(src.data ? src.data.hta_compatible : src.trace);
  const body = el('div', { 'data-testid': 'gpu-body' });
  let hta = false;
  const draw = async () => {
    const g = hta ? await getHta(src, 'gpu') : base;
    const k = hta ? await getHta(src, 'kernels') : await src.get('kernels');
    body.replaceChildren();
    body.dataset.hta = hta ? '1' : '0';
    if (unavailable(g)) { body.append(note(`GPU: ${unavailable(g)}`)); return; }
    drawGpu(body, g, k, hta, t);
    c.dataset.gpuDrawn = hta ? 'hta' : 'mlprof';
  };
  if (hasHta) {
    const box = el('input', { type: 'checkbox', 'data-testid': 'hta-toggle' });
    box.addEventListener('change', () => { hta = box.checked; draw(); });
    c.append(el('div', { class: 'toolbar' }, el('label', {}, box, ' HTA-compatible numbers'),
      el('span', { class: 'muted' }, 'off: mlprof\'s definitions (every step, ns times); on: Holistic Trace Analysis v0.6.1\'s, ' +
        'as `mlprof gpu --hta-compatible` prints them (last profiler step dropped, times in whole µs).')));
  }
  c.append(body);
  await draw();
  utilization(c, t);
  counters(c, t);
}

function drawGpu(c, g, k, hta, t) {
  const who = hta ? HTA_LABEL : MLPROF_VS_HTA;
  if (hta && g.hta_dropped_last_step) {
    c.append(el('p', { class: 'note', 'data-testid': 'hta-dropped' }, `HTA's window: the last profiler step is left out; steps kept: ${(g.kept_steps || []).join(', ')}.`));
  }
  const head = el('div', { class: 'cards' });
  head.append(card('gpu.gpu_events', 'gpu_events', g.gpu_events, { label: 'GPU events (kernels, copies, sets)' }));
  if (typeof g.comm_comp_overlap_pct === 'number') head.append(card('gpu.comm_comp_overlap_pct', 'comm_comp_overlap_pct', g.comm_comp_overlap_pct, { label: 'communication overlapped by compute (HTA)' }));
  head.append(card('gpu.pageable_memcpy_count', 'pageable_memcpy_count', g.pageable_memcpy_count, { label: 'copies from pageable memory' }));
  head.append(card('gpu.pageable_memcpy_ns', 'pageable_memcpy_ns', g.pageable_memcpy_ns, { label: 'time of those copies' }));
  c.append(head);
  summary(c, g);
  temporal(c, g, who);
  idle(c, g, who);
  kernelBreakdown(c, k, hta);
  bandwidth(c, g, who);
  queues(c, g, who);
  launches(c, g, who);
}

// ---- the TensorBoard plugin's GPU summary -----------------------------------------------------

function summary(c, g) {
  const s = g.summary || {};
  if (!(s.devices || []).length) return;
  const b = section(c, 'GPU summary (TensorBoard profiler plugin\'s Overview)', 'TensorBoard plugin: ' + (s.steps
    ? `kernels over ${fmtCount(s.steps)} steps, each extended to the end of the GPU work it launched` : 'kernels over the CPU ops\' span (no steps)') +
    `, a window of ${fmtNs(s.window_end_ns - s.window_begin_ns)}` + (s.steps_left_out ? `; the last ${s.steps_left_out} step left out as the plugin does` : '') + '.', 'gpu-summary');
  for (const u of s.devices) {
    const grid = el('div', { class: 'cards' });
    grid.append(card(`gpu.summary.${u.device}.gpu_utilization`, 'gpu_utilization', u.gpu_utilization, { label: `GPU ${u.device} utilization` }));
    if (u.est_sm_efficiency !== null) grid.append(card(`gpu.summary.${u.device}.est_sm_efficiency`, 'est_sm_efficiency', u.est_sm_efficiency, { label: 'est. SM efficiency' }));
    if (u.est_achieved_occupancy_pct !== null) grid.append(card(`gpu.summary.${u.device}.occ`, 'est_achieved_occupancy_pct', u.est_achieved_occupancy_pct, { label: 'est. achieved occupancy' }));
    grid.append(card(`gpu.summary.${u.device}.kernels`, 'kernels', u.kernels, { label: 'kernels in the window' }));
    b.append(grid);
  }
}

// ---- HTA's temporal breakdown -----------------------------------------------------------------

function temporal(c, g, who) {
  const rows = (g.devices || []).map((d) => ({ ...d.temporal_breakdown, device: `GPU ${d.device}`, overlap: d.comm_comp_overlap_pct }));
  if (!rows.length) return;
  const b = section(c, 'Temporal breakdown (HTA)', `${who}. Shares of the GPU span (first GPU start to last GPU end); ` +
    'non-compute = span - compute - idle (communication, copies, sets not overlapped by compute).', 'gpu-temporal');
  const parts = [['compute_ns', 'compute', '#59a14f'], ['non_compute_ns', 'non-compute', '#4e79a7'], ['idle_ns', 'idle', '#c4bdb8']];
  b.append(el('div', {}, rows.map((r) => el('div', { class: 'cp-bar', title: r.device, style: 'margin:4px 0' },
    parts.filter(([key]) => r[key] > 0).map(([key, label, color]) => el('span', { class: 'cp-seg', style: `width:${(100 * r[key] / (r.span_ns || 1)).toFixed(3)}%;background:${color}`,
      title: `${r.device} ${label}: ${fmtNs(r[key])} (${fmtPct(100 * r[key] / (r.span_ns || 1))})` }))))));
  b.append(el('p', { class: 'muted' }, parts.map(([, label, color]) => el('span', { style: 'margin-right:12px' }, el('span', { class: 'swatch', style: `background:${color}` }), label))));
  b.append(dataTable(rows, { id: 'gpu.temporal_breakdown', columns: ['device', 'span_ns', 'compute_ns', 'compute_pct', 'non_compute_ns', 'non_compute_pct',
    'communication_pct', 'memcpy_pct', 'memset_pct', 'idle_ns', 'idle_pct', 'overlap'].filter((x) => rows.some((r) => r[x] !== undefined && r[x] !== null)),
  labels: { span_ns: 'GPU span', compute_ns: 'compute', compute_pct: 'compute %', non_compute_ns: 'non-compute', non_compute_pct: 'non-compute %',
    communication_pct: 'communication %', memcpy_pct: 'memcpy %', memset_pct: 'memset %', idle_ns: 'idle', idle_pct: 'idle %', overlap: 'comm/compute overlap %' },
  format: { overlap: (v) => (v === null || v === undefined ? 'no communication' : fmtPct(v, 2)) } }));
}

// ---- HTA's idle time breakdown per stream ------------------------------------------------------

export function idleRows(g) {
  const rows = [];
  for (const s of g.idle_time_breakdown || []) {
    for (const [key, label] of CAUSES) {
      const x = s[key] || {};
      const iv = x.intervals_us || {};
      rows.push({ stream: streamName(s), cause: label, time_ns: x.time_ns, share: x.ratio, intervals: iv.count,
        mean_us: iv.count ? iv.mean : null, p50_us: iv.count ? iv.p50 : null, p25_us: iv.count ? iv.p25 : null,
        p75_us: iv.count ? iv.p75 : null, max_us: iv.count ? iv.max : null, std_us: iv.count > 1 ? iv.std : null });
    }
  }
  return rows;
}

function idle(c, g, who) {
  const streams = g.idle_time_breakdown || [];
  if (!streams.length) return;
  const b = section(c, 'Idle time by cause per stream (HTA idle time breakdown)', `${who}. Each gap before a kernel on a stream is ` +
    'host wait when the kernel\'s launch call started after the previous kernel ended (the GPU waited for the CPU), else kernel wait ' +
    'when the gap is under 30 µs, else other. Interval statistics are over the gaps of each cause.', 'gpu-idle');
  const shown = [...streams].sort((a, x) => x.idle_ns - a.idle_ns).slice(0, 24);
  barChart(b, { title: `Idle time per stream by cause${shown.length < streams.length ? ` (the ${shown.length} streams with the most idle time)` : ''}`,
    labels: shown.map(streamName), stacked: true, testid: 'idle-chart', yFmt: fmtNs, height: 240,
    series: CAUSES.map(([key, label]) => ({ label, color: HTA_COLORS[key], values: shown.map((s) => s[key].time_ns) })) });
  b.append(dataTable(idleRows(g), { id: 'gpu.idle', columns: ['stream', 'cause', 'time_ns', 'share', 'intervals', 'mean_us', 'p25_us', 'p50_us', 'p75_us', 'max_us', 'std_us'],
    labels: { time_ns: 'idle time', share: 'share of the stream\'s idle time', intervals: 'gaps', mean_us: 'mean gap', p25_us: 'p25 gap',
      p50_us: 'median gap', p75_us: 'p75 gap', max_us: 'longest gap', std_us: 'std dev' }, bars: 'time_ns', pageSize: 60 }));
}

// ---- HTA's kernel breakdown, with per-launch statistics ----------------------------------------

function kernelBreakdown(c, k, hta) {
  if (!k || unavailable(k)) return;
  const types = k.kernel_type_breakdown || [];
  const rows = (k.kernel_breakdown || []).map((r) => ({ ...r, name: r.name === 'others' ? 'others (the rest of this type)' : r.name }));
  if (!types.length && !rows.length) return;
  const b = section(c, 'Kernel breakdown (HTA)', (hta ? HTA_LABEL : MLPROF_VS_HTA) + '. By type: union of each class\'s kernel time, overlaps ' +
    'between classes as their own rows. Per kernel: the kernels that make up 80 % of each type\'s time, the rest as "others"; sum, mean, ' +
    'min, max and standard deviation over the launches.', 'gpu-kernel-breakdown');
  if (types.length) {
    const t2 = types.map((r) => ({ kernel_type: r.kernel_type.toLowerCase().replace(/ overlapping /g, ' ∩ '), time_ns: r.time_ns, percent: r.percentage }));
    b.append(dataTable(t2, { id: 'kernels.kernel_type_breakdown', columns: ['kernel_type', 'time_ns', 'percent'],
      labels: { kernel_type: 'kernel type', time_ns: 'time', percent: '% of kernel time' } }));
  }
  if (rows.length) {
    b.append(dataTable(rows, { id: 'kernels.kernel_breakdown', columns: ['name', 'kernel_type', 'sum_us', 'mean_us', 'min_us', 'max_us', 'stddev_us'],
      labels: { kernel_type: 'type', sum_us: 'total', mean_us: 'mean per launch', min_us: 'shortest', max_us: 'longest', stddev_us: 'std dev' },
      bars: 'sum_us', sort: ['sum_us', true], format: { kernel_type: (v) => String(v).toLowerCase() } }));
  }
}

// ---- memory bandwidth by copy kind ------------------------------------------------------------

function bandwidth(c, g, who) {
  const bw = g.memory_bandwidth || [];
  if (!bw.length) return;
  const b = section(c, 'Memory bandwidth by copy kind', `${who}. Achieved = the kind's bytes / its time (mlprof); ` +
    'HTA\'s statistics (mean, median, max) are over the copies, each its own bytes / duration.', 'gpu-bandwidth');
  const gbps = (v) => `${v === 0 ? '0' : v >= 100 ? v.toFixed(0) : v >= 1 ? v.toFixed(1) : v.toPrecision(2)} GB/s`;
  const copies = bw.filter((x) => x.achieved_gbps > 0);
  if (copies.length) {
    barChart(b, { title: 'Achieved bandwidth by kind (bytes / time)', labels: copies.map((x) => x.kind), testid: 'bandwidth-chart', height: 220,
      series: [{ label: 'achieved', legend: 'achieved bandwidth (GB/s = 10⁹ bytes/s)', values: copies.map((x) => x.achieved_gbps) }], yFmt: gbps });
  }
  const rows = bw.map((x) => ({ kind: x.kind, count: x.count, bytes: x.bytes, time_ns: x.time_ns, achieved_gbps: x.achieved_gbps,
    hta_mean_gbps: x.hta_gbps && x.hta_gbps.count ? x.hta_gbps.mean : null, hta_p50_gbps: x.hta_gbps && x.hta_gbps.count ? x.hta_gbps.p50 : null,
    hta_max_gbps: x.hta_gbps && x.hta_gbps.count ? x.hta_gbps.max : null, pageable: x.pageable_count }));
  b.append(dataTable(rows, { id: 'gpu.memory_bandwidth', columns: ['kind', 'count', 'bytes', 'time_ns', 'achieved_gbps', 'hta_mean_gbps', 'hta_p50_gbps', 'hta_max_gbps', 'pageable'],
    labels: { count: 'copies', time_ns: 'time', achieved_gbps: 'achieved', hta_mean_gbps: 'HTA mean', hta_p50_gbps: 'HTA median', hta_max_gbps: 'HTA max', pageable: 'from pageable memory' } }));
  if (g.pageable_memcpy_count > 0) {
    b.append(el('p', { class: 'warnings' }, `${fmtCount(g.pageable_memcpy_count)} copies from pageable host memory (${fmtBytes(g.pageable_memcpy_bytes)}, ${fmtNs(g.pageable_memcpy_ns)}): ` +
      'pin the source (pin_memory=True) to make them asynchronous and faster.'));
  }
}

// ---- queue length over time --------------------------------------------------------------------

function queues(c, g, who) {
  const qs = (g.queue_length || []).filter((q) => (q.series || []).length);
  if (!qs.length) return;
  const b = section(c, 'Launch queue length per stream (HTA queue length)', `${who}. Kernels launched and not yet finished on each stream. ` +
    'HTA\'s statistics describe the change points; the time-weighted mean is mlprof\'s (the queue\'s mean over time).', 'gpu-queue');
  const rows = qs.map((q) => ({ stream: streamName(q), mean_time_weighted: q.mean_time_weighted, hta_mean: q.hta_summary.mean, hta_p50: q.hta_summary.p50,
    max_length: q.max_length, time_at_max_queue_ns: q.time_at_max_queue_ns }));
  b.append(dataTable(rows, { id: 'gpu.queue_length', columns: ['stream', 'mean_time_weighted', 'hta_mean', 'hta_p50', 'max_length', 'time_at_max_queue_ns'],
    labels: { mean_time_weighted: 'mean over time', hta_mean: 'HTA mean', hta_p50: 'HTA median', max_length: 'longest queue', time_at_max_queue_ns: 'time at the longest' },
    format: { mean_time_weighted: (v) => v.toFixed(2), hta_mean: (v) => v.toFixed(2), hta_p50: (v) => v.toFixed(1) } }));
  const drawn = [...qs].sort((a, x) => x.max_length - a.max_length).slice(0, QUEUE_CHARTS);
  if (drawn.length < qs.length) b.append(el('p', { class: 'muted' }, `Charts of the ${drawn.length} streams with the longest queues; the table lists all ${qs.length}.`));
  for (const q of drawn) {
    lineChart(b, { title: `Queue length over time, ${streamName(q)}`, testid: 'queue-chart', height: 170, stepped: true,
      xs: q.series.map((p) => p[0]), series: [{ label: 'queued kernels', legend: `kernels launched and not finished (longest ${fmtCount(q.max_length)})`, values: q.series.map((p) => p[1]) }],
      yFmt: (v) => fmtCount(Math.round(v)) });
  }
}

// ---- kernel launch statistics ------------------------------------------------------------------

function launches(c, g, who) {
  const l = g.launch_stats;
  if (!l || !l.rows) return;
  const b = section(c, 'Kernel launches (HTA kernel launch statistics)', `${who}. Launch calls matched to their kernels by correlation id; ` +
    'delay = kernel start - launch call start.', 'gpu-launches');
  const grid = el('div', { class: 'cards' });
  const add = (key, v, label) => grid.append(card(`gpu.launch_stats.${key}`, key, v, { label }));
  add('rows', l.rows, 'launches matched');
  add('short_kernels', l.short_kernels, 'kernels shorter than their launch (launch ≤ 50 µs)');
  add('runtime_outliers', l.runtime_outliers, 'launch calls over 50 µs');
  add('launch_delay_outliers', l.launch_delay_outliers, 'launch delays over 100 µs');
  b.append(grid);
  // Per launch: the launch call's time, the kernel's, and the delay between them.
  for (const [key, what] of [['cpu_duration_us', 'launch call'], ['gpu_duration_us', 'kernel'], ['launch_delay_us', 'launch delay']]) {
    const d = l[key] || {};
    const row = el('div', { class: 'cards compact' });
    for (const [s, label] of [['mean', 'mean'], ['p50', 'median'], ['p75', 'p75'], ['max', 'longest']]) {
      if (typeof d[s] === 'number') row.append(card(`gpu.launch_stats.${key}.${s}`, s, d[s], { label: `${what}, ${label}`, unitKey: key }));
    }
    row.append(card(`gpu.launch_stats.${key}.count`, 'count', d.count, { label: `${what}s` }));
    b.append(row);
  }
  if ((l.flagged || []).length) {
    b.append(el('h4', {}, 'Short kernels with long launches'), dataTable(l.flagged.map((f) => ({ kernel: f.kernel, cpu_ns: f.cpu_ns, gpu_ns: f.gpu_ns, delay_ns: f.delay_ns })),
      { id: 'gpu.launch_stats.flagged', columns: ['kernel', 'cpu_ns', 'gpu_ns', 'delay_ns'], labels: { cpu_ns: 'launch call', gpu_ns: 'kernel', delay_ns: 'launch delay' }, pageSize: 20 }));
  }
}

// ---- over time: utilization and counters -------------------------------------------------------

function utilization(c, t) {
  for (const u of (t && !unavailable(t) && t.gpu_utilization) || []) {
    const xs = u.values.map((_, k) => (k + 0.5) * u.bucket_ns);
    const mean = u.values.reduce((a, x) => a + x, 0) / Math.max(1, u.values.length);
    c.append(el('h3', {}, `GPU ${u.device} utilization over time`), el('p', { class: 'muted source' },
      `mlprof: the share of each ${fmtNs(u.bucket_ns)} bucket with a kernel, copy or set running; the mean over the timeline's range is ${fmtPct(100 * mean, 2)} ` +
      '(not HTA\'s busy share of the GPU span, nor the TensorBoard plugin\'s utilization over the steps\' window).'));
    lineChart(c, { testid: 'gpu-util-chart', height: 200, xs,
      series: [{ label: 'utilization', legend: 'utilization', values: u.values.map((v) => 100 * v), fill: 'rgba(89,161,79,0.15)', color: '#59a14f' }],
      yFmt: (v) => fmtPct(v, 0) });
  }
}

function counters(c, t) {
  const series = (t && !unavailable(t) && t.counters) || [];
  c.append(el('h3', {}, 'Counters over time'));
  if (!series.length) { c.append(note('No counter events (GPU utilization, memory, power…) in this trace.')); return; }
  for (const s of series.slice(0, 24)) {
    const o = getOrigin();
    const xs = o !== null && s.ts_ns.length && s.ts_ns[0] > 1e15 ? s.ts_ns.map((x) => x - o) : s.ts_ns;
    lineChart(c, { title: s.name, testid: 'counter-chart', xs, height: 180, zero: false,
      series: [{ label: s.name, values: s.values }], yFmt: (v) => (Math.abs(v) >= 1e5 ? v.toExponential(2) : String(+v.toFixed(3))) });
  }
}
