// Formatting and DOM helpers shared by every view.

export function el(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'class') e.className = v;
    else if (k === 'text') e.textContent = v;
    else if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return e;
}

export function fmtNs(ns) {
  if (ns === null || ns === undefined || Number.isNaN(ns)) return 'n/a';
  const a = Math.abs(ns);
  if (a >= 1e9) return (ns / 1e9).toFixed(a >= 1e11 ? 0 : 3) + ' s';
  if (a >= 1e6) return (ns / 1e6).toFixed(a >= 1e8 ? 1 : 3) + ' ms';
  if (a >= 1e3) return (ns / 1e3).toFixed(a >= 1e5 ? 1 : 2) + ' µs';
  return Math.round(ns) + ' ns';
}

// Axis ticks: "2.5 ms", not "2.500 ms".
export function fmtNsTick(ns) {
  return fmtNs(ns).replace(/(\.\d*?)0+ /, '$1 ').replace(/\. /, ' ');
}

export function fmtBytes(b) {
  if (b === null || b === undefined || Number.isNaN(b)) return 'n/a';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let v = Math.abs(b), i = 0;
  while (v >= 1024 && i < units.length - 1) { v /= 1024; i++; }
  return (b < 0 ? '-' : '') + (i === 0 ? v.toFixed(0) : v.toFixed(2)) + ' ' + units[i];
}

// Byte axis ticks: "512 KiB", "1.5 MiB" (no trailing zeros).
export function fmtBytesTick(b) {
  return fmtBytes(b).replace(/\.0+ /, ' ').replace(/(\.\d*?)0+ /, '$1 ');
}

// Long names shortened in the middle ("void at::native::elem…float>(int, float)"), keeping the
// head and the tail, where names of one family differ (kernel template arguments, shapes).
export function midEllipsis(s, max) {
  s = String(s);
  if (s.length <= max) return s;
  const head = Math.ceil((max - 1) * 0.45);
  return s.slice(0, head) + '…' + s.slice(s.length - (max - 1 - head));
}

// Each label shortened to `max` characters; where two shortened labels would read the same
// (kernels of one template family), the part where the full names first differ is shown instead
// of the middle: "void cudnn…kernel_new<float, 2, …".
export function distinctLabels(labels, max) {
  const full = labels.map(String);
  const out = full.map((l) => midEllipsis(l, max));
  const groups = new Map();
  out.forEach((s, i) => { if (!groups.has(s)) groups.set(s, []); groups.get(s).push(i); });
  for (const ix of groups.values()) {
    if (ix.length < 2) continue;
    for (const i of ix) {
      const a = full[i];
      let p = 0;  // where a first differs from the others of its group
      for (const j of ix) {
        if (j === i || full[j] === a) continue;
        let k = 0;
        while (k < a.length && a[k] === full[j][k]) k++;
        p = Math.max(p, k);
      }
      const head = Math.min(8, Math.floor(max / 3));
      const from = Math.max(head, p - 4);
      const to = Math.min(a.length, from + max - head - 2);
      out[i] = from <= head && to >= a.length ? a : a.slice(0, head) + (from > head ? '…' : '') + a.slice(from, to) + (to < a.length ? '…' : '');
    }
  }
  // Still equal (names that differ only past the window): numbered.
  const seen = new Map();
  return out.map((s, i) => {
    const n = (seen.get(s) || 0) + 1;
    seen.set(s, n);
    return n > 1 && full[i] !== full[out.indexOf(s)] ? `${s} (${n})` : s;
  });
}

export function fmtCount(n) {
  return typeof n === 'number' ? n.toLocaleString('en-US') : String(n);
}

// The trace's first timestamp (summary.begin_ns): absolute times (begin_ns, ts_ns, ...) are shown
// relative to it, never as epoch seconds.
let origin = null;
let traceSpan = null;
export function setOrigin(ns, span) {
  origin = typeof ns === 'number' && Number.isFinite(ns) ? ns : null;
  traceSpan = origin !== null && typeof span === 'number' && span > 0 ? span : null;
}
export function getOrigin() { return origin; }
// The trace's span (summary.span_ns): time axes run from 0 to it, so charts line up.
export function getSpan() { return traceSpan; }

// Keys whose values are points in time (ns on the trace's clock), not durations.
export function isTimestampKey(key) {
  return /(^|_)(begin|end|ts|start)(_ns)?$/.test(key) && !/(^|_)span/.test(key) &&
    key !== 'time_ns';
}

