// The tabs after the Overview, each drawing the JSON of one CLI command (`mlprof ops --json`,
// `kernels`, `memory` + `leaks`, `gpu` + timeline counters, `modules`, `compile`,
// `critical-path`, `ranks`): the
// views TensorBoard profiler plugin users look for.
import { el, fmtNs, fmtBytes, fmtCount, fmtPct, unavailable, note, getOrigin, humanKey } from './util.js';
import { dataTable, columnsOf } from './table.js';
import { card, cards, renderGeneric } from './generic.js';
import { barChart, lineChart } from './charts.js';

export function missing(container, result, what) {
  const why = unavailable(result);
  if (why) { container.append(note(`${what}: ${why}`)); return true; }
  return false;
}

// ---- Operators: host and device time per op --------------------------------------------------

export async function operators(c, src) {
  const ops = await src.get('ops');
  if (missing(c, ops, 'Operators')) return;
  const rows = Array.isArray(ops) ? ops : ops.ops || [];
  if (!rows.length) { c.append(note('No operators: the trace has no duration events.')); return; }
  if (typeof ops.rows === 'number' && ops.rows > rows.length) {
    c.append(el('p', { class: 'note', 'data-testid': 'ops-rows-left-out' },
      `The ${fmtCount(rows.length)} operators with the most total time; ${fmtCount(ops.rows - rows.length)} more rows ` +
      'are left out of this page: `mlprof ops TRACE --json` (or --csv) lists every one.'));
  }
  const device = rows.some((r) => typeof r.device_total_ns === 'number' && r.device_total_ns > 0);
  // The chart ranks ops, not the profiler's own span or Python frames (with_stack traces list
  // every frame of the call stack; threading.py's _bootstrap would top the chart).
  let chartRows = rows.filter((r) => r.category !== 'Trace' && r.category !== 'python_function');
  if (!chartRows.length) chartRows = rows;
  const top = [...chartRows].sort((a, b) => b.total_ns - a.total_ns).slice(0, 15);
  const series = [{ label: 'host total', legend: 'host total time', values: top.map((r) => r.total_ns) },
    { label: 'host self', legend: 'host self time', values: top.map((r) => r.self_ns) }];
  if (device) {
    series.push({ label: 'device self', legend: 'device self time (kernels it launched)', values: top.map((r) => r.device_self_ns || 0) });
  }
  barChart(c, { title: 'Top 15 operators by host total time (Python frames and the profiler span left out)', labels: top.map((r) => r.name), testid: 'ops-chart', series, yFmt: fmtNs,
    hoverLabel: (l) => l });
  if (device) {
    c.append(el('p', { class: 'muted' }, 'Device time: the GPU time of the kernels, copies and sets each op launched (TensorBoard plugin\'s ' +
      'Operator view): self = launched by the op itself, total = by the op and the ops it called.'));
  }
  const cols = ['name', 'category', 'count', 'total_ns', 'self_ns'];
  if (device) cols.push('device_total_ns', 'device_self_ns');
  cols.push('mean_ns', 'min_ns', 'max_ns', 'p50_ns', 'p90_ns', 'p99_ns', 'percent_of_span');
  const labels = { total_ns: 'host total', self_ns: 'host self', device_total_ns: 'device total', device_self_ns: 'device self', percent_of_span: '% of span',
    input_shape: 'input shape', call_stack: 'call stack', count: 'calls' };
  const opTable = () => dataTable(rows, { id: 'ops', columns: cols.filter((k) => rows.some((r) => k in r)), labels });
  // The plugin's Operator view "Group By": operator, + input shape, + call stack (when recorded).
  const shapes = ops.by_input_shape || [];
  const stacks = ops.by_call_stack || [];
  if (!shapes.length) { c.append(opTable()); } else {
    const holder = el('div', { 'data-testid': 'ops-grouped' });
    const gcols = (stack) => ['name', 'input_shape', ...(stack ? ['call_stack'] : []), 'count', 'total_ns', 'self_ns',
      ...(device ? ['device_total_ns', 'device_self_ns'] : [])];
    const cut = (n, shown) => (n > shown ? el('p', { class: 'note' }, `The ${fmtCount(shown)} groups with the most host time of ${fmtCount(n)}; ` +
      '`mlprof ops TRACE --json` lists every one.') : null);
    const views = {
      op: () => [opTable()],
      shape: () => [el('p', { class: 'muted' }, 'One row per operator and input shape ("Input Dims" as recorded): the ops that record shapes (cpu_op). ' +
        'Host: the calls\' own time; device: the GPU time of what they launched.'), cut(ops.by_input_shape_rows, shapes.length),
      dataTable(shapes, { id: 'ops.by_input_shape', columns: gcols(false), labels, sort: ['total_ns', true] })],
      stack: () => [el('p', { class: 'muted' }, 'One row per operator, input shape and call stack (innermost frame first).'), cut(ops.by_call_stack_rows, stacks.length),
        dataTable(stacks, { id: 'ops.by_call_stack', columns: gcols(true), labels, sort: ['total_ns', true] })],
    };
    const select = el('select', { 'data-testid': 'ops-group-by' },
      el('option', { value: 'op' }, 'Operator'), el('option', { value: 'shape' }, 'Operator + input shape'),
      stacks.length ? el('option', { value: 'stack' }, 'Operator + input shape + call stack') : null);
    const show = () => { holder.replaceChildren(...views[select.value]().filter(Boolean)); holder.dataset.groupBy = select.value; };
    select.addEventListener('change', show);
    c.append(el('div', { class: 'toolbar' }, el('label', {}, 'Group by ', select)), holder);
    show();
  }
  const f = await src.get('flops');
  c.append(el('h3', {}, 'FLOPs and model FLOPs utilization'));
  if (!missing(c, f, 'FLOPs')) c.append(renderGeneric(f, 'flops'));
}

