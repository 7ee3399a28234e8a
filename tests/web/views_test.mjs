// The report's HTA and TensorBoard-plugin views (issue 28 items 2, 3, 5), clicked through in
// chromium (tests/cli/web_views.sh):
//  - GPU tab: each stream's host wait / kernel wait / other idle time equals `mlprof gpu --json`;
//    with the HTA toggle on it equals `mlprof gpu --hta-compatible --json` and HTA v0.6.1's own
//    published numbers (shared/traces/reference/, µs).
//  - Operators tab grouped by input shape: each group's calls and host total equal a Python sum
//    over the trace's JSON events.
//  - Every tab of several reports: no raw field names, no "-1", NaN, undefined or [object Object]
//    in the text a user reads. With MLPROF_SCREENSHOTS=DIR, a screenshot of each tab goes there.
// Usage: node views_test.mjs MLPROF GPU_TRACE HTA_REFERENCE_JSON SHAPES_TRACE SCAN_TRACE...
// (empty = skip that part)
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';

const [mlprof, gpuTrace, htaReference, shapesTrace, ...scanTraces] = process.argv.slice(2);
const require = createRequire(process.env.MLPROF_NODE_MODULES + '/');
const { chromium } = require('playwright-core');
const shots = process.env.MLPROF_SCREENSHOTS || '';
let failures = 0, checks = 0;
function check(cond, what) { checks++; if (!cond) { failures++; console.log('FAIL', what); } }
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'mlprof-views-'));
const cliJson = (...args) => JSON.parse(execFileSync(mlprof, [...args, '--json'], { encoding: 'utf8', maxBuffer: 1 << 28 }));

// Operators grouped by (name, Input Dims) over the trace's CPU events, in Python.
const GROUPS_PY = `import gzip, json, sys
op = gzip.open if sys.argv[1].endswith('.gz') else open
d = json.load(op(sys.argv[1]))
ev = d['traceEvents'] if isinstance(d, dict) else d
gpu_cats = {'kernel', 'gpu_memcpy', 'gpu_memset', 'Kernel', 'Memcpy', 'Memset', 'gpu_user_annotation'}
g = {}
for e in ev:
    a = e.get('args') or {}
    if e.get('ph') != 'X' or 'Input Dims' not in a or e.get('cat') in gpu_cats:
        continue
    k = e['name'] + '\\t' + json.dumps(a['Input Dims'], separators=(',', ':'))
    c = g.setdefault(k, [0, 0.0])
    c[0] += 1
    c[1] += float(e.get('dur', 0))
print(json.dumps({k: v for k, v in g.items()}))`;

let seq = 0;
async function openReport(browser, input, name) {
  const out = path.join(tmp, `${name || 'r'}-${seq++}.html`);
  execFileSync(mlprof, ['report', input, '-o', out], { stdio: 'ignore', maxBuffer: 1 << 28 });
  const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.goto('file://' + out);
  page.jsErrors = errors;
  return page;
}
async function openTab(page, tab) {
  await page.click(`button[data-tab="${tab}"]`);
  await page.waitForSelector(`[data-pane="${tab}"][data-ready="1"]`, { timeout: 60000 });
}

// The idle table's rows: {stream, cause} -> time_ns (data-value, the JSON's number).
async function idleTable(page) {
  const table = page.locator('[data-pane="gpu"] [data-table="gpu.idle"]');
  const out = new Map();
  for (;;) {
    const rows = await table.locator('tbody tr').evaluateAll((trs) => trs.map((tr) => {
      const v = (c) => tr.querySelector(`td[data-col="${c}"]`).dataset.value;
      return [v('stream') + '|' + v('cause'), Number(v('time_ns'))];
    }));
    for (const [k, v] of rows) out.set(k, v);
    const next = table.locator('[data-testid="table-next"]');
    if (await next.isHidden() || await next.isDisabled()) break;
    await next.click();
  }
  return out;
}
const CAUSE = { host_wait: 'host wait', kernel_wait: 'kernel wait', other: 'other' };
function expectIdle(json, got, what) {
  const streams = json.idle_time_breakdown || [];
  check(streams.length > 0, `${what}: the JSON has streams`);
  for (const s of streams) {
    for (const [key, label] of Object.entries(CAUSE)) {
      const k = `GPU ${s.device} stream ${s.stream}|${label}`;
      check(got.get(k) === s[key].time_ns, `${what} ${k}: page ${got.get(k)} ns, JSON ${s[key].time_ns} ns`);
    }
  }
}

