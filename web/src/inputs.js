// First screens of inputs that are not profiles (issue 28 item 4). A torch.compile structured
// log (TORCH_TRACE, what tlparse reads) leads with what went wrong: failures, graph breaks (with
// the user frames that called the broken frame) and recompiles (with their guard reasons), then
// compile time by phase, the FX graph cache, and one detail block per compile id, as tlparse's
// landing page links them. A CUDA memory snapshot leads with the peak, what was live at the peak
// by allocation stack (memory_viz's view of the peak), fragmentation with its definition, and an
// OOM's cause when the allocator recorded one. Every number is the one `mlprof compile --json` /
// `mlprof memory SNAPSHOT --json` computes; nothing is recomputed here but sums for display.
import { el, fmtBytes, fmtCount, fmtPct, unavailable, note } from './util.js';
import { dataTable } from './table.js';
import { card } from './generic.js';
import { barChart } from './charts.js';
import './inputs.css';

// What the input is: 'compile_log', 'memory_snapshot' or 'profile' (everything else).
export async function inputKind(src) {
  if (!src._inputKind) {
    src._inputKind = (async () => {
      const [s, snap, comp] = await Promise.all(['summary', 'memory_snapshot', 'compile'].map((n) => src.get(n)));
      if (snap && !unavailable(snap)) return 'memory_snapshot';
      if (unavailable(s) && comp && !unavailable(comp) && (comp.ranks || []).length) return 'compile_log';
      return 'profile';
    })();
  }
  return src._inputKind;
}

// The tabs that can apply to each kind of input that is not a profile; the others are hidden.
// A snapshot's record_function annotations are slices (Operators, Timeline, Flame graph) when it
// has any.
const INPUT_TABS = {
  compile_log: () => ['overview', 'compile'],
  memory_snapshot: async (src) => {
    const t = await src.get('timeline');
    const slices = t && !unavailable(t) ? t.slices || 0 : 0;
    return ['overview', 'memory', 'timeline', ...(slices ? ['operators', 'flame'] : [])];
  },
};

// null for a profile (every tab may apply), else the set of tab ids to show.
export async function inputTabs(src) {
  const kind = await inputKind(src);
  return INPUT_TABS[kind] ? new Set(await INPUT_TABS[kind](src)) : null;
}

const sec = (s) => (typeof s === 'number' && Number.isFinite(s) ? (s >= 100 ? s.toFixed(0) : s >= 1 ? s.toFixed(2) : s.toFixed(3)) + ' s' : 'n/a');
const plural = (n, one, many) => `${fmtCount(n)} ${n === 1 ? one : many || one + 's'}`;
const anchorOf = (rank, id) => `compile-id-${rank}-${String(id).replace(/[^\w]/g, '_')}`;

// A link to a compile id's detail block (below in the same pane): opens it and scrolls to it.
function idLink(rank, id) {
  const target = anchorOf(rank, id);
  return el('a', { href: '#' + target, class: 'compile-id-link', 'data-compile-id': id, onclick: (e) => {
    e.preventDefault();
    const d = document.getElementById(target);
    if (d) { d.open = true; d.scrollIntoView({ block: 'start' }); }
  } }, id);
}

function listTable(testid, head, rows) {
  return el('table', { class: 'data input-table', 'data-testid': testid },
    el('thead', {}, el('tr', {}, head.map((h) => el('th', {}, h)))),
    el('tbody', {}, rows.map((cells) => el('tr', {}, cells.map((x) => el('td', {}, x))))));
}

// ---- torch.compile log ----------------------------------------------------------------------