// "+1.234 s": a point in time relative to the trace start.
export function fmtTime(ns) {
  if (ns === null || ns === undefined || Number.isNaN(ns)) return 'n/a';
  const rel = origin !== null ? ns - origin : ns;
  return (rel < 0 ? '−' : '+') + fmtNs(Math.abs(rel));
}

// Formats a value by its JSON key's unit suffix (the schema convention of every --json output).
export function fmtByKey(key, v) {
  if (typeof v === 'boolean') return v ? 'yes' : 'no';
  if (typeof v !== 'number') return v === null ? 'n/a' : String(v);
  const k = key.toLowerCase();
  if (k.endsWith('_ns') && isTimestampKey(k)) return fmtTime(v);
  // Offsets from the trace start (exact where epoch ns would lose digits as doubles): "+1.5 ms".
  if (/(^|_)offset_ns$/.test(k) && !k.startsWith('clock')) return (v < 0 ? '−' : '+') + fmtNs(Math.abs(v));
  if (k.endsWith('_ns') || k.endsWith('ns') && k.includes('_ns') || /(^|_)ns_/.test(k)) return fmtNs(v);  // gpu_ns_in_compiled
  // A memory snapshot's recorded times (start_time_us, first/last/peak_time_us): epoch µs.
  if (/(^|_)time_us$/.test(k)) return fmtTime(v * 1e3);
  if (k.endsWith('_us')) return fmtNs(v * 1e3);
  if (k.endsWith('_ms')) return fmtNs(v * 1e6);
  if (k === 'address' || k.endsWith('_address')) return '0x' + v.toString(16);  // as the CLI prints it
  // -1 for "none" in indexes and step numbers (the leak analysis' change_index, growth_start_step).
  if (v === -1 && /(^|_)(index|step|idx|parent)$/.test(k)) return 'none';
  // The caching allocator's max_split_size: -1 = no limit.
  if (k === 'max_split_size') return v < 0 ? 'no limit' : fmtBytes(v);
  if (k.startsWith('fragmentation')) return (100 * v).toFixed(1) + ' %';
  if (k.includes('bytes') || /(^|_)(allocated|reserved)$/.test(k)) return v === -1 ? 'n/a' : fmtBytes(v);  // -1: not recorded
  if (k.endsWith('pct') || k.endsWith('percent') || k.includes('percent_')) return v.toFixed(2) + ' %';
  if (k === 'share' || k.endsWith('_share') || k.endsWith('_fraction') || k.endsWith('_ratio') || k === 'ratio' || k === 'mfu' ||
      k === 'utilization' || k.endsWith('_utilization') || k.endsWith('_efficiency')) return (100 * v).toFixed(2) + ' %';
  if (k.endsWith('tflops')) return v.toFixed(1) + ' TFLOP/s';
  if (k.endsWith('flops') || /(^|_)flops_/.test(k)) return fmtFlops(v);  // flops_self
  if (k.endsWith('_gbps')) return v.toFixed(2) + ' GB/s';
  if (k.endsWith('tflops_per_s')) return v.toFixed(3) + ' TFLOP/s';
  if (Number.isInteger(v)) return fmtCount(v);
  return Math.abs(v) >= 100 ? v.toFixed(1) : v.toPrecision(4);
}

export function fmtFlops(v) {
  const a = Math.abs(v);
  if (a >= 1e15) return (v / 1e15).toFixed(2) + ' PFLOP';
  if (a >= 1e12) return (v / 1e12).toFixed(2) + ' TFLOP';
  if (a >= 1e9) return (v / 1e9).toFixed(2) + ' GFLOP';
  if (a >= 1e6) return (v / 1e6).toFixed(2) + ' MFLOP';
  return fmtCount(v) + ' FLOP';
}

export function fmtPct(v, digits = 1) {
  return v === null || v === undefined || Number.isNaN(v) ? 'n/a' : v.toFixed(digits) + ' %';
}

export function humanKey(k) {
  return k.replace(/_(ns|us)$/, '').replace(/_ns_/, '_time_').replace(/_/g, ' ');
}

export function hashColor(s, gpu) {
  let h = 2166136261;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 16777619);
  const hue = gpu ? 90 + ((h >>> 0) % 80) : ((h >>> 0) % 60) + 10;  // GPU greens, CPU warm
  const light = 55 + ((h >>> 8) % 15);
  return `hsl(${hue},65%,${light}%)`;
}

export function unavailable(result) {
  return result && typeof result === 'object' && !Array.isArray(result) &&
         typeof result.unavailable === 'string' ? result.unavailable : null;
}

export function note(text, cls = 'note') {
  return el('p', { class: cls, 'data-testid': 'no-data' }, text);
}