// Raw field names and placeholder values in what the user reads.
const RAW = /\b(?:[a-z][a-z0-9]*_)+(?:ns|us|ms|bytes|pct|ratio|rows|id|end|begin|start|share|count|fraction|gbps|idx|index)\b|\b(?:has|hta|is)_[a-z_]+\b|\bcollective_[a-z]+\b/;
const BAD = /\bNaN\b|\bundefined\b|\[object Object\]|\bInfinity\b/;
async function scanPane(page, tab) {
  return page.evaluate((tab) => {
    const pane = document.querySelector(`[data-pane="${tab}"]`);
    const found = [];
    // Labels, headings, notes, legends: no identifiers. Cells: no -1 standing for "none".
    for (const n of pane.querySelectorAll('h2, h3, h4, th, .card-label, .chart-title, .u-legend, label, option, summary, .source, .muted, .note, li, .verdict-line')) {
      // Names of ops, kernels, files and stacks are data, not labels: code spans and cells left out.
      const t = [...n.childNodes].filter((x) => x.nodeType === 3).map((x) => x.textContent).join(' ');
      if (t.trim()) found.push(['label', t]);
    }
    for (const n of pane.querySelectorAll('td, .card-value')) {
      const where = n.dataset.col ? `${n.closest('[data-table]')?.dataset.table}.${n.dataset.col}` : n.closest('[data-key]')?.dataset.key;
      found.push(['cell', n.textContent, where]);
    }
    return found;
  }, tab);
}