export function compileOverview(c, r) {
  const ranks = r.ranks || [];
  const compiles = r.compiles || [];
  const sum = (k) => ranks.reduce((a, x) => a + (x[k] || 0), 0);
  const multi = ranks.length > 1;
  const rankOf = (x) => (x.rank ?? ranks[0]?.rank ?? 0);
  const failures = r.failures || [], breaks = r.graph_breaks || [], recompiles = r.recompiles || [];
  const nBreaks = breaks.reduce((a, g) => a + g.count, 0), nRecompiles = recompiles.reduce((a, g) => a + g.count, 0);

  const box = el('div', { class: 'verdict', 'data-testid': 'input-verdict' });
  const bad = (label, text) => el('div', { class: 'verdict-line' }, el('span', { class: 'bound' }, label + ': '), text);
  if (failures.length) {
    const f = failures[0];
    box.append(bad(failures.length === 1 ? 'Compile failed' : `${failures.length} compiles failed`,
      `${f.id}${multi ? ` (rank ${f.rank})` : ''} ${f.type}: ${String(f.reason).split('\n').filter(Boolean).pop() || ''} — in ${f.frame}.`));
  }
  if (nBreaks) box.append(bad(plural(nBreaks, 'graph break'), `${breaks[0].reason} in ${breaks[0].frame}${breaks.length > 1 ? ` (and ${breaks.length - 1} more distinct)` : ''}.`));
  if (nRecompiles) box.append(bad(plural(nRecompiles, 'recompile'), `${recompiles[0].frame}: ${recompiles[0].reason}.`));
  if (!failures.length && !nBreaks && !nRecompiles) {
    box.append(el('div', { class: 'verdict-line' }, el('span', { class: 'bound ok' }, 'Compiled cleanly: '),
      'no failure, graph break or recompile in this log.'));
  }
  const hits = sum('cache_hits'), misses = sum('cache_misses'), bypasses = sum('cache_bypasses');
  box.append(el('div', { class: 'verdict-sub' }, [
    `${plural(sum('compile_ids'), 'compile id')} over ${plural(sum('frames'), 'frame')}${multi ? ` on ${ranks.length} ranks` : ''}`,
    `compile time ${sec(sum('compile_s'))} (compilation_metrics)`,
    `FX graph cache: ${plural(hits, 'hit')}, ${plural(misses, 'miss', 'misses')}${bypasses ? `, ${fmtCount(bypasses)} bypassed` : ''}`,
  ].join(' · ')));
  c.append(box);
  const health = ranks.filter((x) => x.md5_mismatches || x.json_failures || x.unrecognized_lines);
  if (health.length) {
    c.append(el('div', { class: 'warnings', 'data-testid': 'import-warnings' }, el('b', {}, '⚠ Log: '),
      health.map((x) => `${x.source.split('/').pop()}: ${fmtCount(x.md5_mismatches)} payload md5 mismatches, ${fmtCount(x.json_failures)} unreadable JSON, ${fmtCount(x.unrecognized_lines)} unrecognized lines`).join('; ')));
  }

  if (failures.length) {
    c.append(el('h3', {}, 'Failures'), listTable('compile-failures', ['compile id', ...(multi ? ['rank'] : []), 'exception', 'reason', 'user frame'],
      failures.map((f) => [idLink(f.rank, f.id), ...(multi ? [String(f.rank)] : []), f.type, el('pre', { class: 'reason' }, f.reason), f.frame])));
  }
  if (breaks.length) {
    c.append(el('h3', { title: 'Deduplicated by (reason, frame). "Called from" is the innermost user frame of the dynamo_start stack of the compile that broke.' }, 'Graph breaks'),
      listTable('compile-graph-breaks', ['reason', 'frame', 'count', 'called from (user frames)', 'compile ids'],
        breaks.map((g) => [g.reason, g.frame, fmtCount(g.count), (g.user_frames || []).join('; ') || 'n/a',
          el('span', {}, ...g.ids.flatMap((id, i) => [i ? ', ' : '', idLink(rankOf({}), id)]))])));
  }
  if (recompiles.length) {
    c.append(el('h3', { title: 'A recompile is a new compile of a frame already compiled, after a guard failed; reasons with numbers replaced by N.' }, 'Recompiles'),
      listTable('compile-recompiles', ['frame', 'guard that failed (reason)', 'recompiles', ...(multi ? ['ranks', 'most on one rank'] : [])],
        recompiles.map((g) => [g.frame, g.reason, fmtCount(g.count), ...(multi ? [String(g.ranks ?? ''), String(g.max_per_rank ?? '')] : [])])));
  }

  // Compile time by phase, one bar per compile id (of the first ranks when there are many).
  const timed = compiles.filter((x) => typeof x.compile_s === 'number').slice(0, 60);
  if (timed.length) {
    const phases = [];
    for (const x of timed) for (const k of Object.keys(x.time_split_s || {})) if (!phases.includes(k)) phases.push(k);
    const label = (x) => (multi ? `r${x.rank} ${x.id}` : x.id);
    const series = phases.length
      ? [...phases.map((k) => ({ label: k, values: timed.map((x) => (x.time_split_s || {})[k] ?? 0) })),
        { label: 'not split', color: '#c4bdb8', values: timed.map((x) => (Object.keys(x.time_split_s || {}).length ? 0 : x.compile_s)) }]
        .filter((s) => s.values.some((v) => v > 0))
      : [{ label: 'compile', values: timed.map((x) => x.compile_s) }];
    const div = el('div', { class: 'compile-phase-box', title: 'compilation_metrics times nest (entire frame > backend > inductor > code gen); each bar splits the frame\'s compile time into Dynamo (tracing, guards) = frame - backend, AOTAutograd = backend - inductor, Inductor = inductor - code gen, and code gen.' });
    c.append(div);
    barChart(div, { title: 'Compile time by phase (per compile id)', labels: timed.map(label), stacked: true, testid: 'compile-phase-chart',
      series, yFmt: sec, height: 240, xLabel: 'compile id' });
  }

  c.append(el('h3', {}, 'FX graph cache'));
  const grid = el('div', { class: 'cards compact', 'data-testid': 'compile-cache' });
  grid.append(card('compile.cache_hits', 'cache_hits', hits, { label: 'hits' }),
    card('compile.cache_misses', 'cache_misses', misses, { label: 'misses' }),
    card('compile.cache_bypasses', 'cache_bypasses', bypasses, { label: 'bypassed or disabled' }));
  c.append(grid);
  for (const x of ranks) if (x.cache_sequence) c.append(el('p', { class: 'muted' }, `${multi ? `rank ${x.rank}: ` : ''}in log order: ${x.cache_sequence}`));

  if ((r.divergences || []).length) {
    c.append(el('h3', {}, 'Ranks diverge'), listTable('compile-divergences', ['in', 'ranks: value'],
      r.divergences.map((d) => [d.what + (d.graph ? ` of ${d.graph}` : ''), d.groups.map((g) => `rank ${g.ranks.join(', ')}: ${String(g.value).slice(0, 120) || '(none)'}`).join(' | ')])));
  }
  if ((r.recommendations || []).length) {
    c.append(el('h3', {}, 'Recommendations'), el('ul', { class: 'recs', 'data-testid': 'compile-recommendations' }, r.recommendations.map((x) => el('li', {}, x))));
  }

  // Per compile id: a table that links to a detail block each.
  c.append(el('h3', {}, 'Compile ids'));
  c.append(listTable('compile-ids', ['compile id', ...(multi ? ['rank'] : []), 'status', 'frame', 'compile time', 'graph ops', 'kernels', 'cache hit/miss', 'recompile reason'],
    compiles.map((x) => [idLink(x.rank, x.id), ...(multi ? [String(x.rank)] : []), x.status, x.frame, sec(x.compile_s),
      x.graph_ops >= 0 ? fmtCount(x.graph_ops) : 'n/a', fmtCount(x.kernels), `${x.cache_hits}/${x.cache_misses}`, x.recompile_reason || ''])));
  const details = el('div', { class: 'compile-details', 'data-testid': 'compile-details' });
  for (const x of compiles) {
    const d = el('details', { id: anchorOf(x.rank, x.id), class: 'compile-detail', 'data-compile-id': x.id },
      el('summary', {}, `${x.id}${multi ? ` (rank ${x.rank})` : ''} ${x.frame} — ${x.status}`));
    const facts = [['user frame', x.user_frame || 'n/a'], ['status', x.status], ['compile time', sec(x.compile_s)],
      ['backend', sec(x.backend_s)], ['inductor', sec(x.inductor_s)], ['code gen', sec(x.code_gen_s)],
      ['graph ops', x.graph_ops >= 0 ? fmtCount(x.graph_ops) : 'n/a'], ['kernels generated', fmtCount(x.kernels)],
      ['dynamo starts', fmtCount(x.dynamo_starts)], ['autotuning events', fmtCount(x.autotune_events)],
      ['FX cache', `${x.cache_hits} hits, ${x.cache_misses} misses${(x.cache_keys || []).length ? ' (keys ' + x.cache_keys.join(', ') + ')' : ''}`]];
    if (x.recompile_reason) facts.push(['recompiled because', x.recompile_reason]);
    const f = failures.find((y) => y.id === x.id && y.rank === x.rank);
    if (f) facts.push(['failure', `${f.type}: ${f.reason}`]);
    const gb = breaks.filter((g) => g.ids.includes(x.id)).map((g) => g.reason);
    if (gb.length) facts.push(['graph break', gb.join('; ')]);
    d.append(el('table', { class: 'kv' }, facts.map(([k, v]) => el('tr', {}, el('th', {}, k), el('td', {}, v)))));
    const ph = Object.entries(x.phases_us || {}).sort((a, b) => b[1] - a[1]);
    if (ph.length) {
      d.append(el('h4', { title: 'Sums of chromium_event begin/end pairs by name; phases nest, so they do not add up to the compile time.' }, 'Phases (chromium events, nested)'),
        dataTable(ph.map(([name, us]) => ({ phase: name, time_ns: us * 1e3 })), { id: `compile.phases.${x.id}`, pageSize: 15 }));
    }
    details.append(d);
  }
  c.append(details);
}

