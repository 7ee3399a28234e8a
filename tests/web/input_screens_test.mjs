// Inputs that are not profiles get their own first screen (issue 28 item 4), and the dashboard's
// Ranks view is over one job (item 6), in Debian's chromium:
//  - a torch.compile log's Overview names its failure / graph break (expected: tests/web/
//    input_reference.py's reading of the log), links each compile id to its detail, and only the
//    Overview and torch.compile tabs exist;
//  - a CUDA memory snapshot's Overview shows the peak memory_viz's replay gives (input_reference.py
//    with Python's pickle), what was live then by stack, fragmentation with its definition, and no
//    tab that cannot apply (Kernels, GPU, Roofline, Modules, torch.compile, Critical path, Ranks);
//  - `mlprof serve` on a folder with two jobs' ranks and an unrelated trace groups them as the
//    files' distributedInfo says, and the Ranks view analyses only the picked job.
// Screenshots of both first screens and of the dashboard's Ranks tab go to OUT_DIR.
//  - a snapshot taken at a real OOM (an H100, tests/data/h100/oom/) leads with the OOM: bytes
//    requested and free as PyTorch's own OutOfMemoryError message says (oom_info.json beside it),
//    the site, and what held the memory then, summing to the bytes in use that input_reference.py
//    replays (and torch.cuda.memory_allocated() reported).
// Usage: node input_screens_test.mjs MLPROF OUT_DIR FAILURE_LOG BREAK_LOG SNAPSHOT OOM_SNAPSHOT
// (env MLPROF_NODE_MODULES)
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';

const [mlprof, outDir, failureLog, breakLog, snapshot, oomSnapshot] = process.argv.slice(2);
const require = createRequire(process.env.MLPROF_NODE_MODULES + '/');
const { chromium } = require('playwright-core');
const HERE = path.dirname(fileURLToPath(import.meta.url));
const VIEW = { width: 1400, height: 900 };
let failures = 0, checks = 0;
function check(cond, what) { checks++; if (!cond) { failures++; console.log('FAIL', what); } }
const py = (...args) => JSON.parse(execFileSync('python3', [path.join(HERE, 'input_reference.py'), ...args], { encoding: 'utf8', maxBuffer: 1 << 26 }));
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'mlprof-inputs-'));
fs.mkdirSync(outDir, { recursive: true });

async function tabsShown(page) {
  await page.waitForSelector('nav.tabs[data-tabs-ready="1"]', { timeout: 30000 });
  await page.waitForTimeout(200);  // the optional tabs' own checks
  return page.locator('nav.tabs button.tab').evaluateAll((bs) => bs.filter((b) => !b.hidden).map((b) => b.dataset.tab));
}

async function openOverview(page, url) {
  await page.goto(url);
  await page.waitForSelector('[data-pane="overview"][data-ready="1"]', { timeout: 60000 });
}

