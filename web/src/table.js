// Sortable, filterable, paginated table over rows of JSON objects. Cells keep the raw number in
// data-value so tests (and users copying values) see exactly what the CLI's --json printed. Only
// one page of rows is in the DOM at a time, so a 100k-row table costs what a 100-row one does.
import { el, fmtByKey, humanKey, midEllipsis } from './util.js';

// Longer text cells are shortened in the middle (the full text on hover).
const CELL_CHARS = 90;
import { definition, labelOf } from './defs.js';

export const PAGE_SIZE = 100;
const STAT_COLS = new Set(['min', 'p50', 'p90', 'p99', 'max', 'mean']);

// device_id: the device column names it ("CUDA:0"; -1 for the CPU).
const INTERNAL = /^has_|^hta_|_rule$|^rule$|_reconstructed$|^kind$|^device_type$|^device_id$|^varies$/;

export function columnsOf(rows) {
  const cols = [];
  const seen = new Set();
  for (const r of rows.slice(0, 50)) {
    for (const [k, v] of Object.entries(r)) {
      if (seen.has(k) || (v !== null && typeof v === 'object') || INTERNAL.test(k)) continue;
      seen.add(k);
      cols.push(k);
    }
  }
  return cols;
}

// columns: keys to show; labels: {key: header text}; pageSize: rows per page; bars: the column
// drawn as an in-cell bar (total_ns by default); sort: [key, desc] to start with.
// format: {key: (value, row) => text} for a column whose unit is not its key's suffix.
export function dataTable(rows, { id, columns, caption, bars, labels = {}, pageSize = PAGE_SIZE, sort, format = {} } = {}) {
  const cols = columns || columnsOf(rows);
  let sortKey = sort ? sort[0] : null, sortDesc = sort ? sort[1] !== false : true, filter = '', page = 0;
  const wrap = el('div', { class: 'table-wrap', 'data-table': id || '', 'data-rows': String(rows.length) });
  const input = el('input', {
    class: 'filter', type: 'search', placeholder: 'filter…', 'data-testid': 'table-filter',
    oninput: (e) => { filter = e.target.value.toLowerCase(); page = 0; draw(); },
  });
  const count = el('span', { class: 'muted', 'data-testid': 'table-count' });
  const prev = el('button', { 'data-testid': 'table-prev', onclick: () => { page--; draw(); } }, '‹ prev');
  const next = el('button', { 'data-testid': 'table-next', onclick: () => { page++; draw(); } }, 'next ›');
  const pager = el('span', { class: 'pager' }, prev, next);
  const table = el('table', { class: 'data' });
  const barKey = bars || cols.find((c) => c === 'total_ns') || null;
  wrap.append(el('div', { class: 'table-tools' }, caption ? el('b', {}, caption) : null, input, count, pager),
    el('div', { class: 'table-scroll' }, table));

  function draw() {
    let view = rows;
    if (filter) {
      view = rows.filter((r) => cols.some((c) => String(r[c] ?? '').toLowerCase().includes(filter)));
    }
    if (sortKey) {
      view = [...view].sort((a, b) => {
        const x = a[sortKey], y = b[sortKey];
        const c = typeof x === 'number' && typeof y === 'number' ? x - y : String(x).localeCompare(String(y));
        return sortDesc ? -c : c;
      });
    }
    const pages = Math.max(1, Math.ceil(view.length / pageSize));
    page = Math.min(Math.max(0, page), pages - 1);
    const first = page * pageSize;
    const shown = view.slice(first, first + pageSize);
    let max = 1;
    if (barKey) for (const r of view) max = Math.max(max, Number(r[barKey]) || 0);
    const thead = el('thead', {}, el('tr', {}, cols.map((c) => el('th', {
      'data-col': c,
      title: definition(`${id}.${c}`, c) || undefined,
      class: c === sortKey ? (sortDesc ? 'sorted desc' : 'sorted asc') : '',
      onclick: () => { if (sortKey === c) sortDesc = !sortDesc; else { sortKey = c; sortDesc = true; } page = 0; draw(); },
    }, labels[c] || labelOf(`${id}.${c}`, c) || humanKey(c)))));
    const tbody = el('tbody');
    for (const r of shown) {
      tbody.append(el('tr', {}, cols.map((c) => {
        const v = r[c];
        // A row naming its metric (the ranks' distributions: step_mean_ns, memory_peak_bytes)
        // gives its statistics that metric's unit; they were raw ns.
        const text = format[c] && v !== null && v !== undefined ? format[c](v, r)
          : c === 'metric' && typeof v === 'string' ? labelOf(null, v) || humanKey(v)
          : fmtByKey(typeof r.metric === 'string' && STAT_COLS.has(c) ? r.metric : c, v);
        const long = typeof text === 'string' && text.length > CELL_CHARS;
        const td = el('td', { class: typeof v === 'number' ? 'num' : '', 'data-col': c,
          'data-value': v === undefined ? '' : String(v), title: typeof v === 'string' && v.length > 60 ? v : undefined },
        long ? midEllipsis(text, CELL_CHARS) : text);
        if (c === barKey && typeof v === 'number') {
          td.prepend(el('span', { class: 'bar', style: `width:${(100 * v / max).toFixed(1)}%` }));
        }
        return td;
      })));
    }
    table.replaceChildren(thead, tbody);
    count.textContent = view.length > pageSize
      ? `rows ${(first + 1).toLocaleString('en-US')}–${(first + shown.length).toLocaleString('en-US')} of ${view.length.toLocaleString('en-US')}`
      : `${view.length.toLocaleString('en-US')} ${view.length === 1 ? 'row' : 'rows'}`;
    pager.hidden = view.length <= pageSize;
    prev.disabled = page === 0;
    next.disabled = page >= pages - 1;
    wrap.dataset.page = String(page);
  }
  draw();
  return wrap;
}