// ---- CUDA memory snapshot -------------------------------------------------------------------

const FRAG_DEF = 'Fragmentation = 1 − largest free block ÷ all free bytes the allocator caches (inactive blocks): 0 % means the cached free memory is one block; near 100 % means it is split into pieces, so a large request needs a new cudaMalloc although enough memory is free in total.';
const UNUSED_DEF = 'Cached but unused = inactive bytes ÷ reserved bytes (what the caching allocator holds from the driver without a tensor in it).';

function stackTable(testid, rows, total, what) {
  const tbody = el('tbody');
  rows.forEach((x, i) => {
    tbody.append(el('tr', { 'data-bytes': String(x.bytes) }, el('td', {}, String(i + 1)), el('td', { class: 'num' }, fmtBytes(x.bytes)),
      el('td', { class: 'num' }, total ? fmtPct(100 * x.bytes / total) : ''), el('td', { class: 'num' }, fmtCount(x.blocks)),
      el('td', {}, (x.frames || []).length ? el('details', {}, el('summary', {}, x.site), el('pre', { class: 'stack' }, x.frames.join('\n'))) : x.site)));
  });
  return el('table', { class: 'data input-table', 'data-testid': testid },
    el('thead', {}, el('tr', {}, ['#', 'bytes', `of ${what}`, 'allocations', 'allocation site (click: the whole stack)'].map((h) => el('th', {}, h)))), tbody);
}

