// `mlprof flame -o x.json` opened in speedscope itself: the npm `speedscope` package's web app is
// served on loopback with the profile beside it, loaded in headless chromium through its
// #profileURL= hash, and its Sandwich view (a DOM table of every frame's total and self weight)
// is read back. Frame names and self weights must match `mlprof ops --json` (per-name self
// time, computed by the op statistics, not by the speedscope writer); the ProfilerStep#* total
// must match `mlprof steps --json`.
// Usage: node speedscope_test.mjs MLPROF OUT_DIR TRACE... (env MLPROF_NODE_MODULES)
import http from 'node:http';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';

const [mlprof, outDir, ...traces] = process.argv.slice(2);
const require = createRequire(process.env.MLPROF_NODE_MODULES + '/');
const { chromium } = require('playwright-core');
const app = path.join(process.env.MLPROF_NODE_MODULES, 'speedscope', 'dist', 'release');
const cli = (...args) => execFileSync(mlprof, args, { encoding: 'utf8', maxBuffer: 1 << 28, stdio: ['ignore', 'pipe', 'pipe'] });
let failures = 0, checks = 0;
function check(cond, what) { checks++; if (!cond) { failures++; console.log('FAIL', what); } }
fs.mkdirSync(outDir, { recursive: true });
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'mlprof-speedscope-'));

const TYPES = { '.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css', '.json': 'application/json',
  '.wasm': 'application/wasm', '.png': 'image/png', '.woff2': 'font/woff2', '.ttf': 'font/ttf', '.ico': 'image/x-icon' };
let profilePath = null;
const server = http.createServer((req, res) => {
  const u = new URL(req.url, 'http://127.0.0.1');
  const rel = path.normalize(decodeURIComponent(u.pathname)).replace(/^(\.\.[/\\])+/, '').replace(/^\/+/, '');
  const file = rel === 'profile.json' ? profilePath : path.join(app, rel || 'index.html');
  if (!file.startsWith(app) && file !== profilePath) { res.writeHead(403); res.end(); return; }
  fs.readFile(file, (err, data) => {
    if (err) { res.writeHead(404); res.end(); return; }
    res.writeHead(200, { 'content-type': TYPES[path.extname(file)] || 'application/octet-stream' });
    res.end(data);
  });
});
await new Promise((r) => server.listen(0, '127.0.0.1', r));
const base = `http://127.0.0.1:${server.address().port}`;

// "167.55ms (48%)" -> ns
function parseWeight(text) {
  const m = /^([\d.]+)\s*(ns|µs|us|ms|s|min|h)\b/.exec(text.trim());
  if (!m) return NaN;
  const mul = { ns: 1, 'µs': 1e3, us: 1e3, ms: 1e6, s: 1e9, min: 60e9, h: 3600e9 }[m[2]];
  return Number(m[1]) * mul;
}
// speedscope shows 2 decimals of its unit (and fewer digits as values grow): half a unit of the
// last digit shown, plus a tiny relative slack.
function close(shownText, shown, want) {
  const m = /^([\d.]+)\s*(\S+?)\s/.exec(shownText.trim() + ' ');
  const decimals = m && m[1].includes('.') ? m[1].split('.')[1].length : 0;
  const unit = parseWeight('1' + (m ? m[2] : 'ns'));
  return Math.abs(shown - want) <= 0.5 * unit * 10 ** -decimals + 1e-6 * want + 1;
}

const browser = await chromium.launch({ executablePath: process.env.MLPROF_CHROMIUM || '/usr/bin/chromium', headless: true,
  args: ['--no-sandbox', '--use-gl=swiftshader', '--enable-unsafe-swiftshader', '--no-first-run', '--disable-dev-shm-usage'] });
