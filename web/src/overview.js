// The Overview tab: a verdict first. Above the fold (1400x900): one sentence on what bounds the
// run (the top finding of `mlprof bottlenecks`), the top three recommendations with their
// estimated saving, the step-time breakdown, and on GPU traces the TensorBoard plugin's GPU summary;
// import warnings and dropped events right under the verdict. Then the details: key numbers, step
// statistics, every finding with its evidence, top operators.
import { el, fmtNs, fmtBytes, fmtCount, fmtPct, unavailable, note, setOrigin } from './util.js';
import { dataTable } from './table.js';
import { card, cards } from './generic.js';
import { barChart } from './charts.js';
import { inputKind, compileOverview, snapshotOverview } from './inputs.js';

// What a finding's kind says bounds the run.
const BOUND = {
  gpu_launch_overhead: 'Launch-bound',
  gpu_idle: 'GPU underused',
  communication_not_overlapped: 'Communication-bound',
  data_loading: 'Input-bound',
  hotspot: 'One op dominates',
  low_tensor_core_use: 'Compute-bound without tensor cores',
  sync_stall: 'Synchronization-bound',
  serving_host_bound_decode: 'Host-bound decode',
  serving_graph_coverage: 'Launch-bound outside graphs',
  serving_batch_missed_graph: 'Launch-bound (no graph for the batch size)',
  serving_prefill_decode_imbalance: 'Prefill stalls decode',
  pageable_memcpy: 'Copy-bound',
  rank_imbalance: 'Straggler-bound',
  straggler: 'Straggler-bound',
  memory_leak: 'Memory',
  fragmentation: 'Memory',
  memory_pressure: 'Memory',
};

// TensorBoard plugin step classes (GPU traces) and the phase split (CPU traces): display names.
const CLASS_LABEL = { kernel: 'kernel', memcpy: 'memcpy', memset: 'memset', communication: 'communication',
  runtime: 'CUDA runtime', data_loader: 'data loader', cpu_op: 'CPU exec', other: 'other' };
const PHASE_LABEL = { data_loading: 'data loading', forward: 'forward', backward: 'backward', optimizer: 'optimizer',
  communication: 'communication', other: 'unclassified' };
const CLASS_DEF = 'Each instant of a step goes to the first class active then, in the TensorBoard plugin\'s order: kernel > memcpy > memset > communication > CUDA runtime > data loader > CPU exec > other.';
const PHASE_DEF = 'Each instant of a step goes to the innermost recognised annotation active then (communication > data loading > optimizer > backward > forward; autograd threads count for backward); time no annotation covers is unclassified. Rules: docs/analysis.md.';

// bottlenecks' basis: the steps' time, the replayed window of a trace without steps (the step
// thread's span and the GPU work it launched), or the trace span (no replay).
function basisText(basis) {
  return basis === 'steps' ? 'step time' : basis === 'window' ? 'the step thread\'s window' : 'the trace span';
}

export function savingText(f, basis) {
  if (!(f.est_savings_ns > 0)) return null;
  return `saves ≈ ${fmtNs(f.est_savings_ns)} (${fmtPct(f.est_savings_pct)} of ${basisText(basis)})`;
}