export function snapshotOverview(c, s, strip) {
  const devices = s.devices || [];
  const ooms = devices.flatMap((d) => (d.ooms || []).map((o) => ({ ...o, device: d.device })));
  const box = el('div', { class: 'verdict', 'data-testid': 'input-verdict' });
  for (const o of ooms) {
    box.append(el('div', { class: 'verdict-line', 'data-testid': 'snapshot-oom-line' }, el('span', { class: 'bound' }, 'Out of memory: '),
      `GPU ${o.device} could not allocate ${fmtBytes(o.requested_bytes ?? o.requested)} at ${o.site || 'an unknown site'}; ` +
      `the driver reported ${fmtBytes(o.device_free_bytes ?? o.device_free)} free, ${fmtBytes(o.active_bytes ?? o.active)} was in use of ${fmtBytes(o.reserved_bytes ?? o.reserved)} reserved.`));
  }
  for (const d of devices) {
    const when = d.peak_index != null ? `at allocator trace entry ${fmtCount(d.peak_index)} of ${fmtCount(d.entries)}` +
      (d.peak_time_us >= 0 && s.start_time_us >= 0 ? ` (${((d.peak_time_us - s.start_time_us) / 1e6).toFixed(3)} s after the first entry)` : '')
      : d.entries > 1 ? 'at the start of the recorded history' : 'at the snapshot (it has no allocation history, so the peak known is its state)';
    box.append(el('div', { class: 'verdict-line', 'data-testid': 'snapshot-peak', 'data-key': `memory_snapshot.devices.${d.device}.peak_active_bytes`, 'data-value': String(d.peak_active_bytes) },
      el('span', { class: 'bound' }, `Peak on GPU ${d.device}: `), `${fmtBytes(d.peak_active_bytes)} allocated ${when}; reserved peaked at ${fmtBytes(d.peak_reserved_bytes)}.`));
  }
  box.append(el('div', { class: 'verdict-sub' }, `At the snapshot: ${fmtBytes(s.allocated_bytes)} allocated of ${fmtBytes(s.reserved_bytes)} reserved in ${plural(s.segments, 'segment')}; ` +
    `${fmtBytes((s.bytes_by_state || {}).inactive || 0)} cached but unused (${fmtPct(100 * (s.unused_fraction || 0))}), fragmentation ${fmtPct(100 * (s.fragmentation || 0))}.`));
  c.append(box);
  if (strip) c.append(strip);

  for (const o of ooms) {
    c.append(el('h3', { 'data-testid': 'snapshot-oom' }, `The OOM on GPU ${o.device}: what held the memory then`));
    if ((o.holders || []).length) c.append(stackTable('snapshot-oom-holders', o.holders, o.active_bytes ?? o.active, 'in use'));
  }

  for (const d of devices) {
    const live = d.live_at_peak || [];
    c.append(el('h3', { title: 'The allocations alive at the peak of the Active Memory Timeline (memory_viz\'s replay of the allocator trace), grouped by their allocation stack, largest first.' },
      `Live at the peak on GPU ${d.device}, by allocation stack (${plural(d.live_at_peak_allocations ?? 0, 'allocation')})`));
    if (!live.length) { c.append(note('No allocation stacks recorded (snapshot taken without _record_memory_history stacks).')); continue; }
    const top = live.slice(0, 12);
    barChart(c, { title: `Bytes live at the peak by allocation site (top ${top.length} stacks)`, labels: top.map((x) => x.site), testid: 'snapshot-live-chart',
      series: [{ label: 'bytes', values: top.map((x) => x.bytes) }], yFmt: fmtBytes, height: 230 });
    c.append(stackTable('snapshot-live-at-peak', live.slice(0, 30), d.peak_active_bytes, 'the peak'));
    if (live.length > 30) c.append(note(`${live.length - 30} more stacks: the Memory tab lists them all.`));
  }

  c.append(el('h3', {}, 'Fragmentation'));
  c.append(el('p', { class: 'definition', 'data-testid': 'snapshot-fragmentation-def' }, FRAG_DEF + ' ' + UNUSED_DEF));
  c.append(el('div', { class: 'cards compact', 'data-testid': 'snapshot-fragmentation' },
    card('memory_snapshot.fragmentation', 'fragmentation', s.fragmentation || 0, { label: 'fragmentation', title: FRAG_DEF }),
    card('memory_snapshot.unused_fraction', 'unused_fraction', s.unused_fraction || 0, { label: 'cached but unused', title: UNUSED_DEF }),
    card('memory_snapshot.largest_inactive_bytes', 'largest_inactive_bytes', s.largest_inactive_bytes, { label: 'largest free block' }),
    card('memory_snapshot.bytes_by_state.inactive', 'inactive_bytes', (s.bytes_by_state || {}).inactive || 0, { label: 'free (inactive) bytes' })));
  const frag = (s.fragmented_segments || []).slice(0, 8);
  if (frag.length) {
    c.append(dataTable(frag.map((x) => ({ address: x.address, device: x.device, stream: x.stream, total_bytes: x.total_bytes,
      allocated_bytes: x.allocated_bytes, inactive_bytes: x.inactive_bytes, largest_inactive_bytes: x.largest_inactive_bytes,
      fragmentation: x.fragmentation, site: x.site || 'n/a' })), { id: 'memory_snapshot.fragmented_segments', pageSize: 8,
      caption: 'Segments with the most free bytes' }));
  }
  if ((s.recommendations || []).length) {
    c.append(el('h3', {}, 'Recommendations'), el('ul', { class: 'recs', 'data-testid': 'snapshot-recommendations' }, s.recommendations.map((x) => el('li', {}, x))));
  }
  c.append(el('p', { class: 'muted' }, 'The Memory tab has the active memory timeline, every pool, stream and segment.'));
}