// ---- Kernels: by kernel, by launching op, by type --------------------------------------------

export async function kernels(c, src) {
  const k = await src.get('kernels');
  if (missing(c, k, 'Kernels')) return;
  const rows = Array.isArray(k) ? k : (k.kernels || []);
  if (rows.length && 'total_ns' in rows[0]) {
    const top = [...rows].sort((a, b) => b.total_ns - a.total_ns).slice(0, 15);
    barChart(c, { title: 'Top 15 kernels by total GPU time', labels: top.map((r) => r.name), testid: 'kernels-chart',
      series: [{ label: 'GPU time', legend: 'GPU time of the kernel, all launches', values: top.map((r) => r.total_ns) }], yFmt: fmtNs });
  }
  // On AMD GPUs the tensor-core share is not measured (NVIDIA name heuristics): no "0.00 %" card.
  const unit = k.matrix_unit || 'tensor cores';
  const kc = el('div', { class: 'cards' });
  const add = (key, label) => { if (typeof k[key] === 'number') kc.append(card(`kernels.${key}`, key, k[key], { label })); };
  add('total_gpu_ns', 'GPU time of all kernels, copies and sets');
  add('kernel_count', 'launches');
  add('computation_ns', 'computation kernels');
  if (k.tensor_cores_measured !== false) {
    add('tensor_core_ns', `in kernels using ${unit}`);
    add('tensor_core_share', `of computation time on ${unit}`);
  }
  c.append(kc);
  const byOp = k.by_op || [];
  if (byOp.length) kernelsByOp(c, byOp);
  // The TensorBoard plugin's Kernel view names the op that launched each kernel.
  const launchers = new Map();
  for (const r of byOp) {
    const m = launchers.get(r.kernel) || new Map();
    m.set(r.op, (m.get(r.op) || 0) + r.total_ns);
    launchers.set(r.kernel, m);
  }
  const kernelRows = byOp.length ? rows.map((r) => {
    const m = launchers.get(r.name);
    if (!m) return { ...r, launched_by: 'no launching op found' };
    const ops = [...m.entries()].sort((a, b) => b[1] - a[1]);
    return { ...r, launched_by: ops[0][0] + (ops.length > 1 ? ` (+${ops.length - 1} more op${ops.length > 2 ? 's' : ''})` : '') };
  }) : rows;
  const kcols = columnsOf(kernelRows).filter((x) => x !== 'launched_by');
  if (byOp.length) kcols.splice(1, 0, 'launched_by');
  c.append(el('h3', {}, 'All kernels'), dataTable(kernelRows, { id: 'kernels.kernels', sort: ['total_ns', true], columns: kcols,
    labels: { launched_by: 'launched by', kernel_type: 'type', count: 'launches', total_ns: 'total', mean_ns: 'mean', min_ns: 'shortest', max_ns: 'longest',
      std_ns: 'std dev', tensor_cores: 'tensor cores' } }));
  // HTA's kernel type and kernel breakdowns are drawn in the GPU metrics tab (with the HTA toggle).
  const rest = Object.fromEntries(Object.entries(k).filter(([x, v]) => v && typeof v === 'object' &&
    !['kernels', 'by_op', 'kernel_type_breakdown', 'kernel_breakdown'].includes(x)));
  if (Object.keys(rest).length) c.append(renderGeneric(rest, 'kernels'));
  if (k.kernel_breakdown) c.append(el('p', { class: 'muted' }, 'HTA\'s kernel breakdown by type and per kernel (with per-launch statistics): the GPU metrics tab.'));
}

// TensorBoard plugin's Kernel view "group by operator + kernel": one row per launching op, its
// kernels listed when the row is clicked.
function kernelsByOp(c, byOp) {
  const ops = new Map();
  for (const r of byOp) {
    const o = ops.get(r.op) || { op: r.op, names: new Set(), configs: 0, launches: 0, total_ns: 0 };
    o.names.add(r.kernel); o.configs++; o.launches += r.count; o.total_ns += r.total_ns;
    ops.set(r.op, o);
  }
  for (const o of ops.values()) { o.kernels = o.names.size; delete o.names; }
  const opRows = [...ops.values()].sort((a, b) => b.total_ns - a.total_ns);
  const grand = opRows.reduce((a, o) => a + o.total_ns, 0) || 1;
  for (const o of opRows) o.share = o.total_ns / grand;
  c.append(el('h3', {}, 'Kernels grouped by the op that launched them'),
    el('p', { class: 'muted' }, 'Click an op to list its kernels (with launch grid, block, registers and occupancy where the trace records them).'));
  const detail = el('div', { 'data-testid': 'kernels-of-op' });
  const table = dataTable(opRows, { id: 'kernels.by_op_summary', columns: ['op', 'kernels', 'configs', 'launches', 'total_ns', 'share'],
    labels: { kernels: 'distinct kernels', configs: 'kernel + launch configs', total_ns: 'GPU time', share: 'share of kernel time' } });
  table.addEventListener('click', (e) => {
    const tr = e.target.closest('tbody tr');
    if (!tr) return;
    const op = tr.querySelector('td[data-col="op"]').dataset.value;
    for (const x of table.querySelectorAll('tbody tr.picked')) x.classList.remove('picked');
    tr.classList.add('picked');
    const mine = byOp.filter((r) => r.op === op);
    detail.replaceChildren(el('h4', {}, `Kernels launched by ${op}`), dataTable(mine, { id: 'kernels.by_op', sort: ['total_ns', true] }));
  });
  c.append(table, detail);
}

