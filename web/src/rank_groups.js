// The dashboard's Ranks tab (`mlprof serve`): a served directory may hold the traces of several
// jobs and traces of no job at all. The server groups them by job (distributedInfo world size,
// rank ids, start times: /api/ranks/groups); the user picks a job and the Ranks view compares
// that job's ranks only. Traces without distributedInfo are listed, never analysed as ranks.
import { el, fmtNs, note } from './util.js';
import { ranks } from './views.js';

async function json(url) {
  const r = await fetch(url);
  const body = await r.json().catch(() => ({}));
  return r.ok ? body : { unavailable: body.error || `HTTP ${r.status}` };
}

function groupLabel(g, t0) {
  const ranksText = g.traces.map((t) => t.rank).join(', ');
  const start = g.begin_ns - t0;
  const size = g.world_size > 0 ? g.world_size : 'unknown';
  return `Job ${g.id + 1}: world size ${size}, ${g.traces_count}${g.world_size > 0 ? ` of ${g.world_size}` : ''} ranks (${ranksText})` +
    `${g.complete || g.world_size <= 0 ? '' : ', incomplete'}${start > 0 ? `, starts ${fmtNs(start)} after the first` : ''}`;
}

export async function rankGroups(c) {
  const data = await json('api/ranks/groups');
  if (data.unavailable) { c.append(note(`Ranks: ${data.unavailable}`)); return; }
  const groups = data.groups || [], unrelated = data.unrelated || [];
  const t0 = groups.reduce((a, g) => Math.min(a, g.begin_ns), Infinity);
  const box = el('div', { class: 'rank-groups', 'data-testid': 'rank-groups', 'data-groups': String(groups.length) });
  c.append(box);
  const body = el('div', { class: 'rank-group-body' });
  if (!groups.length) {
    box.append(note('No traces of a distributed job here: none has distributedInfo (rank and world size), so none is analysed as a rank.'));
  } else {
    const select = el('select', { 'data-testid': 'rank-group-select' },
      groups.map((g) => el('option', { value: String(g.id) }, groupLabel(g, t0))));
    box.append(el('p', {}, `The traces here are from ${groups.length === 1 ? 'one job' : groups.length + ' jobs'} ` +
      `(grouped by distributedInfo: world size, one trace per rank id, starts within ${Math.round(data.window_s / 60)} minutes). ` +
      'The Ranks view compares the ranks of one job: '), el('label', {}, 'Job ', select));
    const list = el('ul', { class: 'plain', 'data-testid': 'rank-group-traces' });
    box.append(list);
    const show = async () => {
      const g = groups.find((x) => String(x.id) === select.value) || groups[0];
      list.replaceChildren(...g.traces.map((t) => el('li', { 'data-rank': String(t.rank) }, `rank ${t.rank}: ${t.name}`)));
      body.replaceChildren();
      body.dataset.ready = '';
      const r = await json(`api/profiler/ranks?group=${encodeURIComponent(g.id)}`);
      await ranks(body, { get: async () => r });
      body.dataset.ready = '1';
      body.dataset.group = String(g.id);
    };
    select.addEventListener('change', show);
    await show();
  }
  if (unrelated.length) {
    c.append(el('h3', {}, `Not analysed as ranks (${unrelated.length})`),
      el('ul', { class: 'plain', 'data-testid': 'rank-unrelated' }, unrelated.map((u) => el('li', { 'data-name': u.name }, `${u.name}: ${u.why}`))));
  }
  c.append(body);
}