async function compileLog(browser, log, shot) {
  const want = py('compile', log);
  const html = path.join(tmp, path.basename(log) + '.html');
  execFileSync(mlprof, ['report', log, '-o', html], { stdio: 'ignore' });
  const page = await browser.newPage({ viewport: VIEW });
  await openOverview(page, 'file://' + html);
  const tabs = await tabsShown(page);
  check(JSON.stringify(tabs) === JSON.stringify(['overview', 'compile']), `${shot}: tabs ${tabs.join(',')} (want overview,compile)`);
  const verdict = await page.locator('[data-testid="input-verdict"]').innerText();
  const box = await page.locator('[data-testid="input-verdict"]').boundingBox();
  check(box && box.y + box.height <= VIEW.height, `${shot}: the verdict is above the fold`);
  for (const f of want.failures) {
    check(verdict.includes(f.type) && verdict.includes(f.id), `${shot}: verdict names failure ${f.id} ${f.type}: '${verdict}'`);
    const row = await page.locator('[data-testid="compile-failures"] tbody tr').filter({ hasText: f.type }).count();
    check(row === 1, `${shot}: failures table has ${f.type}`);
  }
  if (!want.failures.length) check(await page.locator('[data-testid="compile-failures"]').count() === 0, `${shot}: no failures table`);
  for (const reason of want.graph_breaks) {
    check(verdict.includes(reason), `${shot}: verdict names graph break '${reason}'`);
    const rows = await page.locator('[data-testid="compile-graph-breaks"] tbody tr').filter({ hasText: reason }).allInnerTexts();
    check(rows.length >= 1 && rows.every((t) => /\.py:\d+ in /.test(t)), `${shot}: graph break rows with their user frames: ${JSON.stringify(rows)}`);
  }
  const breakRows = await page.locator('[data-testid="compile-graph-breaks"] tbody tr').count();
  check(breakRows === 0 ? want.graph_breaks.length === 0 : breakRows >= want.graph_breaks.length, `${shot}: ${breakRows} graph break rows`);
  check(await page.locator('[data-testid="compile-phase-chart"] canvas').count() === 1, `${shot}: compile time by phase chart`);
  check(await page.locator('[data-testid="compile-cache"] .card').count() === 3, `${shot}: cache hits/misses cards`);
  // A compile id links to its details.
  const link = page.locator('[data-testid="compile-ids"] a.compile-id-link').first();
  const id = await link.innerText();
  await link.click();
  const detail = page.locator(`details.compile-detail[data-compile-id="${id}"]`);
  check(await detail.evaluate((d) => d.open), `${shot}: clicking ${id} opens its details`);
  await page.evaluate(() => window.scrollTo(0, 0));
  await page.screenshot({ path: path.join(outDir, `${shot}.png`) });
  await page.close();
}

async function snapshotScreen(browser) {
  const want = py('snapshot', snapshot);
  const html = path.join(tmp, 'snapshot.html');
  execFileSync(mlprof, ['report', snapshot, '-o', html], { stdio: 'ignore' });
  const page = await browser.newPage({ viewport: VIEW });
  await openOverview(page, 'file://' + html);
  const tabs = await tabsShown(page);
  for (const t of ['kernels', 'gpu', 'roofline', 'modules', 'compile', 'critical_path', 'ranks', 'compare']) {
    check(!tabs.includes(t), `snapshot: no ${t} tab (shown: ${tabs.join(',')})`);
    check(await page.locator(`button[data-tab="${t}"]`).count() === 0, `snapshot: ${t} tab absent from the page`);
  }
  check(tabs.includes('memory') && tabs[0] === 'overview', `snapshot: overview and memory tabs (${tabs.join(',')})`);
  for (const d of want.devices) {
    const node = page.locator(`[data-testid="snapshot-peak"][data-key="memory_snapshot.devices.${d.device}.peak_active_bytes"]`);
    check(await node.count() === 1, `snapshot: peak line of GPU ${d.device}`);
    const got = Number(await node.getAttribute('data-value'));
    check(got === d.peak_active_bytes, `snapshot: GPU ${d.device} peak ${got} vs Python replay ${d.peak_active_bytes}`);
    const shown = await node.innerText();
    const mib = (d.peak_active_bytes / 2 ** 20).toFixed(1);
    check(shown.includes(mib) || shown.includes((d.peak_active_bytes / 2 ** 30).toFixed(2)), `snapshot: peak shown '${shown}' (${mib} MiB)`);
    const box = await node.boundingBox();
    check(box && box.y + box.height <= VIEW.height, 'snapshot: the peak is above the fold');
  }
  const live = await page.locator('[data-testid="snapshot-live-at-peak"] tbody tr').evaluateAll((rs) => rs.map((r) => Number(r.dataset.bytes)));
  const peak = want.devices[0]?.peak_active_bytes ?? 0;
  const sum = live.reduce((a, b) => a + b, 0);
  check(live.length > 0 && sum <= peak && live.every((v, i) => i === 0 || live[i - 1] >= v), `snapshot: live-at-peak stacks, largest first, sum ${sum} <= peak ${peak}`);
  const def = await page.locator('[data-testid="snapshot-fragmentation-def"]').innerText();
  check(/largest free block/.test(def), `snapshot: fragmentation's definition shown: '${def}'`);
  await page.evaluate(() => window.scrollTo(0, 0));
  await page.screenshot({ path: path.join(outDir, 'snapshot-overview.png') });
  await page.close();
}

