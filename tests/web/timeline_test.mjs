// The Timeline tab as a Perfetto user drives it, in headless chromium, on a real GPU trace:
//  - the ruler's tick labels are round values and change when the view zooms (wheel and W);
//  - clicking a kernel shows its args (grid equal to the trace JSON's) and the op that launched
//    it (the cpu_op enclosing the cudaLaunchKernel of the same correlation, read from the JSON);
//  - search finds a name (count equal to the JSON's), highlights it, next/previous walk in time;
//  - dragging over a GPU stream selects an area whose per-name count and total equal a Python sum
//    over the trace JSON (tests/web/timeline_area_expect.py);
//  - device lanes are on the first screen, synthetic lanes folded; a lane folds and pins.
// Then the same page from `mlprof serve`. Screenshots go to OUT_DIR (timeline-*.png), and every
// other NAME=TRACE given is opened and screenshot too.
// Usage: node timeline_test.mjs MLPROF OUT_DIR GPU_TRACE [NAME=TRACE...] (env MLPROF_NODE_MODULES)
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const [mlprof, outDir, gpuTrace, ...specs] = process.argv.slice(2);
const here = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(process.env.MLPROF_NODE_MODULES + '/');
const { chromium } = require('playwright-core');
const VIEW = { width: 1400, height: 900 };
let failures = 0, checks = 0;
function check(cond, what) {
  checks++;
  console.log(cond ? 'ok  ' : 'FAIL', what);
  if (!cond) failures++;
}
const cli = (...args) => execFileSync(mlprof, args, { encoding: 'utf8', maxBuffer: 1 << 28, stdio: ['ignore', 'pipe', 'pipe'] });
fs.mkdirSync(outDir, { recursive: true });
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'mlprof-tl-'));

// The trace JSON, read here independently of mlprof.
const raw = fs.readFileSync(gpuTrace);
const doc = JSON.parse((gpuTrace.endsWith('.gz') ? zlib.gunzipSync(raw) : raw).toString('utf8'));
const events = Array.isArray(doc) ? doc : doc.traceEvents;
const tl = JSON.parse(cli('timeline', gpuTrace, '--json'));

const browser = await chromium.launch({
  executablePath: process.env.MLPROF_CHROMIUM || '/usr/bin/chromium', headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
});

async function openTimeline(url) {
  const page = await browser.newPage({ viewport: VIEW });
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(url);
  await page.waitForSelector('[data-pane="timeline"][data-ready="1"]', { timeout: 60000 });
  await page.waitForFunction(() => window.mlprofTimeline && Number(document.querySelector('[data-testid="timeline-canvas"]').dataset.drawn) > 0);
  return { page, errors };
}
const attr = (page, k) => page.locator('[data-testid="timeline-canvas"]').getAttribute(k);
const frame = (page) => page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
// Canvas coordinates of slice h (its middle, clipped to the view) after scrolling it into view.
async function sliceXY(page, h) {
  return page.evaluate((h) => {
    const t = window.mlprofTimeline, c = document.querySelector('[data-testid="timeline-canvas"]');
    const r = t.rows(h.li)[h.d], v = t.view();
    const a = Math.max(r.s[h.i], v.t0), b = Math.min(r.s[h.i] + 1, v.t1);
    const x = ((a + b) / 2 - v.t0) / (v.t1 - v.t0) * c.clientWidth;
    const y = t.laneTop[h.li] + t.laneHead + h.d * t.rowHeight + t.rowHeight / 2;
    return { x, y, scroll: c.parentElement.scrollTop };
  }, h);
}