// ---- Memory: the allocator's curves per device ------------------------------------------------

// The CUDA caching allocator's view of a memory snapshot (`mlprof memory SNAPSHOT --json`): state
// cards, the active memory timeline replayed as memory_viz does (by trace entry), then the tables.
function memorySnapshot(c, s) {
  c.append(el('h3', {}, 'CUDA allocator snapshot'));
  c.append(cards(s, 'memory_snapshot', ['segments', 'blocks', 'reserved_bytes', 'allocated_bytes',
    'requested_bytes', 'active_bytes', 'largest_inactive_bytes', 'unused_fraction', 'fragmentation',
    'private_pool_segments', 'expandable_segments'].filter((k) => k in s)));
  for (const d of s.devices || []) {
    const pts = d.timeline || [];  // [trace entry, time_us, active bytes, reserved bytes]
    if (pts.length < 2) continue;
    const entry = (x) => `entry ${fmtCount(Math.round(x))}`;
    lineChart(c, { title: `GPU ${d.device}: active memory replayed as memory_viz does`, testid: 'snapshot-chart',
      xs: pts.map((p) => p[0]), xLabel: 'allocator trace entry', xIsTime: false, xFmt: entry, xTick: (x) => fmtCount(Math.round(x)),
      series: [{ label: 'active', legend: `active (peak ${fmtBytes(d.peak_active_bytes)})`, values: pts.map((p) => p[2]), fill: 'rgba(78,121,167,0.15)' },
        { label: 'reserved', legend: `reserved (peak ${fmtBytes(d.peak_reserved_bytes)})`, values: pts.map((p) => p[3]) }],
      yFmt: fmtBytes, marker: d.peak_index != null ? { x: d.peak_index, label: `peak ${fmtBytes(d.peak_active_bytes)}` } : undefined });
  }
  // The timelines are drawn above; the rest as cards and tables.
  const rest = { ...s, devices: (s.devices || []).map(({ timeline, ...d }) => d) };
  c.append(renderGeneric(rest, 'memory_snapshot'));
  c.append(el('h3', {}, 'The snapshot\'s allocations as memory events'));
}

// The TensorBoard plugin's memory view: the allocations of a device, filtered to the time range
// selected on its curve (allocated or freed inside it). `shift`: chart x = offset_ns - shift.
function allocationTable(d, shift) {
  // Every allocation when the JSON lists them, else the largest never-freed ones (`unfreed`).
  const everyOne = !!d.allocations;
  const all = (d.allocations || d.unfreed).map((a) => ({ op: a.op || '(no op)', bytes: a.bytes, allocated_offset_ns: a.offset_ns,
    freed_offset_ns: a.freed_offset_ns ?? null, lifetime_ns: a.freed_offset_ns == null ? null : a.freed_offset_ns - a.offset_ns }));
  const node = el('div', { 'data-testid': 'memory-allocations' });
  const head = el('p', { class: 'muted', 'data-testid': 'memory-range' });
  const body = el('div');
  const cols = everyOne ? ['op', 'bytes', 'allocated_offset_ns', 'freed_offset_ns', 'lifetime_ns'] : ['op', 'bytes', 'allocated_offset_ns'];
  const labels = { op: 'allocated in', bytes: 'size', allocated_offset_ns: 'allocated at', freed_offset_ns: 'freed at', lifetime_ns: 'lifetime' };
  const fmt = { freed_offset_ns: (v) => (v === null ? 'never (in this trace)' : (v < 0 ? '−' : '+') + fmtNs(Math.abs(v))) };
  const total = everyOne ? d.allocations_total : d.unfreed_count;
  const what = everyOne ? 'Allocations' : 'Allocations never freed in the trace';
  const cut = total > all.length ? ` (the ${fmtCount(all.length)} largest of ${fmtCount(total)})` : '';
  const show = (lo, hi) => {
    const rows = lo === null ? all : all.filter((a) => (a.allocated_offset_ns - shift >= lo && a.allocated_offset_ns - shift <= hi) ||
      (a.freed_offset_ns !== null && a.freed_offset_ns - shift >= lo && a.freed_offset_ns - shift <= hi));
    const bytes = rows.reduce((x, a) => x + a.bytes, 0);
    head.textContent = lo === null ? `${what} on ${d.device}${cut}: ${fmtCount(rows.length)}, ${fmtBytes(bytes)}. Drag across the chart above to keep those of a time range.`
      : `${what} on ${d.device}, allocated or freed between +${fmtNs(lo)} and +${fmtNs(hi)}${cut}: ${fmtCount(rows.length)}, ${fmtBytes(bytes)} allocated. Click the chart to clear.`;
    node.dataset.rangeLo = lo === null ? '' : String(lo);
    node.dataset.rangeHi = hi === null ? '' : String(hi);
    node.dataset.rows = String(rows.length);
    node.dataset.bytes = String(bytes);
    node.dataset.listed = String(all.length);
    node.dataset.total = String(total);
    body.replaceChildren(dataTable(rows, { id: 'memory.allocations', columns: cols, labels, format: fmt, sort: ['bytes', true], bars: 'bytes' }));
  };
  node.append(el('h3', {}, `${what} on ${d.device}`), head, body);
  show(null, null);
  return { node, select: show };
}