function verdict(b, steps, gpu, summary) {
  const findings = (b && !unavailable(b) && b.findings) || [];
  const timed = findings.filter((f) => f.est_savings_ns > 0);
  const box = el('div', { class: 'verdict', 'data-testid': 'verdict' });
  const context = [];
  if (steps && !unavailable(steps) && steps.count > 0) context.push(`${steps.count} steps, mean ${fmtNs(steps.mean_ns)}`);
  else if (summary && !unavailable(summary)) context.push(`no profiler steps; trace span ${fmtNs(summary.span_ns)}`);
  const util = gpuUtilization(gpu);
  if (util) context.push(util);
  if (timed.length) {
    const top = timed[0];
    // The verdict's colour is the top finding's severity (a MEDIUM finding is not shown as an alarm).
    box.append(el('div', { class: 'verdict-line' }, el('span', { class: `bound sev-text-${top.severity}`, 'data-severity': top.severity }, (BOUND[top.kind] || 'Bottleneck') + ': '), top.title + '.'));
    box.append(el('div', { class: 'verdict-sub' }, [`Top fix ${savingText(top, b.basis)}`, ...context].join(' · ')));
  } else if (findings.some((f) => f.priced_by === 'replay')) {
    // Rules fired, but the replay of the step with each change saves ~0 (a host stall behind a
    // busy GPU): no fix to lead with.
    const n = findings.length;
    box.append(el('div', { class: 'verdict-line' }, el('span', { class: 'bound' }, 'No time bottleneck: '),
      `${n === 1 ? 'one finding' : n + ' findings'}, each priced at ~0 by the replay of the step (${findings[0].title}).`));
    box.append(el('div', { class: 'verdict-sub' }, context.join(' · ')));
  } else if (findings.length) {
    box.append(el('div', { class: 'verdict-line' }, el('span', { class: 'bound ok' }, 'No time bottleneck: '),
      `no rule about time fired; ${findings.length === 1 ? 'one finding' : findings.length + ' findings'} about memory (${findings[0].title}).`));
    box.append(el('div', { class: 'verdict-sub' }, context.join(' · ')));
  } else {
    box.append(el('div', { class: 'verdict-line' }, el('span', { class: 'bound ok' }, 'Nothing stands out: '),
      'no bottleneck rule fired on this trace (rules: docs/analysis.md).'));
    box.append(el('div', { class: 'verdict-sub' }, context.join(' · ')));
  }
  return box;
}

// "GPU utilization 35.8 %" from the TensorBoard plugin's summary, else HTA's busy share.
function gpuUtilization(g) {
  if (!g || unavailable(g)) return null;
  const devs = (g.summary && g.summary.devices) || [];
  // Each number names its definition: the plugin's utilization (kernels over the steps' window)
  // and HTA's busy share (kernels, copies, sets over the GPU span) differ by design.
  // Two decimals, as the cards and the CLI show the same numbers.
  if (devs.length) return devs.map((d) => `GPU ${d.device} utilization ${fmtPct(100 * d.gpu_utilization, 2)} (TensorBoard plugin: kernel time / steps' window)`).join(', ');
  const t = g.temporal_breakdown;
  if (t && typeof t.idle_pct === 'number') return `GPU busy ${fmtPct(100 - t.idle_pct, 2)} of its span (HTA)`;
  return null;
}

const NOT_DAMAGE = new Set(['unmatched_end', 'unmatched_flow']);

function importStrip(s) {
  if (!s || unavailable(s)) return null;
  const imp = s.import || {};
  const problems = Object.entries(imp.problems || {});
  // Unmatched E / flow endpoints are counted but are not damage (import_problem_is_damage: real
  // Kineto output has thousands; the CLI does not warn): listed, without the ⚠.
  const damage = problems.filter(([kind]) => !NOT_DAMAGE.has(kind));
  const dropped = s.dropped_events || 0;
  const strip = el('div', { class: damage.length || dropped ? 'warnings' : 'import-ok', 'data-testid': 'import-warnings' });
  const bits = [];
  // 0 = a source that does not count (a memory snapshot): "0 events read" above 31,118 events misled.
  // Every count explained: read = kept + second ends of flows + unmatched (skipped) + other
  // (summary's events_read_account, the same numbers the CLI prints).
  const acc = s.events_read_account;
  if (acc) {
    bits.push(el('span', { 'data-key': 'summary.events_read_account.read', 'data-value': String(acc.read),
      title: 'A flow (launch -> kernel) is two events read and one kept; unmatched flow/end events are skipped; other: metadata records (process and thread names), the E of B/E pairs, flow ends that joined no event.' },
      `${fmtCount(acc.read)} events read = ${fmtCount(acc.kept)} kept + ${fmtCount(acc.flow_ends)} second ends of flows + ${fmtCount(acc.unmatched)} unmatched (skipped) + ${fmtCount(acc.other)} other (metadata)`));
  } else if (typeof imp.events_read === 'number' && imp.events_read > 0) bits.push(`${fmtCount(imp.events_read)} events read`);
  bits.push(el('span', { 'data-key': 'summary.dropped_events', 'data-value': String(dropped), class: dropped ? 'bad' : '',
    title: 'Events the recorder had to drop: a non-zero count means the trace is incomplete.' }, `${fmtCount(dropped)} dropped`));
  if (!damage.length) bits.push('no import warnings');
  for (const [kind, p] of problems) {
    bits.push(el('span', { class: NOT_DAMAGE.has(kind) ? 'muted' : 'bad', 'data-problem': kind, title: p.first || '' },
      `${fmtCount(p.count)} × ${kind.replace(/_/g, ' ')}${p.first ? ` (${p.first})` : ''}`));
  }
  strip.append(el('b', {}, damage.length || dropped ? '⚠ Import: ' : 'Import: '));
  bits.forEach((b, i) => { if (i) strip.append(' · '); strip.append(b); });
  return strip;
}