try {
  for (const trace of traces) {
    const tag = path.basename(trace).replace(/\W+/g, '_');
    profilePath = path.join(tmp, `${tag}.json`);
    cli('flame', trace, '-o', profilePath);
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    const errors = [];
    page.on('pageerror', (e) => errors.push(e.message));
    page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
    await page.goto(`${base}/index.html#profileURL=${encodeURIComponent(base + '/profile.json')}`);
    // Loaded: the profile's name is in the toolbar.
    await page.waitForFunction((n) => document.body.innerText.includes(n), path.basename(trace), { timeout: 30000 });
    await page.waitForTimeout(500);
    await page.screenshot({ path: path.join(outDir, `speedscope-${tag}-time-order.png`) });
    await page.keyboard.press('3');  // Sandwich view
    await page.waitForSelector('tr td', { timeout: 10000 });
    // The table is virtualized: read the rows as they scroll by.
    const rows = new Map();
    for (let k = 0; k < 400; k++) {
      const batch = await page.evaluate(() => [...document.querySelectorAll('tr')].filter((r) => r.cells.length === 3 && r.cells[0].tagName === 'TD')
        .map((r) => [r.cells[2].textContent, r.cells[0].firstChild.textContent, r.cells[1].firstChild.textContent]));
      const before = rows.size;
      for (const [name, total, self] of batch) rows.set(name, { total, self });
      const moved = await page.evaluate(() => {
        const t = document.querySelector('tr td')?.closest('div[style*="overflow"], div');
        let el = document.querySelector('tr td');
        while (el && !(el.scrollHeight > el.clientHeight + 2 && getComputedStyle(el).overflowY !== 'visible')) el = el.parentElement;
        if (!el) return false;
        const top = el.scrollTop; el.scrollTop += el.clientHeight * 0.8; return el.scrollTop > top;
      });
      if (!moved && rows.size === before) break;
      await page.waitForTimeout(20);
    }
    await page.screenshot({ path: path.join(outDir, `speedscope-${tag}-sandwich.png`) });
    const ops = JSON.parse(cli('ops', trace, '--json', '--top', '0'));
    const opRows = (Array.isArray(ops) ? ops : ops.ops).filter((o) => o.category !== 'Trace');
    const selfByName = new Map();
    // A CPU frame weighs its self time; a GPU frame (kernel, copy, set) its whole duration.
    const gpu = (o) => /^(kernel|gpu_|cuda_profiler_range)/.test(o.category);
    for (const o of opRows) {
      if (o.name.startsWith('ProfilerStep#')) continue;
      selfByName.set(o.name, (selfByName.get(o.name) || 0) + (gpu(o) ? o.total_ns : o.self_ns));
    }
    const top = [...selfByName.entries()].sort((a, b) => b[1] - a[1]).slice(0, 15);
    check(rows.size >= Math.min(20, selfByName.size), `${tag}: speedscope lists ${rows.size} frames`);
    for (const [name, self] of top) {
      const r = rows.get(name);
      check(!!r, `${tag}: frame '${name}' in speedscope`);
      if (!r) continue;
      const shown = parseWeight(r.self);
      // CPU ops only: speedscope's self of a name = its CPU self time (GPU frames are other names).
      check(close(r.self, shown, self), `${tag}: '${name}' self ${r.self} in speedscope vs ${self} ns from mlprof ops`);
    }
    const steps = JSON.parse(cli('steps', trace, '--json'));
    if (steps.count > 0 && rows.has('ProfilerStep#*')) {
      const r = rows.get('ProfilerStep#*');
      // Within 0.1%: in legacy traces (µs timestamps) a child may end a rounding step after its
      // parent, so the self times under a step add up to a little more than the step.
      const shown = parseWeight(r.total);
      check(Math.abs(shown - steps.total_ns) <= 1e-3 * steps.total_ns, `${tag}: ProfilerStep#* total ${r.total} vs steps ${steps.total_ns} ns`);
    }
    check(errors.length === 0, `${tag}: speedscope errors: ${errors.join('; ')}`);
    await page.close();
  }
} catch (e) {
  failures++;
  console.log('FAIL', e.stack || e.message);
} finally {
  await browser.close();
  server.close();
  fs.rmSync(tmp, { recursive: true, force: true });
}
console.log(`speedscope: ${checks} checks, ${failures} failures; screenshots in ${outDir}`);
process.exit(failures ? 1 : 0);