export async function memory(c, src) {
  const snap = await src.get('memory_snapshot');
  if (snap && !unavailable(snap)) memorySnapshot(c, snap);
  const m = await src.get('memory');
  if (!missing(c, m, 'Memory')) {
    const devices = m.devices || [];
    if (!devices.length) c.append(note('No memory events in this trace: record with profile_memory=True (PyTorch) or mlprof run --memory.'));
    for (const d of devices) {
      const tl = d.timeline || {};
      const ts = tl.ts_ns || [];
      if (!ts.length) continue;
      const t0 = getOrigin() ?? ts[0];
      const series = [{ label: 'allocated', legend: `allocated (peak ${fmtBytes(d.peak_allocated)})`, values: tl.allocated, fill: 'rgba(78,121,167,0.15)' }];
      if (d.has_reserved && tl.reserved && d.peak_reserved > 0) {
        series.push({ label: 'reserved', legend: `reserved by the caching allocator (peak ${fmtBytes(d.peak_reserved)})`,
          values: tl.reserved.map((v) => (v >= 0 ? v : null)) });
      }
      const linked = (d.allocations || d.unfreed || []).length ? allocationTable(d, t0 - (getOrigin() ?? t0)) : null;
      lineChart(c, { title: `Memory on ${d.device}` + (linked ? ' (drag across the chart to list the allocations of a time range below)' : ''),
        testid: 'memory-chart', xs: ts.map((t) => t - t0), series, yFmt: fmtBytes, stepped: true,
        marker: { x: d.peak_ts_ns - t0, label: `peak ${fmtBytes(d.peak_allocated)}${d.peak_op ? ' in ' + d.peak_op : ''}` },
        onSelect: linked ? linked.select : undefined });
      if (linked) c.append(linked.node);
    }
    c.append(renderGeneric(m, 'memory'));
  }
  const l = await src.get('leaks');
  c.append(el('h3', {}, 'Leaks'));
  if (!missing(c, l, 'Leaks')) c.append(renderGeneric(l, 'leaks'));
}

// ---- GPU metrics: gpu_view.js ----------------------------------------------------------------
export { gpu } from './gpu_view.js';

// ---- Modules: the nn.Module tree ---------------------------------------------------------------

// "3 profiler steps", "1 vLLM iteration, GPU windows", "trace span (no iterations)".
function moduleStepLabel(m) {
  if (!(m.steps > 0)) return 'trace span (no iterations)';
  const kind = { profiler_step: 'profiler step', vllm: 'vLLM iteration', sglang: 'SGLang iteration',
    annotation: 'annotated iteration' }[m.step_source] || 'iteration';
  return `${m.steps} ${kind}${m.steps === 1 ? '' : 's'}${m.step_window === 'gpu' ? ', GPU windows' : ''}`;
}

export async function modules(c, src) {
  const m = await src.get('modules');
  if (missing(c, m, 'Modules')) return;
  const rows = m.rows || [];
  if (!rows.length) {
    c.append(note(m.message || 'No nn.Module events in this trace.'));
    return;
  }
  const head = cards(m, 'modules', ['module_events', 'recompute_events', 'step_ns', 'gpu_total_ns', 'max_depth'].filter((k) => k in m));
  // "% of step" divides by step_ns: the iterations' time (ProfilerStep#, or an engine's iterations
  // by their GPU windows on a GPU trace), or the trace span when there are none.
  const stepLabel = head.querySelector('[data-key="modules.step_ns"] .card-label');
  if (stepLabel && m.steps !== undefined) stepLabel.firstChild.textContent = moduleStepLabel(m);
  c.append(head);
  c.append(el('h3', {}, 'Module tree'), el('p', { class: 'muted' },
    'Host = time of the module\'s forward on the CPU; GPU = time of the kernels it launched; self = not in a child module. ' +
    '[recompute] = activation-checkpointing recomputation on the autograd thread. Click ▸ to expand.'));
  c.append(moduleTree(rows, m.has_gpu));
  if ((m.classes || []).length) c.append(el('h3', {}, 'Time by module class'), dataTable(m.classes, { id: 'modules.classes', sort: [m.has_gpu ? 'gpu_self_ns' : 'host_self_ns', true] }));
  for (const k of ['slowest', 'most_variable']) {
    if ((m[k] || []).length) c.append(el('h3', {}, humanKey(k) + ' modules'), el('ol', { class: 'plain-list' }, m[k].map((p) => el('li', {}, p))));
  }
  if ((m.shared || []).length) c.append(el('h3', {}, 'Modules called from several places'), dataTable(m.shared, { id: 'modules.shared' }));
}

function moduleTree(rows, hasGpu) {
  const cols = ['calls', 'host_ns', 'host_self_ns'];
  if (hasGpu) cols.push('gpu_ns', 'gpu_self_ns');
  cols.push('flops', 'step_share');
  const label = { calls: 'calls', host_ns: 'host', host_self_ns: 'host self', gpu_ns: 'GPU', gpu_self_ns: 'GPU self', flops: 'FLOPs', step_share: '% of step' };
  const children = rows.map(() => []);
  const roots = [];
  rows.forEach((r, i) => (r.parent >= 0 && r.parent < rows.length ? children[r.parent].push(i) : roots.push(i)));
  const open = new Set(rows.map((r, i) => (r.depth < 1 ? i : -1)).filter((i) => i >= 0));
  const table = el('table', { class: 'data tree', 'data-table': 'modules.rows' });
  const wrap = el('div', { class: 'table-scroll' }, table);
  function draw() {
    const body = el('tbody');
    const visit = (i) => {
      const r = rows[i];
      const kids = children[i].length;
      const toggle = kids ? el('span', { class: 'twisty', onclick: () => { if (open.has(i)) open.delete(i); else open.add(i); draw(); } }, open.has(i) ? '▾' : '▸') : el('span', { class: 'twisty' }, '');
      body.append(el('tr', { 'data-path': r.path },
        el('td', { style: `padding-left:${8 + 16 * r.depth}px`, title: r.path }, toggle, ' ', r.recompute ? el('span', { class: 'tag' }, 'recompute') : null, r.name),
        cols.map((k) => el('td', { class: 'num', 'data-col': k, 'data-value': String(r[k]) },
          k === 'step_share' ? fmtPct(100 * r[k]) : k === 'flops' ? (r[k] ? fmtFlops(r[k]) : '') : k === 'calls' ? fmtCount(r[k]) : fmtNs(r[k])))));
      if (open.has(i)) children[i].forEach(visit);
    };
    roots.forEach(visit);
    table.replaceChildren(el('thead', {}, el('tr', {}, el('th', {}, 'module'), cols.map((k) => el('th', {}, label[k])))), body);
  }
  draw();
  return wrap;
}