// What the replay's windows are (bottlenecks JSON combined.window/steps): the step model's.
const WINDOW = { profiler_step: 'ProfilerStep', vllm: 'vLLM iteration', sglang: 'SGLang iteration', annotation: '--step-annotation iteration' };
function replayWindows(c) {
  if (c.window === 'trace_span') return 'one window: the step thread\'s span and the GPU work it launched';
  const w = WINDOW[c.window] || 'step';
  return `${c.steps} ${w}${c.steps === 1 ? '' : 's'}`;
}

function topRecommendations(b) {
  const box = el('div', { class: 'top-recs' });
  box.append(el('h3', {}, 'Top recommendations'));
  if (!b || unavailable(b)) { box.append(note(`Bottlenecks: ${unavailable(b) || 'not in this report'}`)); return box; }
  const list = b.findings || [];
  if (!list.length) { box.append(note('No rule fired: nothing stands out in this trace.')); return box; }
  const ol = el('ol', { class: 'recs top', 'data-testid': 'top-recommendations' });
  for (const f of list.slice(0, 3)) {
    const saving = savingText(f, b.basis);
    const ev = evidenceText(f);
    ol.append(el('li', { 'data-kind': f.kind, title: ev ? `Evidence: ${ev}\nRule: ${f.rule}` : f.rule },
      el('div', {}, el('span', { class: `sev sev-${f.severity}` }, f.severity), ' ', el('b', {}, f.title)),
      saving ? el('div', { class: 'saving', 'data-key': `bottlenecks.${f.kind}.est_savings_ns`, 'data-value': String(f.est_savings_ns) }, saving)
        : el('div', { class: 'saving none' }, f.priced_by ? `saves ~0 by ${f.priced_by}` : 'no time estimate (memory)'),
      f.recommendation ? el('div', { class: 'rec-text' }, f.recommendation) : null,
      f.why ? el('div', { class: 'evidence why' }, 'Why here: ' + f.why) : null,
      f.replay_note ? el('div', { class: 'evidence replay' }, 'Replay: ' + f.replay_note) : null));
  }
  box.append(ol);
  // The findings' savings are exclusive; applying them together is one more replay (issue 25),
  // so this line, not a sum of the rows, is what they are worth together.
  const c = b.combined;
  if (c && c.saving_ns > 0) {
    box.append(el('div', { class: 'saving combined', 'data-key': 'bottlenecks.combined.saving_ns', 'data-value': String(c.saving_ns) },
      `All ${c.findings} priced findings together (one replay over ${replayWindows(c)}): saves ≈ ${fmtNs(c.saving_ns)} (${fmtPct(c.saving_pct)} of ${basisText(b.basis)})`));
  }
  if (list.length > 3) box.append(el('a', { href: '#all-findings', class: 'more', onclick: (e) => { e.preventDefault(); document.getElementById('all-findings')?.scrollIntoView(); } }, `all ${list.length} findings with their evidence ↓`));
  return box;
}

export function evidenceText(r) {
  const units = r.evidence_units || {};
  return Object.entries(r.evidence || {}).map(([k, v]) => {
    const u = units[k] || '';
    const shown = u === 'ns' ? fmtNs(v) : u === 'bytes' ? fmtBytes(v) : u === 'bytes/step' ? fmtBytes(v) + '/step'
      : u === '%' ? fmtPct(v) : u === 'ratio' ? fmtPct(100 * v) : fmtCount(+Number(v).toFixed(3)) + (u && u !== 'count' ? ' ' + u : '');
    return `${k.replace(/_/g, ' ')} = ${shown}`;
  }).join(', ');
}

