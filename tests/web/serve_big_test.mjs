// `mlprof serve` on a big trace in headless chromium (issue 33): the page shows the parse's
// progress (bytes and events read, an ETA) while it runs and removes it once the Overview is
// drawn; the Timeline tab, past --tiles-above slices, holds one tile's marks (far fewer than the
// trace's slices), and zooming into a narrow window fetches a tile of exact slices.
// Usage: node serve_big_test.mjs MLPROF GEN_BIG_TRACE_PY (env MLPROF_NODE_MODULES)
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';

const [mlprof, gen] = process.argv.slice(2);
const require = createRequire(process.env.MLPROF_NODE_MODULES + '/');
const { chromium } = require('playwright-core');
let failures = 0, checks = 0;
function check(cond, what) {
  checks++;
  console.log(cond ? 'ok  ' : 'FAIL', what);
  if (!cond) failures++;
}
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'mlprof-big-'));
execFileSync('python3', [gen, '400000', path.join(tmp, 'big.json')]);
const server = spawn(mlprof, ['serve', tmp, '--port', '0'], { stdio: ['ignore', 'ignore', 'pipe'] });
const port = await new Promise((resolve, reject) => {
  let err = '';
  server.stderr.on('data', (d) => { err += d; const m = /127\.0\.0\.1:(\d+)/.exec(err); if (m) resolve(Number(m[1])); });
  server.on('exit', () => reject(new Error('serve exited: ' + err)));
  setTimeout(() => reject(new Error('serve did not start: ' + err)), 30000);
});
const browser = await chromium.launch({
  executablePath: process.env.MLPROF_CHROMIUM || '/usr/bin/chromium', headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
});
try {
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  const opened = Date.now();
  await page.goto(`http://127.0.0.1:${port}/`);
  const box = page.locator('[data-testid="load-progress"][data-state="loading"]');
  await box.waitFor({ timeout: 60000 });
  const shownAfter = Date.now() - opened;
  const text = await box.textContent();
  check(/Loading big\.json: [\d.]+ MB of [\d.]+ MB \(\d+ %\), [\d,]+ events read, [\d.]+ s(, about [\d.]+ s left)?/.test(text), `progress shown: "${text}"`);
  console.log(`progress shown ${shownAfter} ms after the page was opened`);
  await page.waitForSelector('[data-pane="overview"][data-ready="1"]', { timeout: 300000 });
  check(await page.locator('[data-testid="load-progress"]').count() === 0, 'the progress line is gone once the Overview is drawn');
  await page.click('[data-tab="timeline"]');
  await page.waitForSelector('[data-pane="timeline"][data-ready="1"]', { timeout: 300000 });
  await page.waitForFunction(() => window.mlprofTimeline && Number(document.querySelector('[data-testid="timeline-canvas"]').dataset.drawn) > 0);
  const attr = (k) => page.locator('[data-testid="timeline-canvas"]').getAttribute(k);
  const slices = await page.evaluate(() => window.mlprofTimeline.laneSlices.reduce((a, b) => a + b, 0));
  const held = Number(await attr('data-held'));
  check(await page.locator('[data-testid="timeline-tiled"]').count() === 1, 'the page says the timeline is tiled');
  check(held > 0 && held < slices / 5, `the browser holds ${held} marks for ${slices} slices`);
  const tile0 = await attr('data-tile');
  // Zoom into 20 µs in the middle: a finer tile comes, exact.
  await page.evaluate(() => { const t = window.mlprofTimeline, v = t.view(), m = (v.t0 + v.t1) / 2; t.setView(m, m + 20000); });
  await page.waitForFunction((t) => { const c = document.querySelector('[data-testid="timeline-canvas"]'); return c.dataset.tile !== t && / exact$/.test(c.dataset.tile); }, tile0, { timeout: 60000 });
  const tile1 = await attr('data-tile');
  check(/ exact$/.test(tile1), `zoomed to 20 µs: an exact tile (${tile1}, ${await attr('data-held')} slices held)`);
  check(Number(await attr('data-drawn')) > 0, 'the exact tile is drawn');
  // Back out: a merged tile again.
  await page.dblclick('[data-testid="timeline-canvas"]');
  await page.waitForFunction(() => !/ exact$/.test(document.querySelector('[data-testid="timeline-canvas"]').dataset.tile), null, { timeout: 60000 });
  check(true, `reset: a merged tile again (${await attr('data-tile')})`);
  check(errors.length === 0, `no page errors ${errors.join('; ')}`);
} finally {
  await browser.close();
  server.kill();
  fs.rmSync(tmp, { recursive: true, force: true });
}
console.log(`${checks - failures}/${checks} checks passed`);
process.exit(failures ? 1 : 0);
