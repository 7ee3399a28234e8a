// The report as a person sees it: reports of real traces (a GPU trace, a CPU training trace, a
// rank directory) opened at 1400x900 in Debian's chromium, a screenshot of every tab written to
// OUT_DIR, and the layout facts a reader would notice checked on each:
//  - the verdict and the top recommendations are visible without scrolling (Overview);
//  - charts' value axes start at 0; legends never show "-" placeholders;
//  - no epoch timestamps anywhere (times are relative to the trace start);
//  - no internal field names shown ("outlier rule", "has gpu", "allocated reconstructed"...);
//  - the timeline draws no flows zoomed out, the selected slice's flows when one is clicked.
// Usage: node report_layout_test.mjs MLPROF OUT_DIR NAME=PATH... (env MLPROF_NODE_MODULES)
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';

const [mlprof, outDir, ...specs] = process.argv.slice(2);
const require = createRequire(process.env.MLPROF_NODE_MODULES + '/');
const { chromium } = require('playwright-core');
const VIEW = { width: 1400, height: 900 };
const TABS = ['overview', 'operators', 'kernels', 'timeline', 'flame', 'memory', 'gpu', 'modules', 'compile', 'critical_path', 'ranks'];

let failures = 0, checks = 0;
function check(cond, what) {
  checks++;
  if (!cond) { failures++; console.log('FAIL', what); }
}
const cli = (...args) => execFileSync(mlprof, args, { encoding: 'utf8', maxBuffer: 1 << 28, stdio: ['ignore', 'pipe', 'pipe'] });
fs.mkdirSync(outDir, { recursive: true });
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'mlprof-layout-'));

// Text a reader must never see: epoch times and the names of internal fields.
const EPOCH = [/\b1[4-9]\d{8}(\.\d+)?\s?(s|ms|µs|ns)\b/, /\b1[4-9]\d{2}(,\d{3}){3,}\b/, /\b1[4-9]\d{14,}\b/];
const INTERNAL = ['outlier rule', 'has gpu', 'allocated reconstructed', 'has reserved', 'hta compatible',
  'hta dropped last step', 'evidence units', 'device type'];

async function visibleText(page, pane) {
  return page.locator(`[data-pane="${pane}"]`).evaluate((n) => n.innerText);
}

async function inViewport(page, selector) {
  const loc = page.locator(selector).first();
  if (await loc.count() === 0) return false;
  const b = await loc.boundingBox();
  return !!b && b.y >= 0 && b.y + b.height <= VIEW.height && b.x >= 0 && b.x + b.width <= VIEW.width;
}

async function commonChecks(page, tab, tag) {
  const text = await visibleText(page, tab);
  for (const re of EPOCH) {
    const m = text.match(re);
    check(!m, `${tag} ${tab}: epoch timestamp shown: '${m && m[0]}'`);
  }
  const lower = text.toLowerCase();
  for (const name of INTERNAL) check(!lower.includes(name), `${tag} ${tab}: internal field '${name}' shown`);
  // Legends: static keys or values, never a "-" placeholder.
  const legendBad = await page.locator(`[data-pane="${tab}"] .u-legend`).evaluateAll((ls) =>
    ls.flatMap((l) => [...l.querySelectorAll('td, th, .u-value, .u-label')].map((c) => c.textContent.trim()))
      .filter((t) => /^[-–—]+$/.test(t) || /:\s*[-–—]+$/.test(t)));
  check(legendBad.length === 0, `${tag} ${tab}: legend placeholders ${JSON.stringify(legendBad.slice(0, 5))}`);
  // Value axes of bar charts and byte/time curves start at zero (counters may not).
  const mins = await page.locator(`[data-pane="${tab}"] .chart[data-y-min]:not([data-testid="counter-chart"])`)
    .evaluateAll((cs) => cs.map((c) => [c.dataset.testid, Number(c.dataset.yMin)]));
  for (const [id, min] of mins) check(min === 0, `${tag} ${tab}: ${id} y axis starts at ${min}, not 0`);
  return mins.length;
}

async function openTab(page, id) {
  await page.click(`button[data-tab="${id}"]`);
  await page.waitForSelector(`[data-pane="${id}"][data-ready="1"]`, { timeout: 60000 });
  await page.waitForTimeout(150);
}

