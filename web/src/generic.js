// Renders any analysis result (the JSON of `mlprof X --json`): scalars become key-number cards,
// arrays of objects become sortable tables, nested objects become sections. Every number keeps
// its JSON path in data-key and its raw value in data-value.
import { el, fmtByKey, humanKey } from './util.js';
import { dataTable } from './table.js';

// unitKey: the key whose unit suffix applies to every value (children of "phase_total_ns").
export function cards(obj, prefix, keys, unitKey) {
  const grid = el('div', { class: 'cards' });
  for (const k of keys || Object.keys(obj)) {
    const v = obj[k];
    if (v !== null && typeof v === 'object') continue;
    if (v === undefined) continue;
    grid.append(el('div', { class: 'card', 'data-key': `${prefix}.${k}`, 'data-value': String(v) },
      el('div', { class: 'card-value' }, fmtByKey(unitKey || k, v)),
      el('div', { class: 'card-label' }, humanKey(k))));
  }
  return grid;
}

export function renderGeneric(obj, prefix, depth = 0, unitKey) {
  const out = el('div', { class: 'generic' });
  if (Array.isArray(obj)) {
    out.append(arrayView(obj, prefix, prefix.split('.').pop()));
    return out;
  }
  const scalarKeys = Object.keys(obj).filter((k) => obj[k] === null || typeof obj[k] !== 'object');
  if (scalarKeys.length) out.append(cards(obj, prefix, scalarKeys, unitKey));
  for (const [k, v] of Object.entries(obj)) {
    if (v === null || typeof v !== 'object') continue;
    const path = `${prefix}.${k}`;
    const section = el('section', { class: 'sub', 'data-section': path });
    section.append(el(depth === 0 ? 'h3' : 'h4', {}, humanKey(k)));
    if (Array.isArray(v)) section.append(arrayView(v, path, k));
    else section.append(renderGeneric(v, path, depth + 1, /_(ns|bytes|pct)$/.test(k) ? k : undefined));
    out.append(section);
  }
  return out;
}

function arrayView(arr, path, id) {
  if (arr.length === 0) return el('p', { class: 'muted' }, 'none');
  if (arr.every((x) => x !== null && typeof x === 'object' && !Array.isArray(x))) {
    return dataTable(arr, { id: path });
  }
  if (arr.every((x) => x === null || typeof x !== 'object')) {
    return el('ul', { class: 'plain', 'data-key': path }, arr.map((x) => el('li', {}, fmtByKey(id, x))));
  }
  return el('pre', { class: 'json' }, JSON.stringify(arr, null, 1).slice(0, 20000));
}
