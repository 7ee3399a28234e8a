// The report Overview's "Iterations by phase" table (issue 27), clicked open in chromium
// (tests/cli/web_serving_phases.sh): a generated multi-iteration vLLM trace reported with
// `--step-annotation REGEX` naming only its decodes at batch 16 and 32. Each cell (iterations,
// batch mean/min/max, tokens, host mean/p50/p90, GPU busy and idle means) must equal what this
// script computes from the generator's planted truths (tests/py/serving_steps_traces.py) of the
// iterations the regex names, captures and warm-ups out; the table must have only the decode row
// (without the flag it would have prefill and mixed rows too, and the decode row other numbers).
// Usage: node serving_phases_test.mjs MLPROF TRACE TRUTHS_JSON REGEX
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';

const [mlprof, trace, truthsFile, regex] = process.argv.slice(2);
const require = createRequire(process.env.MLPROF_NODE_MODULES + '/');
const { chromium } = require('playwright-core');
let failures = 0, checks = 0;
function check(cond, what) { checks++; if (!cond) { failures++; console.log('FAIL', what); } }

// Expected, from the truths.
const rx = new RegExp(regex);
const steady = JSON.parse(fs.readFileSync(truthsFile, 'utf8')).filter((t) => rx.test(t.name) && !t.capture && !t.warmup);
const mean = (v) => v.reduce((a, b) => a + b, 0) / v.length;
const quantile = (v, q) => {
  const s = [...v].sort((a, b) => a - b);
  const pos = q * (s.length - 1), lo = Math.floor(pos), hi = Math.min(lo + 1, s.length - 1);
  return s[lo] + (s[hi] - s[lo]) * (pos - lo);
};
const host = steady.map((t) => t.host_ns), batch = steady.map((t) => t.batch);
const want = {
  phase: 'decode', count: steady.length, batch_mean: mean(batch), batch_min: Math.min(...batch), batch_max: Math.max(...batch),
  tokens: steady.reduce((a, t) => a + t.context_tokens + t.generation_tokens, 0),
  host_mean_ns: mean(host), host_p50_ns: quantile(host, 0.5), host_p90_ns: quantile(host, 0.9),
  gpu_busy_mean_ns: mean(steady.map((t) => t.gpu_busy_ns)),
  gpu_idle_mean_ns: mean(steady.map((t) => t.gpu_window_ns - t.gpu_busy_ns)),
};
check(steady.length > 0 && steady.every((t) => t.phase === 'decode'), `the regex names ${steady.length} steady decodes`);

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'mlprof-phases-'));
const out = path.join(tmp, 'r.html');
execFileSync(mlprof, ['report', trace, '--step-annotation', regex, '-o', out], { stdio: 'ignore' });
const browser = await chromium.launch({ executablePath: process.env.MLPROF_CHROMIUM || '/usr/bin/chromium',
  headless: true, args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'] });
try {
  const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.goto('file://' + out);
  await page.waitForSelector('[data-pane="overview"][data-ready="1"]', { timeout: 60000 });
  const table = page.locator('[data-pane="overview"] [data-table="steps.phases"]');
  check(await table.count() === 1, 'the Overview has the "Iterations by phase" table');
  const heading = await page.locator('[data-pane="overview"] h4', { hasText: 'Iterations by phase' }).count();
  check(heading === 1, 'its heading says "Iterations by phase"');
  const rows = await table.locator('tbody tr').evaluateAll((trs) => trs.map((tr) =>
    Object.fromEntries([...tr.querySelectorAll('td[data-col]')].map((td) => [td.dataset.col, [td.dataset.value, td.textContent]]))));
  check(rows.length === 1, `one phase row (decode), got ${rows.length}: ${rows.map((r) => r.phase && r.phase[0]).join(', ')}`);
  const row = rows[0] || {};
  for (const [k, v] of Object.entries(want)) {
    const cell = row[k];
    if (!cell) { check(false, `column ${k} missing`); continue; }
    const ok = typeof v === 'string' ? cell[0] === v : Math.abs(Number(cell[0]) - v) <= (Number.isInteger(v) ? 0 : Math.max(1e-6, Math.abs(v) * 1e-9));
    check(ok, `${k}: cell ${cell[0]} ('${cell[1]}') vs ${v}`);
    check(cell[1].trim() !== '' && cell[1] !== '-1' && !/NaN|undefined/.test(cell[1]), `${k}: shown as '${cell[1]}'`);
  }
  const headers = await table.locator('th').allTextContents();
  check(headers.some((h) => /host p90/.test(h)) && headers.some((h) => /GPU idle mean/.test(h)) && !headers.some((h) => /_ns\b|_mean\b/.test(h)),
    `headers in words: ${headers.join(' | ')}`);
  check(errors.length === 0, `page errors: ${errors.join('; ')}`);
} finally {
  await browser.close();
}
console.log(`${checks - failures}/${checks} checks passed`);
process.exit(failures ? 1 : 0);