async function timelineFlows(page, tag, flowsTotal) {
  const canvas = page.locator('[data-testid="timeline-canvas"]');
  const attr = async (k) => Number(await canvas.getAttribute(k));
  if (flowsTotal > 200) {
    check(await attr('data-flows-drawn') === 0, `${tag}: zoomed out, ${await attr('data-flows-in-view')} flows in view are not drawn`);
  }
  // Click a slice that a flow starts from (a launch): it is selected and its flows are drawn.
  const targets = await page.evaluate(() => {
    const tl = window.mlprofTimeline;
    tl.unfoldAll();  // launches sit below the top level of folded CPU lanes
    const c = document.querySelector('[data-testid="timeline-canvas"]');
    const v = tl.view(), W = c.clientWidth, out = [];
    const f = tl.flows;
    for (let k = 0; k < f.length && out.length < 8; k += 4 * 97) {
      const x = ((f[k + 1] - v.t0) / (v.t1 - v.t0)) * W;
      for (let d = 0; d < 12; d++) {
        const y = tl.laneTop[f[k]] + 18 + d * 16 + 8;
        const h = tl.hitTest(x, y);
        if (h && y < c.parentElement.clientHeight) { out.push({ x, y }); break; }
      }
    }
    if (!out.length) {  // no flows: any slice
      for (let x = 5; x < W && !out.length; x += 7) if (tl.hitTest(x, tl.laneTop[0] + 26)) out.push({ x, y: tl.laneTop[0] + 26 });
    }
    return out;
  });
  check(targets.length > 0, `${tag}: a slice to click on the timeline`);
  const box = await canvas.boundingBox();
  let withFlows = false;
  for (const t of targets) {
    await page.mouse.click(box.x + t.x, box.y + t.y);
    // The redraw lands on a later animation frame: wait for it (a loaded machine is slow), but not
    // long for a slice without flows.
    const drawn = await page.waitForFunction(() => Number(document.querySelector('[data-testid="timeline-canvas"]').dataset.flowsDrawn) > 0,
      null, { timeout: 2000, polling: 30 }).then(() => true, () => false);
    if (drawn) { withFlows = true; break; }
  }
  check(await canvas.getAttribute('data-selected'), `${tag}: clicking a slice selects it`);
  if (flowsTotal) check(withFlows, `${tag}: a clicked slice shows its flows`);
  // Zoomed far in, the flows in view are few enough to draw.
  if (flowsTotal) {
    await page.evaluate(() => { const tl = window.mlprofTimeline; for (let i = 0; i < 12; i++) tl.zoomAt(300, 0.3); tl.select(null); tl.draw(); });
    const inView = await attr('data-flows-in-view'), drawn = await attr('data-flows-drawn');
    check(inView === 0 || drawn === inView, `${tag}: zoomed in, ${drawn} of ${inView} flows in view drawn`);
  }
}