async function startServe(dir) {
  const server = spawn(mlprof, ['serve', dir, '--port', '0'], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  const port = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('serve did not start: ' + stderr)), 20000);
    server.stderr.on('data', (d) => {
      stderr += d;
      const m = /http:\/\/[^:]+:(\d+)/.exec(stderr);
      if (m) { clearTimeout(timer); resolve(m[1]); }
    });
    server.on('exit', (code) => reject(new Error(`serve exited ${code}: ${stderr}`)));
  });
  return { server, base: `http://127.0.0.1:${port}` };
}

async function serveGroups(browser) {
  const dir = path.join(tmp, 'served');
  fs.mkdirSync(dir);
  const want = py('ranks-dir', dir);
  // A compile log and a snapshot beside the traces: their own first screens, never ranks.
  fs.copyFileSync(failureLog, path.join(dir, 'comp_failure.log'));
  fs.copyFileSync(snapshot, path.join(dir, 'eager' + (snapshot.endsWith('.gz') ? '.pickle.gz' : '.pickle')));
  const { server, base } = await startServe(dir);
  try {
    const api = await (await fetch(base + '/api/ranks/groups')).json();
    const groups = api.groups.map((g) => g.traces.map((t) => t.name)).sort();
    check(JSON.stringify(groups) === JSON.stringify(want.groups), `serve: groups ${JSON.stringify(groups)} vs Python ${JSON.stringify(want.groups)}`);
    const unrelated = api.unrelated.map((u) => u.name);
    for (const n of want.unrelated) check(unrelated.includes(n), `serve: ${n} listed as unrelated (${unrelated.join(', ')})`);
    check(!unrelated.includes('comp_failure.log') && api.groups.every((g) => g.traces.every((t) => !t.name.endsWith('.log'))), 'serve: a compile log is not a rank trace');
    const bad = await fetch(base + '/api/profiler/ranks?group=7');
    check(bad.status === 404, `serve: a group past the end is 404 (got ${bad.status})`);

    const page = await browser.newPage({ viewport: VIEW });
    await page.goto(base + '/#ranks');
    await page.waitForSelector('[data-pane="ranks"][data-ready="1"]', { timeout: 60000 });
    const options = await page.locator('[data-testid="rank-group-select"] option').count();
    check(options === want.groups.length, `dashboard: ${options} jobs to pick from (want ${want.groups.length})`);
    for (let g = 0; g < api.groups.length; g++) {
      await page.selectOption('[data-testid="rank-group-select"]', String(g));
      await page.waitForSelector(`.rank-group-body[data-ready="1"][data-group="${g}"]`, { timeout: 60000 });
      const listed = await page.locator('[data-testid="rank-group-traces"] li').allInnerTexts();
      const names = api.groups[g].traces.map((t) => t.name);
      check(names.every((n) => listed.some((l) => l.endsWith(n))) && listed.length === names.length, `dashboard: job ${g} lists ${JSON.stringify(listed)}`);
      const ranksJson = await (await fetch(`${base}/api/profiler/ranks?group=${g}`)).json();
      const analysed = (ranksJson.ranks || []).map((r) => r.source.split('/').pop()).sort();
      check(JSON.stringify(analysed) === JSON.stringify(names.map((n) => n.split('/').pop()).sort()), `serve: job ${g}'s ranks analysis is over ${JSON.stringify(analysed)}`);
    }
    const unrelatedShown = await page.locator('[data-testid="rank-unrelated"] li').allInnerTexts();
    check(want.unrelated.every((n) => unrelatedShown.some((t) => t.startsWith(n))), `dashboard: unrelated traces listed: ${JSON.stringify(unrelatedShown)}`);
    await page.screenshot({ path: path.join(outDir, 'serve-ranks-groups.png') });
    // The dashboard's first screen of the compile log and of the snapshot.
    await page.close();
    const page2 = await browser.newPage({ viewport: VIEW });
    await page2.goto(base + '/#overview');
    await page2.waitForSelector('[data-testid="trace-select"] option', { state: 'attached' });
    if (await page2.locator('[data-testid="trace-select"]').inputValue() !== 'comp_failure.log') {
      await page2.selectOption('[data-testid="trace-select"]', 'comp_failure.log');
    }
    await page2.waitForSelector('[data-testid="input-verdict"]', { timeout: 60000 });
    const v = await page2.locator('[data-testid="input-verdict"]').innerText();
    check(v.includes('BackendCompilerFailed'), `dashboard: the compile log's Overview names its failure: '${v}'`);
    const tabs = await tabsShown(page2);
    check(JSON.stringify(tabs) === JSON.stringify(['overview', 'compile', 'ranks']), `dashboard compile log: tabs ${tabs.join(',')} (the Ranks tab is the folder's)`);
    await page2.screenshot({ path: path.join(outDir, 'serve-compile-log-overview.png') });
    await page2.close();
  } finally {
    server.kill('SIGTERM');
  }
}

