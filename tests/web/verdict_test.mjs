// The report Overview's verdict agrees with the numbers on the same page (issue 25): the verdict's
// "Top fix saves ≈ X (Y% of ...)" is the first finding listed under Top recommendations, with the
// same saving (text and data-value), that finding is `mlprof bottlenecks --json`'s top one, the
// combined line ("All N priced findings together (one replay over ...)") is at most 100% and at
// least the top saving, and the findings' savings shown add up to at most 100% of the basis.
// The replay's windows named on the page are those of the step model (bottlenecks JSON
// combined.window). Usage: node verdict_test.mjs MLPROF TRACE...
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';

const [mlprof, ...traces] = process.argv.slice(2);
const require = createRequire(process.env.MLPROF_NODE_MODULES + '/');
const { chromium } = require('playwright-core');
let failures = 0, checks = 0;
function check(cond, what) { checks++; if (!cond) { failures++; console.log('FAIL', what); } else console.log('ok', what); }
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'mlprof-verdict-'));

const UNIT = { ns: 1, 'µs': 1e3, us: 1e3, ms: 1e6, s: 1e9, '%': 1 };
// "saves ≈ 37.9 ms (43.8% of step time)" -> [37.9e6, 43.8]
function savingOf(text) {
  const m = /saves ≈ ([\d,.]+)\s*(ns|µs|us|ms|s) \(([\d.]+)\s*% of ([^)]+)\)/.exec(text);
  if (!m) return null;
  return { ns: Number(m[1].replace(/,/g, '')) * UNIT[m[2]], pct: Number(m[3]), of: m[4] };
}
// Shown to 3-4 significant digits.
const near = (a, b) => Math.abs(a - b) <= Math.max(0.006 * Math.abs(b), 1);
const WINDOW = { profiler_step: 'ProfilerStep', vllm: 'vLLM iteration', sglang: 'SGLang iteration', trace_span: "step thread's span" };

const browser = await chromium.launch({ executablePath: process.env.MLPROF_CHROMIUM || '/usr/bin/chromium',
  headless: true, args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'] });
try {
  for (const trace of traces) {
    const name = path.basename(trace);
    const j = JSON.parse(execFileSync(mlprof, ['bottlenecks', trace, '--json'], { encoding: 'utf8', maxBuffer: 1 << 28 }));
    const out = path.join(tmp, name + '.html');
    execFileSync(mlprof, ['report', trace, '-o', out], { stdio: 'ignore' });
    const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
    await page.goto('file://' + out);
    await page.waitForSelector('[data-pane="overview"][data-ready="1"]', { timeout: 60000 });
    const verdict = await page.locator('[data-testid="verdict"]').textContent();
    const timed = j.findings.filter((f) => f.est_savings_ns > 0);
    check(timed.length > 0, `${name}: the trace has a priced finding (${j.findings.length} findings)`);
    if (!timed.length) { await page.close(); continue; }
    const top = timed[0];
    const v = savingOf(verdict);
    check(v !== null, `${name}: the verdict states a saving: '${verdict}'`);
    check(verdict.includes(top.title), `${name}: the verdict names the top finding '${top.title}'`);
    // The first of the Top recommendations: the same finding and saving.
    const first = page.locator('[data-testid="top-recommendations"] > li').first();
    check(await first.getAttribute('data-kind') === top.kind, `${name}: first recommendation is ${top.kind}`);
    const shown = first.locator('.saving').first();
    const shownValue = Number(await shown.getAttribute('data-value'));
    const s = savingOf(await shown.textContent());
    check(shownValue === top.est_savings_ns, `${name}: recommendation data-value ${shownValue} = JSON ${top.est_savings_ns}`);
    if (v && s) {
      check(near(v.ns, s.ns) && v.pct === s.pct && v.of === s.of,
        `${name}: verdict saving ${v.ns} ns ${v.pct}% of ${v.of} = top recommendation's ${s.ns} ns ${s.pct}% of ${s.of}`);
      check(near(v.ns, top.est_savings_ns), `${name}: verdict ${v.ns} ns = JSON ${top.est_savings_ns}`);
      check(v.pct <= 100, `${name}: verdict saving ${v.pct}% <= 100%`);
    }
    // Every finding's saving listed (all findings section) adds up to at most the basis.
    const all = await page.locator('[data-testid="recommendations"] > li .saving').allTextContents();
    const sumPct = all.map(savingOf).filter(Boolean).reduce((a, x) => a + x.pct, 0);
    check(sumPct <= 100.05, `${name}: the findings' savings on the page add up to ${sumPct.toFixed(1)}% <= 100%`);
    // The combined replay: one line, <= 100%, >= the top saving, over the step model's windows.
    const comb = page.locator('.saving.combined');
    if (j.combined.saving_ns > 0) {
      const ct = await comb.textContent();
      const c = savingOf(ct);
      check(c !== null && c.pct <= 100, `${name}: combined '${ct}' <= 100%`);
      check(c !== null && c.ns + 1 >= (v ? v.ns : 0) * 0.994, `${name}: combined ${c && c.ns} >= the top fix ${v && v.ns}`);
      check(Number(await comb.getAttribute('data-value')) === j.combined.saving_ns, `${name}: combined data-value = JSON`);
      check(ct.includes(WINDOW[j.combined.window] || '?'), `${name}: combined names the windows (${j.combined.window}): '${ct}'`);
    }
    await page.close();
  }
} finally {
  await browser.close();
}
console.log(`${checks - failures}/${checks} checks passed`);
process.exit(failures ? 1 : 0);