async function reportOf(browser, tag, input) {
  const html = path.join(tmp, `${tag}.html`);
  cli('report', input, '-o', html);
  const analyze = JSON.parse(cli('analyze', input, '--json'));
  const page = await browser.newPage({ viewport: VIEW });
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto('file://' + html);
  await page.waitForSelector('[data-pane="overview"][data-ready="1"]', { timeout: 60000 });
  await page.waitForTimeout(200);

  // Overview: the verdict first, then the top recommendations, all above the fold.
  check(await inViewport(page, '[data-testid="verdict"]'), `${tag}: verdict visible without scrolling`);
  const verdict = await page.locator('[data-testid="verdict"]').innerText();
  const findings = analyze.bottlenecks.findings || [];
  const timed = findings.filter((f) => f.est_savings_ns > 0);
  if (timed.length) check(verdict.includes(timed[0].title), `${tag}: verdict names the top finding '${timed[0].title}': '${verdict}'`);
  const top = Math.min(3, findings.length);
  check(await page.locator('[data-testid="top-recommendations"] > li').count() === top, `${tag}: ${top} top recommendations`);
  // Severity colours follow the severity: every badge's class is its own text, each severity has
  // one colour, high > medium > low in alarm (red, amber, blue), and the verdict takes the colour
  // of the finding it names (green when no rule about time fired).
  const badges = await page.locator('[data-pane="overview"] .sev').evaluateAll((bs) => bs.map((b) => ({ text: b.textContent.trim(), cls: b.className, color: getComputedStyle(b).color })));
  check(badges.every((b) => b.cls.split(/\s+/).includes(`sev-${b.text}`)), `${tag}: every severity badge's class is its severity (${badges.map((b) => b.text).join(',')})`);
  const SEV_COLOR = { high: 'rgb(163, 21, 21)', medium: 'rgb(138, 90, 0)', low: 'rgb(29, 78, 216)' };
  check(badges.every((b) => SEV_COLOR[b.text] === b.color), `${tag}: each severity has its colour: ${[...new Set(badges.map((b) => b.text + '=' + b.color))].join(' ')}`);
  const bound = page.locator('[data-testid="verdict"] .bound');
  const boundColor = await bound.evaluate((b) => getComputedStyle(b).color);
  const want = timed.length ? SEV_COLOR[timed[0].severity] : 'rgb(46, 125, 50)';
  check(boundColor === want, `${tag}: the verdict's colour ${boundColor} is the top finding's severity (${timed.length ? timed[0].severity : 'none'}: ${want})`);
  for (const f of findings.filter((x) => x.priced_by === 'replay')) {
    const sev = f.est_savings_pct >= 25 ? 'high' : f.est_savings_pct >= 10 ? 'medium' : 'low';
    check(f.severity === sev, `${tag}: ${f.kind} saves ${f.est_savings_pct.toFixed(1)} % by replay, so ${sev} (is ${f.severity})`);
  }
  for (let i = 0; i < top; i++) {
    check(await inViewport(page, `[data-testid="top-recommendations"] > li:nth-child(${i + 1})`), `${tag}: recommendation ${i + 1} visible without scrolling`);
    const li = page.locator(`[data-testid="top-recommendations"] > li:nth-child(${i + 1})`);
    if (findings[i].est_savings_ns > 0) {
      check(await li.locator('[data-key$=".est_savings_ns"]').getAttribute('data-value') === String(findings[i].est_savings_ns),
        `${tag}: recommendation ${i + 1} shows its saving`);
    }
  }
  check(await inViewport(page, '[data-testid="import-warnings"]'), `${tag}: import warnings / dropped events visible without scrolling`);
  const problems = Object.keys((analyze.summary.import || {}).problems || {});
  for (const p of problems) check(await page.locator(`[data-testid="import-warnings"] [data-problem="${p}"]`).count() === 1, `${tag}: import problem ${p} shown`);
  if (analyze.steps.count > 0) {
    const chartTop = await page.locator('[data-testid="step-chart"]').boundingBox();
    check(chartTop && chartTop.y + chartTop.height * 0.8 <= VIEW.height, `${tag}: step-time breakdown visible without scrolling`);
  }
  if (analyze.gpu && !analyze.gpu.unavailable) check(await inViewport(page, '[data-testid="gpu-summary"]'), `${tag}: GPU summary visible without scrolling`);
  if (!analyze.ranks.unavailable) check(await inViewport(page, '[data-testid="rank-line"]'), `${tag}: rank directory line visible`);
  // Every card has a unit-bearing value and most have a hover definition.
  const titled = await page.locator('[data-pane="overview"] .card[title]').count();
  const cardsAll = await page.locator('[data-pane="overview"] .card').count();
  check(titled >= cardsAll * 0.8, `${tag}: ${titled} of ${cardsAll} overview cards have a hover definition`);
  await commonChecks(page, 'overview', tag);
  await page.screenshot({ path: path.join(outDir, `${tag}-overview.png`) });
  await page.screenshot({ path: path.join(outDir, `${tag}-overview-full.png`), fullPage: true });

  // An estimated saving is a share of the steps' (or the span's) time: never over 100 %.
  for (const f of findings) check(f.est_savings_pct <= 100 + 1e-9, `${tag}: ${f.kind} saves ${f.est_savings_pct} % of the basis`);
  const shownPct = await page.locator('[data-testid="top-recommendations"] .saving').allInnerTexts();
  for (const t of shownPct) {
    const m = /\(([\d.]+) %/.exec(t);
    check(!m || Number(m[1]) <= 100, `${tag}: top recommendation shows '${t}'`);
  }

  for (const tab of TABS.slice(1)) {
    const button = page.locator(`button[data-tab="${tab}"]`);
    if (await button.count() === 0 || !(await button.isVisible())) continue;
    await openTab(page, tab);
    await commonChecks(page, tab, tag);
    if (tab === 'timeline') {
      const t = JSON.parse(cli('timeline', input, '--json'));
      await timelineFlows(page, tag, t.flows || 0);
      if (!analyze.ranks.unavailable) {  // a rank directory: every rank's lanes, a bounded window
        const names = await page.evaluate(() => window.mlprofTimeline.laneNames);
        const slices = await page.evaluate(() => window.mlprofTimeline.laneSlices.reduce((a, b) => a + b, 0));
        // Up to 8 ranks drawn (the rank analyzed in depth always).
        const all = analyze.ranks.ranks;
        const drawn = all.length <= 8 ? all : all.filter((r) => r.source === analyze.source);
        for (const r of drawn) {
          check(names.some((n) => n.startsWith(`rank ${r.rank} · `)), `${tag}: timeline has lanes of rank ${r.rank}`);
        }
        check(await page.locator('[data-testid="timeline-ranks"]').count() === 1, `${tag}: timeline says which ranks and steps it shows`);
        check(slices > 0 && slices <= 1000000, `${tag}: rank timeline holds ${slices} slices (bound 1M)`);
      }
    }
    if (tab === 'modules') {
      const rowsJson = (analyze.modules && analyze.modules.rows) || [];
      const shown = await page.locator('[data-table="modules.rows"] tbody tr').count();
      check(rowsJson.length ? shown > 0 && shown <= rowsJson.length : await page.locator('[data-pane="modules"] .note').count() > 0,
        `${tag}: module tree shows ${shown} of ${rowsJson.length} modules (or says why none)`);
      if (rowsJson.length) {
        const root = rowsJson.find((r) => r.parent < 0);
        const cell = await page.locator(`[data-table="modules.rows"] tr[data-path="${root.path}"] td[data-col="host_ns"]`).getAttribute('data-value');
        check(Number(cell) === root.host_ns, `${tag}: module ${root.path} host time ${cell} vs ${root.host_ns}`);
      }
    }
    if (tab === 'kernels' && analyze.kernels && (analyze.kernels.by_op || []).length) {
      await page.locator('[data-table="kernels.by_op_summary"] tbody tr').first().click();
      check(await page.locator('[data-testid="kernels-of-op"] tbody tr').count() > 0, `${tag}: clicking an op lists its kernels`);
    }
    if (tab === 'ranks' && !analyze.ranks.unavailable) {
      // One bar per rank up to 64 ranks; beyond, the distribution over ranks and the worst ranks
      // (issue 18: output that reads at 1000 ranks), the straggler first.
      const n = analyze.ranks.ranks.length;
      const count = async (id) => page.locator(`[data-pane="ranks"] [data-testid="${id}"]`).count();
      const [perRank, dist, worst] = [await count('ranks-chart'), await count('ranks-distribution'), await count('ranks-worst')];
      check(n > 64 ? perRank === 0 && dist === 1 && worst === 1 : perRank === 1 && dist === 0 && worst === 0,
        `${tag}: ${n} ranks: per-rank chart ${perRank}, distribution ${dist}, worst ranks ${worst}`);
      if (n > 64) {
        const legend = await page.locator('[data-pane="ranks"] [data-testid="ranks-distribution"] .u-legend').innerText();
        check(legend.includes(`ranks ${n}`), `${tag}: the distribution counts every rank: '${legend}'`);
        const stragglers = analyze.ranks.stragglers;
        // Time late at collectives, when calls were matched: its title names the rank at the max.
        const late = page.locator('[data-pane="ranks"] [data-testid="ranks-late-distribution"]');
        check(await late.count() === (analyze.ranks.matched_calls > 0 ? 1 : 0), `${tag}: lateness distribution with matched calls`);
        if (await late.count()) {
          const title = await late.locator('.chart-title').innerText();
          check(title.includes(`the most: rank ${stragglers[0]},`), `${tag}: lateness distribution names rank ${stragglers[0]}: '${title}'`);
        }
        const shown = (await page.locator('[data-pane="ranks"] [data-testid="ranks-worst"]').getAttribute('data-ranks')).split(',').map(Number);
        check(shown.length === 20 && stragglers.length > 0 && stragglers.every((r, i) => shown[i] === r),
          `${tag}: the worst ranks start with the stragglers ${stragglers}: ${shown.slice(0, 5)}`);
      }
    }
    if (tab === 'operators') {
      const rows = await page.locator('[data-table="ops"] tbody tr').count();
      const total = Number(await page.locator('[data-table="ops"]').getAttribute('data-rows'));
      check(rows <= 100 && (total <= 100 || await page.locator('[data-table="ops"] [data-testid="table-next"]').isVisible()),
        `${tag}: operator table paginates (${rows} of ${total} rows in the page)`);
    }
    await page.screenshot({ path: path.join(outDir, `${tag}-${tab}.png`) });
  }
  check(errors.length === 0, `${tag}: page errors: ${errors.join('; ')}`);
  await page.close();
}

const browser = await chromium.launch({ executablePath: process.env.MLPROF_CHROMIUM || '/usr/bin/chromium', headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-dev-shm-usage'] });
try {
  for (const spec of specs) {
    const [tag, input] = spec.split('=');
    await reportOf(browser, tag, input);
  }
} catch (e) {
  failures++;
  console.log('FAIL', e.stack || e.message);
} finally {
  await browser.close();
  fs.rmSync(tmp, { recursive: true, force: true });
}
console.log(`report layout: ${checks} checks, ${failures} failures; screenshots in ${outDir}`);
process.exit(failures ? 1 : 0);