const browser = await chromium.launch({ executablePath: process.env.MLPROF_CHROMIUM || '/usr/bin/chromium',
  headless: true, args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'] });
try {
  // ---- GPU tab: idle breakdown vs the CLI, HTA toggle vs --hta-compatible and HTA's numbers -----
  if (gpuTrace) {
    const mine = cliJson('gpu', gpuTrace);
    const hta = cliJson('gpu', gpuTrace, '--hta-compatible');
    const page = await openReport(browser, gpuTrace, 'gpu');
    await openTab(page, 'gpu');
    check(await page.locator('[data-pane="gpu"] [data-testid="gpu-idle"]').count() === 1, 'GPU tab has the idle breakdown');
    for (const id of ['gpu-temporal', 'gpu-bandwidth', 'gpu-kernel-breakdown', 'gpu-queue']) {
      check(await page.locator(`[data-pane="gpu"] [data-testid="${id}"]`).count() === 1, `GPU tab has ${id}`);
    }
    const source = await page.locator('[data-pane="gpu"] [data-testid="gpu-idle"] [data-testid="block-source"]').textContent();
    check(/^mlprof/.test(source) && /HTA drops the last/.test(source), `idle block says mlprof and what differs: '${source}'`);
    expectIdle(mine, await idleTable(page), 'mlprof idle');
    // Copy kinds are labelled with their names on the bandwidth table.
    const kinds = await page.locator('[data-pane="gpu"] [data-table="gpu.memory_bandwidth"] td[data-col="kind"]').allTextContents();
    check(kinds.length === (mine.memory_bandwidth || []).length && kinds.every((k) => /^Mem(cpy|set)/.test(k)), `bandwidth kinds: ${kinds.join(', ')}`);
    await page.click('[data-testid="hta-toggle"]');
    await page.waitForSelector('[data-pane="gpu"] [data-testid="gpu-body"][data-hta="1"] [data-table="gpu.idle"]');
    const src2 = await page.locator('[data-pane="gpu"] [data-testid="gpu-idle"] [data-testid="block-source"]').textContent();
    check(/^HTA v0\.6\.1/.test(src2), `with the toggle the block is HTA's: '${src2}'`);
    const got = await idleTable(page);
    expectIdle(hta, got, 'HTA-compatible idle');
    if (htaReference && fs.existsSync(htaReference)) {
      const ref = JSON.parse(fs.readFileSync(htaReference, 'utf8'));
      const dev = (hta.idle_time_breakdown[0] || {}).device;
      let n = 0;
      for (const r of ref.idle_time_breakdown || []) {
        const k = `GPU ${dev} stream ${r.stream}|${CAUSE[r.idle_category]}`;
        if (!got.has(k)) { check(false, `HTA reference stream ${r.stream} not on the page`); continue; }
        n++;
        // HTA's µs; mlprof's HTA mode rounds as HTA does (docs/gpu-analysis.md: within 1 µs per interval).
        check(Math.abs(got.get(k) / 1e3 - r.idle_time) <= 1, `HTA reference ${k}: page ${got.get(k) / 1e3} µs, HTA ${r.idle_time} µs`);
      }
      check(n > 0, 'HTA reference rows compared');
      console.log(`GPU tab: ${n} HTA reference idle rows match the toggled page`);
    }
    await page.click('[data-testid="hta-toggle"]');
    await page.waitForSelector('[data-pane="gpu"] [data-testid="gpu-body"][data-hta="0"] [data-table="gpu.idle"]');
    expectIdle(mine, await idleTable(page), 'toggled back');
    check(page.jsErrors.length === 0, `GPU page errors: ${page.jsErrors.join('; ')}`);
    await page.close();
  }

  // ---- Operators grouped by input shape vs a Python sum ------------------------------------------
  if (shapesTrace) {
    const py = JSON.parse(execFileSync('python3', ['-c', GROUPS_PY, shapesTrace], { encoding: 'utf8', maxBuffer: 1 << 28 }));
    const page = await openReport(browser, shapesTrace, 'shapes');
    await openTab(page, 'operators');
    await page.selectOption('[data-testid="ops-group-by"]', 'shape');
    const table = page.locator('[data-pane="operators"] [data-table="ops.by_input_shape"]');
    await table.waitFor();
    const rows = await table.locator('tbody tr').evaluateAll((trs) => trs.slice(0, 40).map((tr) => {
      const v = (c) => tr.querySelector(`td[data-col="${c}"]`).dataset.value;
      return { name: v('name'), shape: v('input_shape'), count: Number(v('count')), total: Number(v('total_ns')) };
    }));
    check(rows.length > 0, 'grouped rows shown');
    const canon = (s) => JSON.stringify(JSON.parse(s));
    let compared = 0;
    for (const r of rows) {
      const want = py[`${r.name}\t${canon(r.shape)}`];
      if (!want) { check(false, `group ${r.name} ${r.shape} not in the Python sums`); continue; }
      compared++;
      check(r.count === want[0], `${r.name} ${r.shape}: ${r.count} calls on the page, ${want[0]} in Python`);
      // Kineto's dur is µs with a fraction; mlprof keeps ns: within 1 ns per call.
      check(Math.abs(r.total - want[1] * 1e3) <= r.count + 1, `${r.name} ${r.shape}: total ${r.total} ns on the page, ${want[1] * 1e3} ns in Python`);
    }
    const nGroups = Object.keys(py).length;
    const shownRows = Number(await table.getAttribute('data-rows'));
    check(shownRows === nGroups, `groups: ${shownRows} on the page, ${nGroups} in Python`);
    console.log(`Operators by input shape: ${compared} groups compared with Python (${nGroups} groups)`);
    check(page.jsErrors.length === 0, `operators page errors: ${page.jsErrors.join('; ')}`);
    await page.close();
  }

  // ---- every tab: no internal text ------------------------------------------------------------
  for (const input of scanTraces.filter(Boolean)) {
    const name = path.basename(input).replace(/\.(json|json\.gz|pickle|pickle\.gz|rpd|rpd\.gz|gz)$/, '').replace(/[^\w.-]+/g, '_');
    const page = await openReport(browser, input, name);
    const tabs = await page.locator('nav.tabs button[data-tab]:visible').evaluateAll((bs) => bs.map((b) => b.dataset.tab));
    for (const tab of tabs) {
      await openTab(page, tab);
      await page.waitForTimeout(150);
      if (shots) {
        fs.mkdirSync(shots, { recursive: true });
        await page.screenshot({ path: path.join(shots, `${name}-${tab}.png`), fullPage: true });
      }
      for (const [kind, text, where] of await scanPane(page, tab)) {
        const t = text.replace(/\s+/g, ' ').trim();
        if (kind === 'label') {
          const m = RAW.exec(t.replace(/`[^`]*`/g, ''));  // a command shown in backticks may name a flag
          check(!m, `${name} ${tab}: raw field name '${m && m[0]}' in '${t.slice(0, 160)}'`);
        } else {
          check(t !== '-1', `${name} ${tab}: ${where} shows -1`);
        }
        const b = BAD.exec(t);
        check(!b, `${name} ${tab}: '${b && b[0]}' in '${t.slice(0, 160)}'`);
      }
    }
    check(page.jsErrors.length === 0, `${name} page errors: ${page.jsErrors.join('; ')}`);
    console.log(`scanned ${name}: ${tabs.join(', ')}`);
    await page.close();
  }
} finally {
  await browser.close();
}
console.log(`${checks - failures}/${checks} checks passed`);
process.exit(failures ? 1 : 0);
