// The report's memory view (issue 28 item 3, the TensorBoard plugin's memory view): a drag across
// a device's memory curve lists every allocation allocated or freed inside the selected range,
// freed or not. Each device's rows and bytes equal tests/web/memory_range_expect.py, which pairs
// frees with allocations from the trace's JSON alone; with no range, every allocation is listed.
// Usage: node memory_range_test.mjs MLPROF TRACE   (tests/cli/web_memory.sh)
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const [mlprof, trace] = process.argv.slice(2);
const here = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(process.env.MLPROF_NODE_MODULES + '/');
const { chromium } = require('playwright-core');
let failures = 0, checks = 0;
function check(cond, what) { checks++; if (!cond) { failures++; console.log('FAIL', what); } else console.log('ok', what); }
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'mlprof-memrange-'));
const out = path.join(tmp, 'r.html');
execFileSync(mlprof, ['report', trace, '-o', out], { stdio: 'ignore' });
const begin = JSON.parse(execFileSync(mlprof, ['summary', trace, '--json'], { encoding: 'utf8' })).begin_ns;
const expect = (lo, hi) => JSON.parse(execFileSync('python3', [path.join(here, 'memory_range_expect.py'), trace,
  String(begin), String(lo), String(hi)], { encoding: 'utf8' })).devices;

const browser = await chromium.launch({ executablePath: process.env.MLPROF_CHROMIUM, args: ['--no-sandbox'] });
try {
  const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.goto('file://' + out);
  await page.click('button[data-tab="memory"]');
  await page.waitForSelector('[data-pane="memory"][data-ready="1"]', { timeout: 60000 });
  const tables = page.locator('[data-pane="memory"] [data-testid="memory-allocations"]');
  const charts = page.locator('[data-pane="memory"] [data-testid="memory-chart"]');
  const n = await tables.count();
  check(n > 0 && n === await charts.count(), `one allocation table per memory chart (${n})`);
  const all = expect(-1e30, 1e30);
  for (let k = 0; k < n; k++) {
    const t = tables.nth(k);
    const head = await t.locator('h3').textContent();
    const device = Object.keys(all).find((d) => head.endsWith(` on ${d}`));
    check(!!device, `table ${k} names a device of the trace: ${head}`);
    if (!device) continue;
    const ds = async () => t.evaluate((e) => ({ ...e.dataset }));
    let d = await ds();
    check(/^Allocations on /.test(head), `every allocation listed, not only the never-freed ones: "${head}"`);
    check(Number(d.total) === all[device].total, `${device}: ${d.total} allocations in all, Python ${all[device].total}`);
    if (Number(d.listed) < Number(d.total)) { console.log(`(${device}: only the largest ${d.listed} listed; range check skipped)`); continue; }
    check(Number(d.rows) === all[device].rows && Number(d.bytes) === all[device].bytes,
      `${device}, no range: ${d.rows} rows / ${d.bytes} B, Python ${all[device].rows} / ${all[device].bytes}`);
    // Drag across the middle of the curve: the range's rows against Python's.
    const box = await charts.nth(k).locator('.u-over').boundingBox();
    for (const [a, b] of [[0.3, 0.6], [0.05, 0.2], [0.7, 0.98]]) {
      await page.mouse.move(box.x + box.width * a, box.y + box.height / 2);
      await page.mouse.down();
      await page.mouse.move(box.x + box.width * (a + b) / 2, box.y + box.height / 2, { steps: 4 });
      await page.mouse.move(box.x + box.width * b, box.y + box.height / 2, { steps: 4 });
      await page.mouse.up();
      await page.waitForTimeout(100);
      d = await ds();
      check(d.rangeLo !== '', `${device}: a drag over ${a}-${b} of the chart selects a range`);
      if (d.rangeLo === '') continue;
      const e = expect(Number(d.rangeLo), Number(d.rangeHi))[device];
      check(Number(d.rows) === e.rows && Number(d.bytes) === e.bytes,
        `${device}, +${d.rangeLo}..+${d.rangeHi} ns: ${d.rows} rows / ${d.bytes} B, Python ${e.rows} / ${e.bytes}`);
      const listed = await t.locator('[data-table="memory.allocations"] tbody tr').count();
      check(listed === Math.min(Number(d.rows), listed) && (Number(d.rows) === 0 || listed > 0), `${device}: the table shows the range's rows (${listed} drawn of ${d.rows})`);
      const freedCells = await t.locator('[data-table="memory.allocations"] td[data-col="freed_offset_ns"]').allTextContents();
      check(freedCells.length === listed, `${device}: a "freed at" column on every row`);
    }
  }
  check(errors.length === 0, `no page errors ${errors.join(' | ')}`);
} finally {
  await browser.close();
  fs.rmSync(tmp, { recursive: true, force: true });
}
console.log(`${checks - failures}/${checks} checks passed`);
process.exit(failures ? 1 : 0);