async function checkPage(page, errors, tag) {
  const canvas = page.locator('[data-testid="timeline-canvas"]');
  let box = await canvas.boundingBox();

  // Lanes: GPU streams on the first screen, synthetic lanes folded.
  const lanes = await page.evaluate(() => {
    const t = window.mlprofTimeline;
    return t.laneNames.map((name, li) => ({ name, gpu: t.laneGpu[li], top: t.laneTop[li], folded: t.folded()[li] }));
  });
  const firstGpu = lanes.find((l) => l.gpu);
  check(firstGpu && box.y + firstGpu.top + 30 < VIEW.height, `${tag}: the first GPU lane (${firstGpu && firstGpu.name}) is on the first screen (y ${firstGpu && Math.round(box.y + firstGpu.top)})`);
  const spans = lanes.filter((l) => /\(pid Spans/.test(l.name));
  check(spans.length > 0 && spans.every((l) => l.folded), `${tag}: ${spans.length} synthetic lanes folded by default`);

  // Ruler: round tick labels that change on zoom (wheel, then W).
  const ticks0 = (await attr(page, 'data-ticks')).split('|');
  check(ticks0.length >= 4 && ticks0.every((s) => /^\d+(\.\d+)? (s|ms|µs|ns)$/.test(s)), `${tag}: ruler ticks ${ticks0.slice(0, 4).join(', ')}...`);
  const steps = (ts) => ts.map((s) => { const [v, u] = s.split(' '); return Number(v) * { s: 1e9, ms: 1e6, 'µs': 1e3, ns: 1 }[u]; });
  const st0 = steps(ticks0);
  const stepNs = st0[1] - st0[0];
  check(/^[125]0*$/.test(String(Math.round(stepNs / 10 ** Math.floor(Math.log10(stepNs)) * 1000) / 1000).replace('.', '')) || [1, 2, 5].includes(Math.round(stepNs / 10 ** Math.floor(Math.log10(stepNs)))),
    `${tag}: tick step ${stepNs} ns is 1, 2 or 5 x 10^k`);
  await page.mouse.move(box.x + 700, box.y + 200);
  await page.mouse.wheel(0, -600);
  await page.waitForFunction((t) => document.querySelector('[data-testid="timeline-canvas"]').dataset.ticks !== t, ticks0.join('|'));
  const ticks1 = (await attr(page, 'data-ticks')).split('|');
  check(ticks1.join('|') !== ticks0.join('|') && steps(ticks1)[1] - steps(ticks1)[0] < stepNs, `${tag}: zooming in changes the ruler (${ticks1.slice(0, 3).join(', ')}...)`);
  const w0 = Number(await attr(page, 'data-t1')) - Number(await attr(page, 'data-t0'));
  await page.keyboard.press('w');
  await page.waitForFunction((w) => { const c = document.querySelector('[data-testid="timeline-canvas"]'); return Number(c.dataset.t1) - Number(c.dataset.t0) < w * 0.9; }, w0);
  check(true, `${tag}: W zooms in`);
  const t0a = Number(await attr(page, 'data-t0'));
  await page.keyboard.press('d');
  await page.waitForFunction((t) => Number(document.querySelector('[data-testid="timeline-canvas"]').dataset.t0) > t, t0a);
  check(true, `${tag}: D pans right`);
  const ticks2 = await attr(page, 'data-ticks');
  check(ticks2 !== ticks1.join('|'), `${tag}: the ruler follows the pan`);

  // Args: a kernel with a launch flow, clicked with the mouse.
  const target = await page.evaluate(() => {
    const t = window.mlprofTimeline, f = t.flows;
    for (let k = 0; k < f.length; k += 4) {
      if (!t.laneGpu[f[k + 2]] || t.laneGpu[f[k]]) continue;
      const rows = t.rows(f[k + 2]);
      const r = rows[0];
      let lo = 0, hi = r.s.length;
      while (lo < hi) { const m = (lo + hi) >> 1; if (r.s[m] <= f[k + 3]) lo = m + 1; else hi = m; }
      const i = lo - 1;
      if (i >= 0 && r.s[i] === f[k + 3] && r.x[i] - r.s[i] > 0 && /kernel/i.test(t.strings[r.n[i]]) && k > f.length / 3) return { li: f[k + 2], d: 0, i };
    }
    return null;
  });
  check(!!target, `${tag}: a kernel with a launch flow`);
  await page.evaluate((h) => window.mlprofTimeline.selectSlice(h), target);
  await page.evaluate(() => window.mlprofTimeline.setView(...(() => { const t = window.mlprofTimeline, s = t.selected(); const r = t.rows(s.li)[s.d]; const a = r.s[s.i], b = r.x[s.i]; return [a - (b - a) * 4, b + (b - a) * 4]; })()));
  await page.evaluate(() => window.mlprofTimeline.selectSlice(null));
  await frame(page);
  const xy = await sliceXY(page, target);
  await canvas.click({ position: { x: xy.x, y: xy.y } });
  if (process.env.DEBUG_TL) { console.log('xy', xy, target, await page.evaluate(() => [window.mlprofTimeline.selected(), window.mlprofTimeline.view(), window.mlprofTimeline.laneRows()])); await page.screenshot({ path: '/tmp/h28dbg.png' }); }
  await page.waitForSelector('[data-testid="timeline-args"]');
  const argRows = await page.locator('[data-testid="timeline-args"] tr[data-arg]').evaluateAll((rs) => Object.fromEntries(rs.map((r) => [r.dataset.arg, r.querySelector('td').textContent])));
  const corr = Number(argRows.correlation);
  const kernel = events.find((e) => e.ph === 'X' && e.args && e.args.correlation === corr && e.cat === 'kernel');
  check(!!kernel, `${tag}: the clicked kernel's correlation ${corr} is a kernel of the JSON`);
  if (kernel) {
    check(argRows.grid && JSON.stringify(JSON.parse(argRows.grid)) === JSON.stringify(kernel.args.grid), `${tag}: args panel grid ${argRows.grid} = JSON ${JSON.stringify(kernel.args.grid)}`);
    check(argRows.block && JSON.stringify(JSON.parse(argRows.block)) === JSON.stringify(kernel.args.block), `${tag}: block ${argRows.block}`);
    for (const k of ['registers per thread', 'stream', 'External id']) {
      check(argRows[k] === String(kernel.args[k]), `${tag}: args panel ${k} ${argRows[k]} = JSON ${kernel.args[k]}`);
    }
    // The launching op, independently: the cpu_op that encloses the runtime call of the same
    // correlation on its thread (the innermost one).
    const launch = events.find((e) => e.ph === 'X' && e.cat === 'cuda_runtime' && e.args && e.args.correlation === corr);
    const ops = events.filter((e) => e.ph === 'X' && e.cat === 'cpu_op' && e.tid === launch.tid && e.pid === launch.pid &&
      e.ts <= launch.ts && e.ts + e.dur >= launch.ts + launch.dur);
    ops.sort((a, b) => b.ts - a.ts || a.dur - b.dur);
    const launchText = await page.locator('[data-testid="timeline-launch"]').textContent();
    check(ops.length && launchText.startsWith(`Launched by: ${ops[0].name} via ${launch.name}`), `${tag}: launched by '${launchText.slice(0, 90)}' (JSON: ${ops[0] && ops[0].name} via ${launch.name})`);
    // The flow's jump: clicking the launch selects the CPU slice.
    if (process.env.DEBUG_TL) console.log(await page.locator('[data-testid="timeline-details"]').innerHTML(), errors);
    await page.locator('[data-testid="timeline-flow-list"] a').first().click();
    await page.waitForFunction((n) => document.querySelector('[data-testid="timeline-canvas"]').dataset.selected === n, launch.name);
    check(true, `${tag}: the flow's link jumps to ${launch.name}`);
    const parents = await page.locator('[data-testid="timeline-parents"]').textContent();
    check(parents.includes(ops[0].name), `${tag}: the launch's parents name ${ops[0].name}`);
  }
  await page.screenshot({ path: path.join(outDir, `timeline-${tag}-args.png`) });

  // Search: a kernel name, counted in the JSON; next/previous walk in time order.
  const name = kernel ? kernel.name : events.find((e) => e.cat === 'kernel').name;
  const want = events.filter((e) => e.ph === 'X' && e.name === name && String(e.pid) === String(kernel.pid)).length;
  await page.evaluate(() => window.mlprofTimeline.setView(0, 1e18));
  await page.fill('[data-testid="timeline-search"]', `/^${name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$/`);
  await page.press('[data-testid="timeline-search"]', 'Enter');
  await page.waitForFunction(() => document.querySelector('[data-testid="timeline-canvas"]').dataset.matches !== undefined &&
    document.querySelector('[data-testid="timeline-canvas"]').dataset.matches !== '');
  const matches = Number(await attr(page, 'data-matches'));
  check(matches === want, `${tag}: search finds ${matches} '${name.slice(0, 40)}...' (JSON: ${want})`);
  const sel1 = await page.evaluate(() => { const t = window.mlprofTimeline, s = t.selected(); return s && t.rows(s.li)[s.d].s[s.i]; });
  await page.click('[data-testid="timeline-search-next"]');
  const sel2 = await page.evaluate(() => { const t = window.mlprofTimeline, s = t.selected(); return s && t.rows(s.li)[s.d].s[s.i]; });
  await page.click('[data-testid="timeline-search-prev"]');
  const sel3 = await page.evaluate(() => { const t = window.mlprofTimeline, s = t.selected(); return s && t.rows(s.li)[s.d].s[s.i]; });
  check(sel1 !== null && sel2 > sel1 && sel3 === sel1, `${tag}: next goes to a later match (${sel1} -> ${sel2}), previous back (${sel3})`);
  check((await attr(page, 'data-selected')) === name, `${tag}: the match is selected`);
  // Highlight: the selected match keeps its colour, slices of other names turn grey.
  await frame(page);
  const colours = await page.evaluate(async () => {
    const t = window.mlprofTimeline, c = document.querySelector('[data-testid="timeline-canvas"]'), s = t.selected();
    const r = t.rows(s.li)[s.d];
    t.setView(r.s[s.i] - 2e5, r.s[s.i] + 2e5);
    t.select(null);
    const ctx = c.getContext('2d'), dpr = window.devicePixelRatio || 1, v = t.view();
    const px = (x, y) => Array.from(ctx.getImageData(Math.round(x * dpr), Math.round(y * dpr), 1, 1).data).slice(0, 3).join(',');
    const xOf = (tt) => (tt - v.t0) / (v.t1 - v.t0) * c.clientWidth;
    const y = t.laneTop[s.li] + t.laneHead + s.d * t.rowHeight + 14;  // under the labels
    const match = px((xOf(r.s[s.i]) + xOf(r.x[s.i])) / 2, y);
    let other = null;
    for (let x = 1; x < c.clientWidth - 1 && !other; x++) if (px(x, y) === '222,222,228') other = px(x, y);
    t.select(s);
    return { match, other };
  });
  check(colours.match !== '222,222,228' && colours.match !== '255,255,255' && colours.match !== '0,0,0' && colours.other === '222,222,228', `${tag}: the match is drawn in colour (${colours.match}), other names grey (${colours.other})`);
  await page.screenshot({ path: path.join(outDir, `timeline-${tag}-search.png`) });
  await page.fill('[data-testid="timeline-search"]', '');
  await page.evaluate(() => window.mlprofTimeline.search(''));

  // Area: drag across the first GPU stream over the middle of the trace.
  const gi = lanes.indexOf(firstGpu);
  await page.evaluate(() => { document.querySelector('[data-testid="timeline-canvas"]').parentElement.scrollTop = 0; });
  await page.click('[data-testid="timeline-reset"]');
  await page.evaluate(() => window.scrollTo(0, 0));
  await frame(page);
  box = await canvas.boundingBox();
  const laneY = await page.evaluate((gi) => window.mlprofTimeline.laneTop[gi] + 20, gi);
  await page.mouse.move(box.x + 400, box.y + laneY);
  await page.mouse.down();
  await page.mouse.move(box.x + 800, box.y + laneY + 4, { steps: 8 });
  await page.mouse.up();
  await page.waitForSelector('[data-testid="timeline-aggregate"]');
  const area = await page.evaluate(() => window.mlprofTimeline.aggregate());
  const areaInfo = await page.locator('[data-testid="timeline-area-summary"]').textContent();
  const range = await page.evaluate(() => {
    const rows = [...document.querySelectorAll('[data-testid="timeline-aggregate"] tbody tr')];
    return rows.map((r) => ({ name: r.dataset.name, count: Number(r.dataset.count), total: Number(r.dataset.totalNs), inRange: Number(r.dataset.inRangeNs) }));
  });
  const bounds = await page.evaluate(() => window.mlprofTimeline.areaRange());
  check(bounds.lanes.length === 1 && bounds.lanes[0] === gi, `${tag}: the drag selected lane ${bounds.lanes.join(',')} (want ${gi}); ${areaInfo.slice(0, 80)}`);
  const lane = tl.lanes[gi];
  const t0 = tl.begin_ns + bounds.t0, t1 = tl.begin_ns + bounds.t1;  // whole ns: setArea rounds outward
  const py = JSON.parse(execFileSync('python3', [path.join(here, 'timeline_area_expect.py'), gpuTrace, String(lane.pid), String(lane.tid), String(t0), String(t1)], { encoding: 'utf8', maxBuffer: 1 << 28 }));
  const pyNames = Object.keys(py);
  check(range.length === pyNames.length && range.length > 1, `${tag}: area has ${range.length} names (Python: ${pyNames.length}), ${area.count} slices`);
  let same = 0;
  for (const r of range) {
    const p = py[r.name];
    if (p && p.count === r.count && p.total_ns === r.total && p.in_range_ns === r.inRange) same++;
    else console.log('   differs:', r.name.slice(0, 60), r, p);
  }
  check(same === range.length, `${tag}: per-name count, total and in-range time equal the Python sum over the JSON for ${same}/${range.length} names`);
  check(/^Selected \d/.test(areaInfo), `${tag}: the area's duration is shown: '${areaInfo.slice(0, 40)}'`);
  await page.screenshot({ path: path.join(outDir, `timeline-${tag}-area.png`) });

  // Per-process groups: one header per run of a process' lanes (GPU streams: their device), as
  // `mlprof timeline --json` lists the lanes' pids; clicking it folds, then unfolds, them all.
  const runs = [];
  tl.lanes.forEach((l, li) => {
    const key = `${l.kind === 'gpu_stream' ? 'gpu' : 'cpu'}:${l.pid}`;
    if (!runs.length || runs[runs.length - 1].key !== key) runs.push({ key, lanes: [] });
    runs[runs.length - 1].lanes.push(li);
  });
  const groups = await page.evaluate(() => window.mlprofTimeline.processGroups());
  check(groups.length === runs.length && groups.every((g, k) => g.lanes.join() === runs[k].lanes.join()),
    `${tag}: ${groups.length} process groups (${groups.map((g) => g.label).join(' | ')}), the JSON's pids make ${runs.length}`);
  const gg = groups.find((g) => g.lanes.includes(gi));
  if (gg) {
    await page.evaluate(() => { document.querySelector('[data-testid="timeline-canvas"]').parentElement.scrollTop = 0; });
    await page.mouse.click(box.x + 80, box.y + gg.y + 8);
    let f = await page.evaluate(() => window.mlprofTimeline.folded());
    check(gg.lanes.every((li) => f[li]), `${tag}: clicking "${gg.label}" folds its ${gg.lanes.length} lanes`);
    const gy = (await page.evaluate(() => window.mlprofTimeline.processGroups())).find((g) => g.lanes.includes(gi)).y;
    await page.mouse.click(box.x + 80, box.y + gy + 8);
    f = await page.evaluate(() => window.mlprofTimeline.folded());
    check(gg.lanes.every((li) => !f[li]), `${tag}: a second click unfolds them`);
  }

  // Fold and pin: clicking a lane's name folds it; its pin keeps it on top while scrolling.
  const cpuLane = lanes.findIndex((l) => !l.gpu && !l.folded);
  if (cpuLane >= 0) {
    const y = await page.evaluate((li) => window.mlprofTimeline.laneTop[li] + 8, cpuLane);
    await page.mouse.click(box.x + 60, box.y + y);
    check((await page.evaluate(() => window.mlprofTimeline.folded()))[cpuLane], `${tag}: clicking a lane's name folds it`);
  }
  // A folded lane's summary: the busy time of its top-level slices in view, equal to the Python
  // sum of its slices over the same range (the whole trace here), and said in its header.
  const one = (await page.evaluate((li) => window.mlprofTimeline.rows(li).length, gi)) === 1;
  await page.evaluate((li) => { window.mlprofTimeline.fold(li, true); window.mlprofTimeline.setView(0, window.mlprofTimeline.view().t1); }, gi);
  const whole = await page.evaluate(() => window.mlprofTimeline.view());
  const busy = await page.evaluate((li) => window.mlprofTimeline.busyInView(li), gi);
  const pyWhole = JSON.parse(execFileSync('python3', [path.join(here, 'timeline_area_expect.py'), gpuTrace, String(lane.pid), String(lane.tid),
    String(tl.begin_ns + whole.t0), String(tl.begin_ns + whole.t1)], { encoding: 'utf8', maxBuffer: 1 << 28 }));
  const pyBusy = Object.values(pyWhole).reduce((a, g) => a + g.in_range_ns, 0);
  if (one) check(busy === pyBusy, `${tag}: folded ${firstGpu.name} summarises ${busy} ns busy in view; Python ${pyBusy}`);
  else console.log(`(${tag}: ${firstGpu.name} has overlapping rows; busy-in-view equality skipped)`);
  await page.evaluate((li) => window.mlprofTimeline.fold(li, false), gi);
  const y = await page.evaluate((li) => window.mlprofTimeline.laneTop[li] + 8, gi);
  await page.mouse.click(box.x + box.width - 15, box.y + y);
  check((await page.evaluate(() => window.mlprofTimeline.pinned()))[gi], `${tag}: the pin pins ${firstGpu.name}`);
  check(errors.length === 0, `${tag}: no page errors ${errors.join('; ')}`);
}

// 1. The report.
const html = path.join(tmp, 'gpu.html');
cli('report', gpuTrace, '-o', html);
{
  const { page, errors } = await openTimeline('file://' + html + '#timeline');
  await checkPage(page, errors, 'report');
  await page.close();
}

// 2. mlprof serve over a folder holding the trace.
const dir = path.join(tmp, 'serve');
fs.mkdirSync(dir);
const base = path.basename(gpuTrace);
fs.copyFileSync(gpuTrace, path.join(dir, base));
const server = spawn(mlprof, ['serve', dir, '--port', '0'], { stdio: ['ignore', 'ignore', 'pipe'] });
const port = await new Promise((resolve, reject) => {
  let err = '';
  server.stderr.on('data', (d) => { err += d; const m = /127\.0\.0\.1:(\d+)/.exec(err); if (m) resolve(Number(m[1])); });
  server.on('exit', () => reject(new Error('serve exited: ' + err)));
  setTimeout(() => reject(new Error('serve did not start: ' + err)), 30000);
});
try {
  const { page, errors } = await openTimeline(`http://127.0.0.1:${port}/#timeline`);
  await checkPage(page, errors, 'serve');
  await page.close();
} finally {
  server.kill();
}

// 3. Screenshots of other traces' timelines.
for (const spec of specs) {
  const [tag, input] = spec.split('=');
  const out = path.join(tmp, `${tag}.html`);
  cli('report', input, '-o', out);
  const { page, errors } = await openTimeline('file://' + out + '#timeline');
  await page.screenshot({ path: path.join(outDir, `timeline-${tag}.png`) });
  const lanes = await page.evaluate(() => { const t = window.mlprofTimeline; return t.laneNames.map((n, li) => ({ gpu: t.laneGpu[li], top: t.laneTop[li] })); });
  const g = lanes.find((l) => l.gpu);
  if (g) check(g.top + 200 < VIEW.height, `${tag}: the first device lane is on the first screen`);
  check(errors.length === 0, `${tag}: no page errors ${errors.join('; ')}`);
  await page.close();
}

await browser.close();
fs.rmSync(tmp, { recursive: true, force: true });
console.log(`${checks - failures}/${checks} checks passed`);
process.exit(failures ? 1 : 0);
