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
  if (ns === null || ns === undefined || Number.isNaN(ns)) return '-';
  const a = Math.abs(ns);
  if (a >= 1e9) return (ns / 1e9).toFixed(a >= 1e11 ? 0 : 3) + ' s';
  if (a >= 1e6) return (ns / 1e6).toFixed(a >= 1e8 ? 1 : 3) + ' ms';
  if (a >= 1e3) return (ns / 1e3).toFixed(a >= 1e5 ? 1 : 2) + ' µs';
  return Math.round(ns) + ' ns';
}

export function fmtBytes(b) {
  if (b === null || b === undefined || Number.isNaN(b)) return '-';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let v = Math.abs(b), i = 0;
  while (v >= 1024 && i < units.length - 1) { v /= 1024; i++; }
  return (b < 0 ? '-' : '') + (i === 0 ? v.toFixed(0) : v.toFixed(2)) + ' ' + units[i];
}

export function fmtCount(n) {
  return typeof n === 'number' ? n.toLocaleString('en-US') : String(n);
}

// Formats a value by its JSON key's unit suffix (the schema convention of every --json output).
export function fmtByKey(key, v) {
  if (typeof v !== 'number') return v === null ? '-' : String(v);
  const k = key.toLowerCase();
  if (k.endsWith('_ns') || k.endsWith('ns') && k.includes('_ns')) return fmtNs(v);
  if (k.endsWith('_us')) return fmtNs(v * 1e3);
  if (k.endsWith('_ms')) return fmtNs(v * 1e6);
  if (k.includes('bytes') || /(^|_)(allocated|reserved)$/.test(k)) return fmtBytes(v);
  if (k.endsWith('pct') || k.endsWith('percent') || k.includes('percent_')) return v.toFixed(2) + '%';
  if (Number.isInteger(v)) return fmtCount(v);
  return Math.abs(v) >= 100 ? v.toFixed(1) : v.toPrecision(4);
}

export function humanKey(k) {
  return k.replace(/_ns$/, '').replace(/_/g, ' ');
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
