// Renders any analysis result (the JSON of `mlprof X --json`): scalars become key-number cards,
// arrays of objects become sortable tables, nested objects become sections. Every number keeps
// its JSON path in data-key and its raw value in data-value, and has a unit (from its key's
// suffix) and, where one is known, a hover definition. Internal fields (flags such as has_gpu,
// rule texts, kinds) are not cards: rules and definitions go to a "how computed" note.
import { el, fmtByKey, humanKey } from './util.js';
import { dataTable } from './table.js';
import { definition, labelOf } from './defs.js';

// Fields that describe how a result was computed rather than measure anything.
export function isInternalKey(k) {
  return /^schema$|^has_|^hta_|_rule$|^rule$|_reconstructed$|^kind$|^definition$|^message$|^device_type$|^device_id$|^generator$|^varies$/.test(k);
}

export function card(path, key, v, { label, unitKey, title, cls } = {}) {
  const tip = title || definition(path, key);
  return el('div', { class: 'card' + (cls ? ' ' + cls : ''), 'data-key': path, 'data-value': String(v), title: tip || undefined },
    el('div', { class: 'card-value' }, fmtByKey(unitKey || key, v)),
    el('div', { class: 'card-label' }, label || labelOf(path, key) || humanKey(key), tip ? el('span', { class: 'info' }, 'i') : null));
}

// unitKey: the key whose unit suffix applies to every value (children of "phase_total_ns").
export function cards(obj, prefix, keys, unitKey) {
  const grid = el('div', { class: 'cards' });
  for (const k of keys || Object.keys(obj)) {
    const v = obj[k];
    if (v !== null && typeof v === 'object') continue;
    if (v === undefined || isInternalKey(k)) continue;
    // A sentence (the ranks' clock note, a file path) is text, not an 18px headline number.
    // A describe()'s count is a count whatever the unit of its statistics.
    grid.append(card(`${prefix}.${k}`, k, v, { unitKey: k === 'count' ? undefined : unitKey, cls: typeof v === 'string' && v.length > 40 ? 'text' : undefined }));
  }
  return grid;
}

// The rule texts and definitions of a result, shown as a collapsed note.
function howComputed(obj) {
  const items = Object.entries(obj).filter(([k, v]) => typeof v === 'string' && /_rule$|^rule$|^definition$/.test(k));
  if (!items.length) return null;
  return el('details', { class: 'how' }, el('summary', {}, 'How these numbers are computed'),
    el('ul', { class: 'plain' }, items.map(([k, v]) => el('li', {}, el('b', {}, humanKey(k) + ': '), v))));
}

export function renderGeneric(obj, prefix, depth = 0, unitKey) {
  const out = el('div', { class: 'generic' });
  if (Array.isArray(obj)) {
    out.append(arrayView(obj, prefix, prefix.split('.').pop()));
    return out;
  }
  if (typeof obj.message === 'string' && obj.message) out.append(el('p', { class: 'note' }, obj.message));
  const scalarKeys = Object.keys(obj).filter((k) => (obj[k] === null || typeof obj[k] !== 'object') && !isInternalKey(k));
  if (scalarKeys.length) out.append(cards(obj, prefix, scalarKeys, unitKey));
  for (const [k, v] of Object.entries(obj)) {
    if (v === null || typeof v !== 'object') continue;
    const path = `${prefix}.${k}`;
    const section = el('section', { class: 'sub', 'data-section': path });
    section.append(el(depth === 0 ? 'h3' : 'h4', {}, humanKey(k)));
    if (Array.isArray(v)) section.append(arrayView(v, path, k));
    // A child object's values take the unit of its key: phase_total_ns, bytes_by_state (bytes),
    // blocks_by_state (counts, not bytes although the states are named "active_allocated").
    // cpu_duration_us (a describe() of µs: mean, p50, max... were unitless).
    else section.append(renderGeneric(v, path, depth + 1, /_(ns|us|bytes|pct)$|^(bytes|blocks)_by_/.test(k) ? k : undefined));
    out.append(section);
  }
  const how = howComputed(obj);
  if (how) out.append(how);
  return out;
}

function arrayView(arr, path, id) {
  if (arr.length === 0) return el('p', { class: 'muted' }, 'none');
  if (arr.every((x) => x !== null && typeof x === 'object' && !Array.isArray(x))) {
    return dataTable(arr, { id: path });
  }
  if (arr.every((x) => x === null || typeof x !== 'object')) {
    if (arr.length > 200) return el('p', { class: 'muted', 'data-key': path }, `${arr.length.toLocaleString('en-US')} values (in the JSON)`);
    return el('ul', { class: 'plain inline', 'data-key': path }, arr.map((x) => el('li', {}, fmtByKey(id, x))));
  }
  if (arr.every((x) => Array.isArray(x))) {
    return el('p', { class: 'muted', 'data-key': path }, `${arr.length.toLocaleString('en-US')} points (a series; in the JSON)`);
  }
  return el('pre', { class: 'json' }, JSON.stringify(arr, null, 1).slice(0, 20000));
}