// PyTorch's message "Tried to allocate 4.00 GiB. GPU 0 has a total capacity of 79.18 GiB of which
// 1.63 GiB is free." next to mlprof's OOM line.
async function oomScreen(browser) {
  const want = py('snapshot', oomSnapshot);
  const info = JSON.parse(fs.readFileSync(path.join(path.dirname(oomSnapshot), 'oom_info.json'), 'utf8'));
  const ooms = want.devices.flatMap((d) => d.ooms);
  check(ooms.length === 1, `oom: the Python replay finds one OOM entry (${ooms.length})`);
  const html = path.join(tmp, 'oom.html');
  execFileSync(mlprof, ['report', oomSnapshot, '-o', html], { stdio: 'ignore' });
  const page = await browser.newPage({ viewport: VIEW });
  await openOverview(page, 'file://' + html);
  const line = page.locator('[data-testid="snapshot-oom-line"]');
  check(await line.count() === 1, 'oom: one OOM line in the verdict');
  const text = await line.innerText();
  const asked = /Tried to allocate ([\d.]+ [GM]iB)/.exec(info.message)?.[1];
  const free = /of which ([\d.]+ [GM]iB) is free/.exec(info.message)?.[1];
  check(asked && text.includes(`could not allocate ${asked}`), `oom: requested ${asked} as PyTorch says: '${text}'`);
  check(free && text.includes(`${free} free`), `oom: ${free} free as PyTorch says: '${text}'`);
  check(text.includes(ooms[0].function), `oom: the site names ${ooms[0].function}: '${text}'`);
  const box = await line.boundingBox();
  const peakBox = await page.locator('[data-testid="snapshot-peak"]').first().boundingBox();
  check(box && box.y + box.height <= VIEW.height && (!peakBox || box.y < peakBox.y), 'oom: the OOM line leads the first screen');
  const holders = await page.locator('[data-testid="snapshot-oom-holders"] tbody tr').evaluateAll((rs) => rs.map((r) => Number(r.dataset.bytes)));
  const held = holders.reduce((a, b) => a + b, 0);
  check(holders.length > 1 && held === ooms[0].active_bytes && held === info.memory_allocated,
    `oom: what held the memory sums to ${held} B (replay ${ooms[0].active_bytes}, torch.cuda.memory_allocated ${info.memory_allocated}) in ${holders.length} stacks`);
  const first = await page.locator('[data-testid="snapshot-oom-holders"] tbody tr').first().innerText();
  check(first.includes('grow_kv_cache'), `oom: the largest holder is the growing cache: '${first.slice(0, 120)}'`);
  await page.evaluate(() => window.scrollTo(0, 0));
  await page.screenshot({ path: path.join(outDir, 'snapshot-oom-overview.png') });
  await page.close();
}

const browser = await chromium.launch({ executablePath: process.env.MLPROF_CHROMIUM || '/usr/bin/chromium',
  headless: true, args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'] });
try {
  await compileLog(browser, failureLog, 'compile-log-failure-overview');
  await compileLog(browser, breakLog, 'compile-log-graph-break-overview');
  await snapshotScreen(browser);
  if (oomSnapshot) await oomScreen(browser);
  await serveGroups(browser);
} catch (e) {
  failures++;
  console.log('FAIL', e.stack || e);
} finally {
  await browser.close();
  fs.rmSync(tmp, { recursive: true, force: true });
}
console.log(`${checks - failures}/${checks} checks passed; screenshots in ${outDir}`);
process.exit(failures ? 1 : 0);