// Each step's time split by phase (CPU traces) or by GPU class (GPU traces), stacked from zero.
export function stepChart(c, steps, { height = 250, width } = {}) {
  const rows = steps.steps || [];
  if (!rows.length) {
    c.append(note('No profiler steps (ProfilerStep#N) in this trace, so no per-step breakdown.'));
    return;
  }
  const gpu = steps.has_gpu && rows[0].gpu_class_ns;
  const field = gpu ? 'gpu_class_ns' : 'phase_ns';
  const names = gpu ? CLASS_LABEL : PHASE_LABEL;
  const keys = Object.keys(rows[0][field] || {}).filter((k) => rows.some((r) => r[field][k] > 0));
  const labels = rows.map((r) => String(r.number ?? r.name));
  const title = gpu ? 'Step time by GPU activity (TensorBoard plugin classes)' : 'Step time by phase';
  const div = el('div', { class: 'step-chart-box', title: gpu ? CLASS_DEF : PHASE_DEF });
  c.append(div);
  barChart(div, { title, labels, stacked: true, testid: 'step-chart', height, width, xLabel: 'step',
    hoverLabel: (l) => `step ${l}`,
    series: keys.map((k) => ({ label: names[k] || k, values: rows.map((r) => r[field][k]), color: k === 'other' ? '#c4bdb8' : undefined })), yFmt: fmtNs });
  if (!gpu && keys.every((k) => k === 'other')) {
    c.append(note('No phase annotation recognised in these steps (forward, backward, optimizer, data loading, communication): all step time is unclassified. Annotate with torch.profiler.record_function, or see the naming rules in docs/analysis.md.'));
  }
}

function gpuSummary(g) {
  if (!g || unavailable(g)) return null;
  const box = el('div', { class: 'gpu-summary', 'data-testid': 'gpu-summary' });
  const s = g.summary;
  if (s && (s.devices || []).length) {
    box.append(el('h3', { title: s.definition || '' }, 'GPU summary (TensorBoard plugin)'));
    if (s.devices.length > 2) {  // many devices: one compact row each
      box.append(dataTable(s.devices, { id: 'gpu.summary.devices', pageSize: 8,
        columns: ['device', 'gpu_utilization', 'est_sm_efficiency', 'est_achieved_occupancy_pct'],
        labels: { gpu_utilization: 'utilization', est_sm_efficiency: 'est. SM efficiency', est_achieved_occupancy_pct: 'est. achieved occupancy' } }));
      return box;
    }
    for (const d of s.devices) {
      box.append(el('div', { class: 'cards compact' },
        card(`gpu.summary.devices.${d.device}.gpu_utilization`, 'gpu_utilization', d.gpu_utilization, { label: `GPU ${d.device} utilization` }),
        card(`gpu.summary.devices.${d.device}.est_sm_efficiency`, 'est_sm_efficiency', d.est_sm_efficiency, { label: 'est. SM efficiency' }),
        card(`gpu.summary.devices.${d.device}.est_achieved_occupancy_pct`, 'est_achieved_occupancy_pct', d.est_achieved_occupancy_pct, { label: 'est. achieved occupancy' })));
    }
    return box;
  }
  const t = g.temporal_breakdown;
  if (!t) return null;
  box.append(el('h3', {}, 'GPU time (HTA temporal breakdown)'));
  box.append(el('div', { class: 'cards compact' },
    card('gpu.temporal_breakdown.busy_pct', 'busy_pct', 100 - t.idle_pct, { label: 'GPU busy', title: 'Share of the GPU span with a kernel, copy or set running (100 % - idle).' }),
    card('gpu.temporal_breakdown.compute_pct', 'compute_pct', t.compute_pct, { label: 'compute' }),
    card('gpu.temporal_breakdown.communication_pct', 'communication_pct', t.communication_pct, { label: 'communication' }),
    card('gpu.temporal_breakdown.idle_pct', 'idle_pct', t.idle_pct, { label: 'idle' })));
  return box;
}