function fmtFlops(v) {
  const a = Math.abs(v);
  if (a >= 1e12) return (v / 1e12).toFixed(1) + ' TFLOP';
  if (a >= 1e9) return (v / 1e9).toFixed(1) + ' GFLOP';
  if (a >= 1e6) return (v / 1e6).toFixed(1) + ' MFLOP';
  return fmtCount(v) + ' FLOP';
}

// ---- Compile: torch.compile regions, graph breaks, recompiles ---------------------------------

export async function compile(c, src) {
  const r = await src.get('compile');
  if (missing(c, r, 'torch.compile')) return;
  const rt = r.runtime || {};
  if (typeof rt.gpu_ns_in_compiled === 'number') {
    const total = rt.gpu_ns_in_compiled + rt.gpu_ns_outside;
    c.append(el('p', { 'data-testid': 'compile-summary' },
      `${fmtPct(total ? 100 * rt.gpu_ns_in_compiled / total : 0)} of GPU time runs in compiled regions ` +
      `(${fmtNs(rt.gpu_ns_in_compiled)} in, ${fmtNs(rt.gpu_ns_outside)} outside); ` +
      `${fmtCount(rt.kernels_in_compiled)} kernels in compiled regions, ${fmtCount(rt.kernels_outside)} outside.`));
    if ((rt.regions || []).length) {
      const top = [...rt.regions].sort((a, b) => b.gpu_busy_ns - a.gpu_busy_ns).slice(0, 15);
      barChart(c, { title: 'Compiled regions: CPU and GPU time', labels: top.map((x) => x.name.replace(/^## Call /, '').replace(/ ##$/, '')), testid: 'compile-chart',
        series: [{ label: 'CPU', legend: 'CPU time in the region', values: top.map((x) => x.cpu_ns) },
          { label: 'GPU busy', legend: 'GPU busy time of the kernels it launched', values: top.map((x) => x.gpu_busy_ns) }], yFmt: fmtNs });
    }
  }
  // Without TORCH_TRACE logs (the report of a Kineto trace) compiles, graph breaks and recompiles
  // are empty: say so once rather than list empty sections.
  const empty = (v) => (Array.isArray(v) ? v.length === 0 : v && typeof v === 'object' && Object.keys(v).length === 0);
  const shown = Object.fromEntries(Object.entries(r).filter(([, v]) => !empty(v)));
  if (!(r.compiles || []).length) {
    c.append(note('Compile ids, compile time by phase, graph breaks and recompiles come from TORCH_TRACE logs: ' +
      'mlprof compile LOG_DIR TRACE joins them with this trace.'));
  }
  c.append(renderGeneric(shown, 'compile'));
}

// ---- Ranks ---------------------------------------------------------------------------------

// Up to this many ranks the chart has one bar per rank; beyond, bars would be thinner than a
// pixel's worth of label: the distribution over ranks and the worst ranks instead.
export const RANK_BARS_MAX = 64;
const WORST_RANKS = 20;
const HISTOGRAM_BINS = 20;

// A rank's pace: its mean step, else its GPU span (what `ranks` calls wall without steps).
const rankPace = (x) => (x.steps > 0 ? x.step_mean_ns : x.wall_ns);

// Equal-width bins over [min, max] of the values: labels (each bin's lower edge) and counts.
function histogram(values, bins) {
  let lo = Infinity, hi = -Infinity;
  for (const v of values) { lo = Math.min(lo, v); hi = Math.max(hi, v); }
  if (!(hi > lo)) return { labels: [fmtNs(lo)], counts: [values.length] };
  const w = (hi - lo) / bins;
  const counts = new Array(bins).fill(0);
  for (const v of values) counts[Math.min(bins - 1, Math.floor((v - lo) / w))]++;
  return { labels: counts.map((_, i) => fmtNs(lo + i * w)), counts, width: w };
}

function gpuTimeSeries(list) {
  return [{ label: 'compute', values: list.map((x) => x.compute_ns) }, { label: 'non-compute', values: list.map((x) => x.non_compute_ns) },
    { label: 'idle', values: list.map((x) => x.idle_ns), color: '#c4bdb8' }];
}

export async function ranks(c, src) {
  const r = await src.get('ranks');
  if (missing(c, r, 'Ranks')) return;
  const list = r.ranks || [];
  if (list.length && list.length <= RANK_BARS_MAX) {
    barChart(c, { title: 'GPU time per rank (HTA temporal breakdown)', labels: list.map((x) => `rank ${x.rank}`), stacked: true, testid: 'ranks-chart',
      series: gpuTimeSeries(list), yFmt: fmtNs, height: 240 });
  } else if (list.length) {
    // At scale (issue 18: output that reads at 1000 ranks): how the ranks' pace is distributed,
    // then the worst ranks (stragglers first, then the slowest, as `mlprof ranks` lists them).
    const steps = list.some((x) => x.steps > 0);
    const late = r.matched_calls > 0;  // arrival order at collectives: what names a straggler
    c.append(note(`${list.length} traces${r.distinct_ranks && r.distinct_ranks !== list.length ? ` of ${r.distinct_ranks} ranks` : ''}: ` +
      `too many for one bar each. The distribution of their ${steps ? 'mean step time' : 'GPU span'}` +
      `${late ? ' and of their time late at collectives' : ''}, then the ${Math.min(WORST_RANKS, list.length)} worst; ` +
      'the table below lists every rank.'));
    // A lone straggler is one rank of hundreds in the top bin (a bar too short to see): the title
    // names the rank at the max.
    const distribution = (values, what, testid, metric) => {
      const h = histogram(values, HISTOGRAM_BINS);
      const d = (r.distributions || []).find((x) => x.metric === metric);
      const max = h.width && d ? `; the most: rank ${d.max_rank}, ${fmtNs(d.max)}` : '';
      barChart(c, { title: `Ranks by ${what} (${h.width ? `${h.labels.length} bins of ${fmtNs(h.width)}` : `all at ${h.labels[0]}`}${max})`,
        labels: h.labels, testid, xLabel: `${what} from`, hoverLabel: (l) => `from ${l}`,
        series: [{ label: 'ranks', values: h.counts }], yFmt: (v) => fmtCount(Math.round(v)), height: 200 });
    };
    distribution(list.map(rankPace), steps ? 'mean step time' : 'GPU span', 'ranks-distribution', steps ? 'step_mean_ns' : 'wall_ns');
    if (late) distribution(list.map((x) => x.late_total_ns), 'time late at collectives', 'ranks-late-distribution', 'late_total_ns');
    const worst = [...list].sort((a, b) => (a.straggler !== b.straggler ? (a.straggler ? -1 : 1)
      : b.wall_ns !== a.wall_ns ? b.wall_ns - a.wall_ns : b.late_total_ns - a.late_total_ns)).slice(0, WORST_RANKS);
    const u = barChart(c, { title: `GPU time of the ${worst.length} worst of ${list.length} ranks (stragglers * first, then the slowest)`,
      labels: worst.map((x) => `rank ${x.rank}${x.straggler ? ' *' : ''}`), stacked: true, testid: 'ranks-worst',
      series: gpuTimeSeries(worst), yFmt: fmtNs, height: 240 });
    u.root.parentElement.dataset.ranks = worst.map((x) => x.rank).join(',');
  }
  c.append(renderGeneric(r, 'ranks'));
}

export { card };

// ---- Critical path: HTA's critical path of one step (`mlprof critical-path --json`) -----------

// The parts of the path's time, in the order of the CLI's table, with one color each.
export const CP_PARTS = [
  ['cpu_bound', 'CPU-bound', '#f28e2b'],
  ['gpu_compute_bound', 'GPU compute-bound', '#59a14f'],
  ['gpu_communication_bound', 'GPU communication-bound', '#76b7b2'],
  ['gpu_kernel_launch_overhead', 'kernel launch overhead', '#e15759'],
  ['gpu_kernel_kernel_overhead', 'kernel-kernel overhead', '#b07aa1'],
];
const CP_DELAY = { critical_path_kernel_launch_delay: 'launch delay (launch -> kernel start)',
  critical_path_kernel_kernel_delay: 'kernel-kernel gap on the stream', critical_path_operator: 'CPU time between ops' };

// True when the result is worth a tab: a path, or (for a trace with GPU streams) the reason there
// is none, so users of a GPU trace learn which annotation to pass.
export function criticalPathShown(r, summary) {
  if (!r) return false;
  if (!unavailable(r) && !r.message) return true;
  // No path: on a GPU trace the tab says why (no ProfilerStep: the annotations there are).
  return !!(summary && !unavailable(summary) && summary.gpu_streams > 0);
}

// The tab: the default window's path (the first ProfilerStep), and above it the step selector
// when served live (each pick asks the server for that step's path), or in a static report a line
// saying how to see another step.
export async function criticalPath(c, src) {
  const r = await src.get('critical_path');
  if (missing(c, r, 'Critical path')) return;
  const live = typeof src.criticalPathOf === 'function';
  const body = el('div', { 'data-testid': 'cp-body' });
  const steps = r.steps || [];
  if (live && steps.length) {
    const label = (s) => `${s.name} · +${fmtNs(s.offset_ns)} · ${fmtNs(s.dur_ns)}`;
    const options = steps.map((s) => el('option', { value: String(s.number), selected: s.number === r.step }, label(s)));
    if (r.step === null || r.step === undefined) options.unshift(el('option', { value: '', selected: true }, r.window_name || 'pick a step'));
    else if (!steps.some((s) => s.number === r.step)) options.push(el('option', { value: String(r.step), selected: true }, r.window_name));
    const select = el('select', { 'data-testid': 'cp-step' }, options);
    let asked = 0;  // the latest pick wins when several are in flight
    select.addEventListener('change', async () => {
      if (select.value === '') return;
      const token = ++asked;
      const step = Number(select.value);
      c.dataset.cpLoading = '1';
      const nr = await src.criticalPathOf(step);
      if (token !== asked) return;
      body.replaceChildren();
      if (!missing(body, nr, 'Critical path')) drawCriticalPath(body, nr, live);
      c.dataset.cpStep = String(step);
      delete c.dataset.cpLoading;
    });
    c.append(el('div', { class: 'toolbar' }, el('label', {}, 'Step ', select),
      el('span', { class: 'muted', 'data-testid': 'cp-steps-count' }, `${fmtCount(r.steps_total ?? steps.length)} steps` +
        (r.steps_cut ? ` (${r.steps_cut}: ?step=N in the API)` : '') + '; times since the trace start')));
  } else if (!live && (r.steps_total || 0) > 1) {
    c.append(el('p', { class: 'muted', 'data-testid': 'cp-other-steps' }, `This report shows the critical path of ${r.window_name || 'the first step'}, ` +
      `one of ${fmtCount(r.steps_total)} steps. For another step, open the trace's folder in \`mlprof serve DIR\` and pick the step in this tab, ` +
      'or run `mlprof critical-path TRACE --step N`.'));
  }
  c.append(body);
  if (r.step !== null && r.step !== undefined) c.dataset.cpStep = String(r.step);
  drawCriticalPath(body, r, live);
}

function drawCriticalPath(c, r, live) {
  if (r.message) {
    c.append(el('p', { class: 'note', 'data-testid': 'no-data' }, `Critical path unavailable: ${r.message}. ` +
      (live ? 'Pick another step above, or for an annotation run '
        : 'The report analyzes the first ProfilerStep; for another step or annotation run ') +
      '`mlprof critical-path TRACE --annotation NAME --instance N` ("" = the whole trace).'));
    return;
  }
  const plus = (ns) => (ns < 0 ? '−' : '+') + fmtNs(Math.abs(ns));
  const win = r.window_end_offset_ns - r.window_begin_offset_ns; // exact: epoch ns lose digits as doubles
  const what = !r.annotation ? 'the whole trace'
    : `${r.window_name || r.annotation}` + (r.window_name === r.annotation && !r.instance ? '' : ` (instance ${r.instance ?? 0} of annotation "${r.annotation}")`);
  c.append(el('p', { 'data-testid': 'cp-summary' },
    'Critical path of ', el('b', { 'data-testid': 'cp-window-name' }, what), ', window ',
    el('span', { 'data-testid': 'cp-window-begin', 'data-value': String(r.window_begin_offset_ns) }, plus(r.window_begin_offset_ns)), ' .. ',
    el('span', { 'data-testid': 'cp-window-end', 'data-value': String(r.window_end_offset_ns) }, plus(r.window_end_offset_ns)),
    ` (${fmtNs(win)}, times since the trace start): `,
    el('b', { 'data-testid': 'cp-length', 'data-value': String(r.path_ns) }, fmtNs(r.path_ns)),
    ` along ${fmtCount(r.path_edges)} edges through ${fmtCount(r.path_events)} events ` +
    `(dependency graph: ${fmtCount(r.nodes)} nodes, ${fmtCount(r.edges)} edges).`));
  if (r.path_ns > win) {
    c.append(el('p', { class: 'muted' }, 'The path is longer than the window: it follows the GPU work launched in the window to its end.'));
  }
  const b = r.bound_by_ns || {};
  const gpuParts = ['gpu_compute_bound', 'gpu_communication_bound', 'gpu_kernel_launch_overhead', 'gpu_kernel_kernel_overhead'];
  const onGpu = gpuParts.some((k) => b[k] > 0);
  const e = r.edges_by_type || {};
  const gpuEdges = (e.critical_path_kernel_launch_delay || 0) + (e.critical_path_kernel_kernel_delay || 0);
  if (!r.has_sync_events && (onGpu || gpuEdges)) {
    c.append(el('p', { class: 'warnings', 'data-testid': 'cp-no-sync' }, 'No cuda_sync events in this trace (PyTorch < 2.1, or sync events off): ' +
      'the GPU -> CPU waits are missing from the graph, so time the CPU spent waiting for the GPU counts as CPU-bound.'));
  }
  if (!onGpu) {
    c.append(el('p', { class: 'note', 'data-testid': 'cp-cpu-only' }, gpuEdges
      ? 'The GPU work launched in this window is off the critical path: the whole path is CPU time (the GPU waits for the CPU; ' +
        'shorten the CPU ops below, or overlap them with the GPU, to shorten the step).'
      : 'No GPU work in this window (a CPU-only trace, or a step that launches no kernels): the whole path is CPU time.'));
  }
  // The split: one bar from 0 to the path's length, then a legend with each part's total and share.
  c.append(el('h3', {}, 'Where the path\'s time goes'));
  const total = r.path_ns || 1;
  const parts = CP_PARTS.filter(([k]) => k in b);
  const bar = el('div', { class: 'cp-bar', 'data-testid': 'cp-bar' }, parts.filter(([k]) => b[k] > 0).map(([k, label, color]) =>
    el('span', { class: 'cp-seg', 'data-part': k, style: `width:${(100 * b[k] / total).toFixed(3)}%;background:${color}`,
      title: `${label}: ${fmtNs(b[k])} (${fmtPct(100 * b[k] / total)})` })));
  const axis = el('div', { class: 'cp-axis muted' }, el('span', {}, '0'), el('span', {}, fmtNs(r.path_ns)));
  const legend = el('table', { class: 'data cp-legend', 'data-testid': 'cp-legend' },
    el('thead', {}, el('tr', {}, el('th', {}, 'bound by'), el('th', {}, 'time on the path'), el('th', {}, 'share'))),
    el('tbody', {}, parts.map(([k, label, color]) => el('tr', { 'data-part': k },
      el('td', {}, el('span', { class: 'swatch', style: `background:${color}` }), label, el('span', { class: 'muted' }, ` (${k})`)),
      el('td', { class: 'num', 'data-col': 'ns', 'data-value': String(b[k]) }, fmtNs(b[k])),
      el('td', { class: 'num', 'data-col': 'share', 'data-value': String(b[k] / total) }, fmtPct(100 * b[k] / total))))),
    el('tfoot', {}, el('tr', {}, el('td', {}, el('b', {}, 'critical path')),
      el('td', { class: 'num', 'data-col': 'ns', 'data-value': String(r.path_ns) }, el('b', {}, fmtNs(r.path_ns))), el('td', { class: 'num' }, '100.0 %'))));
  c.append(bar, axis, legend);
  // The events that take most of the path, colored by what bounds them.
  const top = (r.top_events || []).slice(0, 15);
  if (top.length) {
    const used = CP_PARTS.filter(([k]) => top.some((e) => e.bound_by === k));
    barChart(c, { title: `Top ${top.length} events by time on the path`, labels: top.map((e) => CP_DELAY[e.name] || e.name), stacked: true, testid: 'cp-events-chart',
      series: used.map(([k, label, color]) => ({ label, color, values: top.map((e) => (e.bound_by === k ? e.ns : 0)) })), yFmt: fmtNs,
      hoverLabel: (l) => l });
  }
  // Every weighted edge of the path, in time order.
  const rows = (r.path || []).map((p, i) => ({
    '#': p.index || i + 1,
    event: p.event || CP_DELAY[p.type] || p.type,
    category: p.category || (p.type === 'critical_path_operator' ? 'cpu' : 'delay'),
    offset_ns: p.offset_ns,
    dur_ns: p.ns,
    bound_by: p.bound_by,
    share: p.ns / total,
  }));
  c.append(el('h3', {}, 'Events on the path, in order'), el('p', { class: 'muted' },
    'One row per edge of the path with time: a CPU op or runtime call (its time up to the next node on the path), a GPU kernel, ' +
    'copy or set, a launch delay or a kernel-kernel gap. Start is relative to the trace start.'),
  r.path_cut ? el('p', { class: 'note', 'data-testid': 'cp-path-cut' }, `In this report: ${r.path_cut}.`) : '',
  dataTable(rows, { id: 'critical_path.path', columns: ['#', 'event', 'category', 'offset_ns', 'dur_ns', 'bound_by', 'share'], bars: 'dur_ns',
    labels: { '#': '#', category: 'kind', offset_ns: 'start', dur_ns: 'duration', bound_by: 'bound by', share: 'share of path' } }));
  if ((r.top_events || []).length) {
    const byEvent = r.top_events.map((e) => ({ name: CP_DELAY[e.name] || e.name, bound_by: e.bound_by, edges: e.edges, time_ns: e.ns, share: e.ns / total }));
    c.append(el('h3', {}, `Time on the path by event (top ${byEvent.length})`), dataTable(byEvent, { id: 'critical_path.top_events',
      columns: ['name', 'bound_by', 'edges', 'time_ns', 'share'], labels: { time_ns: 'time on the path', bound_by: 'bound by', share: 'share of path' }, bars: 'time_ns' }));
  }
  if ((r.syncs || []).length) {
    c.append(el('h3', {}, 'Synchronization edges'),
      r.syncs_cut ? el('p', { class: 'note', 'data-testid': 'cp-syncs-cut' }, `In this report: ${r.syncs_cut}.`) : '',
      dataTable(r.syncs, { id: 'critical_path.syncs' }));
  }
  c.append(el('h3', {}, 'Dependency graph'), cards(r.edges_by_type || {}, 'critical_path.edges_by_type'),
    el('p', { class: 'muted' }, 'HTA\'s critical path analysis (docs/pytorch-diagnostics.md says where mlprof differs): nodes at the start and end of every CPU op, ' +
      'runtime call and GPU event; edges for op spans and nesting, op order, kernel launch delay, kernel-kernel order on a stream, and synchronization.'));
}

// ---- CUDA graphs: replays charged to what the capture pass recorded ---------------------------

// `mlprof graphs --json`: the share of GPU time in graph replays, how much of it the capture pass
// attributes to captured ops, the cost side (graph launches against the eager launches they
// replaced), then the by-op / by-module / by-kernel tables and every replay and capture.
export async function graphs(c, src) {
  const r = await src.get('graphs');
  if (missing(c, r, 'CUDA graphs')) return;
  const replays = r.replays || [];
  const matched = replays.filter((p) => p.capture >= 0).length;
  c.append(el('p', { 'data-testid': 'graphs-summary' },
    `${fmtCount(replays.length)} graph replay${replays.length === 1 ? '' : 's'} ran ${fmtNs(r.replayed_gpu_ns)} of GPU work ` +
    `(${fmtPct(r.gpu_ns ? 100 * r.replayed_gpu_ns / r.gpu_ns : 0)} of all GPU time); ${fmtCount(matched)} matched a capture, ` +
    `${fmtNs(r.attributed_gpu_ns)} charged to the captured ops.` +
    (r.eager_launch_host_ns ? ` The matched graph launches took ${fmtNs(r.launch_host_ns)} on the host; launching their kernels one by one took ${fmtNs(r.eager_launch_host_ns)} in the capture pass.` : '')));
  const why = replays.find((p) => p.capture < 0 && p.why);
  if (why) c.append(note(`Unmatched replays: ${why.why}`));
  // -1 is the JSON's "none" for an index (no capture matched, not a re-capture): show it empty.
  const none = (v) => (v < 0 ? null : v);
  c.append(renderGeneric({
    ...r,
    captures: (r.captures || []).map((x) => ({ ...x, recapture_of: none(x.recapture_of) })),
    replays: replays.map((x) => ({ ...x, capture: none(x.capture) })),
  }, 'graphs'));
}
