// Sortable, filterable table over rows of JSON objects. Cells keep the raw number in data-value
// so tests (and users copying values) see exactly what the CLI's --json printed.
import { el, fmtByKey, humanKey } from './util.js';

const MAX_ROWS = 500;

export function columnsOf(rows) {
  const cols = [];
  const seen = new Set();
  for (const r of rows.slice(0, 50)) {
    for (const [k, v] of Object.entries(r)) {
      if (seen.has(k) || (v !== null && typeof v === 'object')) continue;
      seen.add(k);
      cols.push(k);
    }
  }
  return cols;
}

export function dataTable(rows, { id, columns, caption, bars } = {}) {
  const cols = columns || columnsOf(rows);
  let sortKey = null, sortDesc = true, filter = '';
  const wrap = el('div', { class: 'table-wrap', 'data-table': id || '' });
  const input = el('input', {
    class: 'filter', type: 'search', placeholder: 'filter…', 'data-testid': 'table-filter',
    oninput: (e) => { filter = e.target.value.toLowerCase(); draw(); },
  });
  const count = el('span', { class: 'muted' });
  const table = el('table', { class: 'data' });
  const barKey = bars || cols.find((c) => c === 'total_ns') || null;
  wrap.append(el('div', { class: 'table-tools' }, caption ? el('b', {}, caption) : null, input, count), table);

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
    const max = barKey ? Math.max(1, ...view.map((r) => Number(r[barKey]) || 0)) : 1;
    const thead = el('thead', {}, el('tr', {}, cols.map((c) => el('th', {
      'data-col': c,
      class: c === sortKey ? (sortDesc ? 'sorted desc' : 'sorted asc') : '',
      onclick: () => { if (sortKey === c) sortDesc = !sortDesc; else { sortKey = c; sortDesc = true; } draw(); },
    }, humanKey(c)))));
    const tbody = el('tbody');
    for (const r of view.slice(0, MAX_ROWS)) {
      tbody.append(el('tr', {}, cols.map((c) => {
        const v = r[c];
        const td = el('td', { class: typeof v === 'number' ? 'num' : '', 'data-col': c,
          'data-value': v === undefined ? '' : String(v) }, fmtByKey(c, v));
        if (c === barKey && typeof v === 'number') {
          td.prepend(el('span', { class: 'bar', style: `width:${(100 * v / max).toFixed(1)}%` }));
        }
        return td;
      })));
    }
    table.replaceChildren(thead, tbody);
    count.textContent = `${view.length} rows` + (view.length > MAX_ROWS ? ` (first ${MAX_ROWS} shown)` : '');
  }
  draw();
  return wrap;
}