function rankLine(r, s) {
  if (!r || unavailable(r) || !(r.ranks || []).length) return null;
  // The rank analyzed in depth: the straggler that costs most, else the slowest rank.
  const straggler = s && !unavailable(s) && (r.stragglers || []).includes(s.rank);
  const slow = s && !unavailable(s) && s.rank >= 0 ? `rank ${s.rank}${straggler ? ' (the straggler)' : ' (the slowest)'}` : 'the slowest rank';
  const n = r.distinct_ranks || r.ranks.length;
  return el('p', { class: 'rank-line', 'data-testid': 'rank-line' },
    `Rank directory: ${n !== r.ranks.length ? `${r.ranks.length} traces of ` : ''}${n} ranks, step time imbalance max/mean ${(r.load_imbalance ?? 1).toFixed(3)}` +
    `${(r.stragglers || []).length ? `, straggler${r.stragglers.length > 1 ? 's' : ''}: rank ${r.stragglers.join(', rank ')}` : ', no straggler'}. ` +
    `The analyses below are of ${slow}; the Ranks tab compares them all.`);
}

export async function overview(c, src) {
  // Inputs that are not profiles have their own first screen (inputs.js).
  const kind = await inputKind(src);
  if (kind === 'compile_log') { compileOverview(c, await src.get('compile')); return; }
  if (kind === 'memory_snapshot') { snapshotOverview(c, await src.get('memory_snapshot'), importStrip(await src.get('summary'))); return; }
  const [s, steps, b, g] = await Promise.all(['summary', 'steps', 'bottlenecks', 'gpu'].map((n) => src.get(n)));
  // A report of a rank directory (the dashboard's ranks are every trace of its folder instead).
  const r = src.rankSet ? await src.get('ranks') : null;
  // An input with no events to summarize (a torch.compile log: see its torch.compile tab).
  if (unavailable(s)) { c.append(note(`Overview: ${unavailable(s)}.`)); return; }
  if (s) setOrigin(s.begin_ns, s.span_ns);
  c.append(verdict(b, steps, g, s));
  const strip = importStrip(s);
  if (strip) c.append(strip);
  const rl = rankLine(r, s);
  if (rl) c.append(rl);

  const fold = el('div', { class: 'fold' });
  const left = topRecommendations(b);
  const right = el('div', { class: 'fold-right' });
  fold.append(left, right);
  c.append(fold);
  right.append(el('h3', {}, 'Step-time breakdown'));
  if (steps && !unavailable(steps)) stepChart(right, steps, { height: 240, width: Math.max(420, Math.floor((c.clientWidth || 1360) * 0.55)) });
  else right.append(note(`Steps: ${unavailable(steps) || 'not in this report'}`));
  const gs = gpuSummary(g);
  if (gs) right.append(gs);

  // ---- details below the fold ----
  if (s && !unavailable(s)) {
    c.append(el('h3', {}, 'Key numbers'), cards(s, 'summary', ['span_ns', 'steps', 'distinct_ops', 'processes', 'threads',
      'gpu_streams', 'dropped_events'].filter((k) => k in s)));
    if (s.events && typeof s.events === 'object') c.append(el('h4', {}, 'Events'), cards(s.events, 'summary.events'));
    const meta = [s.source && `source ${s.source}`, s.format && `format ${s.format}`, s.rank >= 0 ? `rank ${s.rank}` : null]
      .filter(Boolean).join(' · ');
    c.append(el('p', { class: 'muted' }, meta));
    if (s.devices && s.devices.length) c.append(el('p', {}, 'Devices: ' + s.devices.join('; ')));
  }
  if (steps && !unavailable(steps) && steps.count > 0) {
    c.append(el('h3', {}, 'Step statistics'), cards(steps, 'steps', ['count', 'mean_ns', 'median_ns', 'std_ns', 'mad_ns', 'min_ns', 'max_ns', 'total_ns']));
    if ((steps.outlier_steps || []).length) {
      c.append(el('p', { title: steps.outlier_rule || '' }, `Outlier steps (duration more than 3 robust standard deviations from the median): ${steps.outlier_steps.join(', ')}`));
    }
    const phaseKey = steps.has_gpu && steps.gpu_class_total_ns ? 'gpu_class_total_ns' : 'phase_total_ns';
    const totals = steps[phaseKey] || {};
    const names = phaseKey === 'gpu_class_total_ns' ? CLASS_LABEL : PHASE_LABEL;
    const grid = el('div', { class: 'cards' });
    for (const [k, v] of Object.entries(totals)) {
      if (!(v > 0)) continue;
      grid.append(card(`steps.${phaseKey}.${k}`, phaseKey, v, { label: `${names[k] || k} (all steps)`, title: phaseKey === 'gpu_class_total_ns' ? CLASS_DEF : PHASE_DEF }));
    }
    c.append(el('h4', {}, phaseKey === 'gpu_class_total_ns' ? 'Step time by GPU activity, all steps' : 'Step time by phase, all steps'), grid);
    // Serving iterations (vLLM/SGLang annotations, --step-annotation): the step model's per-phase
    // statistics, as `mlprof steps` prints them.
    const phases = (steps.phases || []).filter((p) => p.phase !== 'unknown');
    if (phases.length) {
      const cols = ['phase', 'count', 'batch_mean', 'batch_min', 'batch_max', 'tokens', 'host_mean_ns', 'host_p50_ns', 'host_p90_ns',
        'gpu_busy_mean_ns', 'gpu_idle_mean_ns'].filter((k) => phases.some((p) => k in p));
      c.append(el('h4', { title: steps.steady_state && steps.steady_state.rule ? `Steady state: ${steps.steady_state.rule}` : '' }, 'Iterations by phase'),
        dataTable(phases, { id: 'steps.phases', columns: cols,
          labels: { count: 'iterations', batch_mean: 'batch mean', batch_min: 'batch min', batch_max: 'batch max', tokens: 'tokens (sum)',
            host_mean_ns: 'host mean', host_p50_ns: 'host p50', host_p90_ns: 'host p90', gpu_busy_mean_ns: 'GPU busy mean', gpu_idle_mean_ns: 'GPU idle mean' } }));
    }
    c.append(el('h4', {}, 'Steps'), dataTable(steps.steps, { id: 'steps.steps', columns: ['number', 'begin_ns', 'dur_ns', 'outlier'],
      labels: { begin_ns: 'start (since trace start)' } }));
  }
  if (b && !unavailable(b)) {
    c.append(el('h3', { id: 'all-findings' }, 'All findings'));
    recommendations(c, b);
  }
  if (s && !unavailable(s) && s.top_ops) {
    c.append(el('h3', {}, 'Top operators'), dataTable(s.top_ops, { id: 'summary.top_ops',
      columns: ['name', 'category', 'count', 'total_ns', 'self_ns', 'mean_ns', 'percent_of_span'] }));
  }
}

function recommendations(c, b) {
  const list = b.findings || [];
  if (!list.length) c.append(note('No rule fired: nothing stands out in this trace.'));
  const ol = el('ol', { class: 'recs', 'data-testid': 'recommendations' });
  for (const r of list) {
    const ev = evidenceText(r);
    const saving = savingText(r, b.basis);
    ol.append(el('li', { 'data-kind': r.kind }, el('span', { class: `sev sev-${r.severity}` }, r.severity), ' ', el('b', {}, r.title),
      saving ? el('span', { class: 'saving' }, ' — ' + saving) : null,
      r.recommendation ? el('div', {}, r.recommendation) : null,
      r.why ? el('div', { class: 'evidence why' }, 'Why here: ' + r.why) : null,
      ev ? el('div', { class: 'evidence' }, 'Evidence: ' + ev) : null,
      (r.ops || []).length ? el('div', { class: 'evidence' }, 'Affects: ' + r.ops.slice(0, 5).map((o) => (o.length > 80 ? o.slice(0, 77) + '…' : o)).join(', ')) : null,
      r.rule ? el('div', { class: 'evidence' }, 'Rule: ' + r.rule) : null));
  }
  c.append(ol);
}
