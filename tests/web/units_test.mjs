// Units on the report's generic views (tests/cli/web_units.sh): each value shown must read back,
// unit included, as the number the CLI's --json has for it. Found wrong before: a memory snapshot's
// block counts shown as bytes ("397 B"), bytes by state unformatted, its epoch start time as
// "1763324226 s", unused_fraction as 0.4655; the compiled regions' GPU time in raw ns; the ranks'
// distributions in raw ns; "1 rows".
// Also: a snapshot's segment addresses in hex, the Modules tab's step card naming what "% step" divides
// by (ProfilerStep#, vLLM iterations' GPU windows, or the trace span).
// The GPU tab's launch statistics (cpu_duration_us: mean, p50... had no unit; count stays a count).
// Usage: node units_test.mjs MLPROF SNAPSHOT RANK_DIR COMPILE_TRACE MODULES_TRACE GPU_TRACE
// (empty = skip that part)
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';

const [mlprof, snapshot, rankDir, compileTrace, modulesTrace, gpuTrace] = process.argv.slice(2);
// ProfilerStep# events and vLLM execute_* iterations of a Kineto trace, and whether it has GPU
// work, counted in Python (independent of mlprof).
const STEPS_PY = `import gzip, json, re, sys
op = gzip.open if sys.argv[1].endswith('.gz') else open
d = json.load(op(sys.argv[1]))
ev = [e for e in (d['traceEvents'] if isinstance(d, dict) else d) if e.get('ph') == 'X']
gpu = {e['pid'] for e in ev if e.get('cat') in ('kernel', 'gpu_memcpy', 'gpu_memset')}
host = [str(e.get('name', '')) for e in ev if e['pid'] not in gpu and e.get('cat') != 'gpu_user_annotation']
vllm = re.compile(r'^execute_(\\d+_context_\\d+\\(.*\\)_generation_\\d+\\(.*\\)|context_\\d+\\([\\d_]+\\)_generation_\\d+\\([\\d_]+\\))$')
print(json.dumps([sum(n.startswith('ProfilerStep#') for n in host), sum(bool(vllm.match(n)) for n in host), bool(gpu)]))`;
const require = createRequire(process.env.MLPROF_NODE_MODULES + '/');
const { chromium } = require('playwright-core');
let failures = 0, checks = 0;
function check(cond, what) { checks++; if (!cond) { failures++; console.log('FAIL', what); } }
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'mlprof-units-'));
const cliJson = (...args) => JSON.parse(execFileSync(mlprof, [...args, '--json'], { encoding: 'utf8', maxBuffer: 1 << 28 }));

// "615.1 ms" -> 615.1e6 (ns); "967.44 MiB" -> bytes; "46.55 %" -> 0.4655; "1,234" -> 1234.
const UNIT = { ns: 1, 'µs': 1e3, us: 1e3, ms: 1e6, s: 1e9, B: 1, KiB: 1024, MiB: 1024 ** 2, GiB: 1024 ** 3, TiB: 1024 ** 4, '%': 0.01 };
function parse(text) {
  const m = /^([+−-]?)([\d,]*\.?\d+)\s*(ns|µs|us|ms|s|B|KiB|MiB|GiB|TiB|%)?$/.exec(text.trim());
  if (!m) return null;
  return (m[1] === '−' || m[1] === '-' ? -1 : 1) * Number(m[2].replace(/,/g, '')) * (m[3] ? UNIT[m[3]] : 1);
}
// Shown to 3-4 significant digits: within 0.5% (or 1 unit for small integers).
function close(text, want, label) {
  const got = parse(text);
  check(got !== null && Math.abs(got - want) <= Math.max(0.005 * Math.abs(want), 0.51),
    `${label}: page '${text}' reads ${got}, JSON ${want}`);
}

async function openReport(browser, input, tab) {
  const out = path.join(tmp, tab + '.html');
  execFileSync(mlprof, ['report', input, '-o', out], { stdio: 'ignore' });
  const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
  await page.goto('file://' + out);
  await page.click(`button[data-tab="${tab}"]`);
  await page.waitForSelector(`[data-pane="${tab}"][data-ready="1"]`, { timeout: 30000 });
  return page;
}
const cardText = (page, key) => page.locator(`[data-key="${key}"] .card-value`).first().textContent();

const browser = await chromium.launch({ executablePath: process.env.MLPROF_CHROMIUM || '/usr/bin/chromium',
  headless: true, args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'] });
try {
  if (snapshot) {
    const j = cliJson('memory', snapshot);
    const page = await openReport(browser, snapshot, 'memory');
    for (const [state, n] of Object.entries(j.blocks_by_state)) {
      const t = await cardText(page, `memory_snapshot.blocks_by_state.${state}`);
      check(/^[\d,]+$/.test(t.trim()) && parse(t) === n, `blocks_by_state.${state}: '${t}' is a count of ${n}`);
    }
    for (const [state, b] of Object.entries(j.bytes_by_state)) {
      const t = await cardText(page, `memory_snapshot.bytes_by_state.${state}`);
      check(/B$/.test(t.trim()), `bytes_by_state.${state}: '${t}' has a byte unit`);
      close(t, b, `bytes_by_state.${state}`);
    }
    close(await cardText(page, 'memory_snapshot.unused_fraction'), j.unused_fraction, 'unused_fraction');
    // The snapshot's start is the trace's origin: "+0 ns", not epoch seconds.
    const start = await cardText(page, 'memory_snapshot.start_time_us');
    check(start.trim().startsWith('+') && Math.abs(parse(start)) < 1e9, `start_time_us: '${start}' is relative to the trace start`);
    // The overview's import line: a snapshot's importer does not count events read (0), so the
    // line must not say "0 events read" for a trace of thousands of events.
    await page.click('button[data-tab="overview"]');
    await page.waitForSelector('[data-pane="overview"][data-ready="1"]', { timeout: 30000 });
    const strip = await page.locator('[data-testid="import-warnings"]').textContent();
    check(!/(^|\D)0 events read/.test(strip), `overview import line on a snapshot: '${strip}'`);
    await page.click('button[data-tab="memory"]');
    // Segment addresses in hex, as the CLI prints them (they were decimal with commas).
    const addr = page.locator('[data-pane="memory"] td[data-col="address"]').first();
    const [raw, shown] = [await addr.getAttribute('data-value'), (await addr.textContent()).trim()];
    check(shown === '0x' + BigInt(raw).toString(16), `segment address '${shown}' is 0x + hex of ${raw}`);
    await page.close();
  }
  if (modulesTrace) {
    // The card % of step divides by names what it is: ProfilerStep# time or the trace span.
    // ProfilerStep# by their count; vLLM iterations (issue 27) on a GPU trace by their GPU windows.
    const [steps, vllm, gpu] = JSON.parse(execFileSync('python3', ['-c', STEPS_PY, modulesTrace], { encoding: 'utf8' }));
    const page = await openReport(browser, modulesTrace, 'modules');
    const label = (await page.locator('[data-key="modules.step_ns"] .card-label').textContent()).trim();
    const want = steps ? `${steps} profiler step` : vllm ? `${vllm} vLLM iteration${vllm === 1 ? '' : 's'}${gpu ? ', GPU windows' : ''}` : 'trace span';
    check(label.startsWith(want), `modules step card with ${steps} ProfilerStep# events, ${vllm} vLLM iterations: '${label}', want '${want}'`);
    // The Overview's combined saving is the bottlenecks JSON's one replay of all findings
    // together (issue 25), not a sum of the rows.
    const bj = cliJson('bottlenecks', modulesTrace);
    await page.click('button[data-tab="overview"]');
    await page.waitForSelector('[data-pane="overview"][data-ready="1"]', { timeout: 30000 });
    const comb = page.locator('[data-key="bottlenecks.combined.saving_ns"]');
    check(bj.combined && bj.combined.saving_ns > 0 && await comb.count() === 1 &&
      Number(await comb.getAttribute('data-value')) === bj.combined.saving_ns,
      `overview combined saving ${await comb.count() ? await comb.getAttribute('data-value') : 'missing'}, JSON ${JSON.stringify(bj.combined)}`);
    await page.close();
  }
  if (gpuTrace) {
    const j = cliJson('gpu', gpuTrace).launch_stats;
    const page = await openReport(browser, gpuTrace, 'gpu');
    for (const k of ['cpu_duration_us', 'gpu_duration_us', 'launch_delay_us']) {
      for (const s of ['mean', 'p50', 'max']) {
        const t = await cardText(page, `gpu.launch_stats.${k}.${s}`);
        check(/(ns|µs|ms|s)$/.test(t.trim()), `launch_stats.${k}.${s}: '${t}' has a time unit`);
        close(t, j[k][s] * 1e3, `launch_stats.${k}.${s}`);
      }
      const n = await cardText(page, `gpu.launch_stats.${k}.count`);
      check(parse(n) === j[k].count && /^[\d,]+$/.test(n.trim()), `launch_stats.${k}.count: '${n}' is ${j[k].count}`);
    }
    await page.close();
  }
  if (rankDir) {
    const j = cliJson('ranks', rankDir);
    const page = await openReport(browser, rankDir, 'ranks');
    const rows = page.locator('[data-table$="distributions"] tbody tr');
    await rows.first().waitFor();
    const n = await rows.count();
    check(n === j.distributions.length, `distributions: ${n} rows vs ${j.distributions.length}`);
    for (let i = 0; i < n; i++) {
      // The cell reads "mean step time"; its data-value keeps the JSON's metric key.
      const metric = await rows.nth(i).locator('td[data-col="metric"]').getAttribute('data-value');
      const d = j.distributions.find((x) => x.metric === metric);
      if (!d || !/_ns$/.test(metric)) continue;
      for (const c of ['min', 'p50', 'max', 'mean']) {
        const t = await rows.nth(i).locator(`td[data-col="${c}"]`).textContent();
        check(/(ns|µs|ms|s)$/.test(t.trim()), `distributions ${metric}.${c}: '${t}' has a time unit`);
        close(t, d[c], `distributions ${metric}.${c}`);
      }
    }
    // A one-row table says "1 row".
    const one = page.locator('[data-pane="ranks"] [data-table][data-rows="1"] [data-testid="table-count"]');
    const ones = await one.allTextContents();
    check(ones.length > 0 && ones.every((t) => t.trim() === '1 row'), `one-row tables say '1 row': ${JSON.stringify(ones)}`);
    await page.close();
  }
  if (compileTrace) {
    const j = cliJson('compile', compileTrace);
    const page = await openReport(browser, compileTrace, 'compile');
    // Its only import problem is unmatched flow endpoints, which the CLI does not warn about
    // (docs/traces.md): listed on the overview, but no ⚠ warning strip.
    const kinds = Object.keys(cliJson('summary', compileTrace).import.problems || {});
    await page.click('button[data-tab="overview"]');
    await page.waitForSelector('[data-pane="overview"][data-ready="1"]', { timeout: 30000 });
    const strip = page.locator('[data-testid="import-warnings"]');
    const [cls, text] = [await strip.getAttribute('class'), await strip.textContent()];
    check(kinds.length > 0 && kinds.every((k) => k === 'unmatched_flow' || k === 'unmatched_end') &&
      !text.includes('⚠') && cls === 'import-ok' && await strip.locator('[data-problem="unmatched_flow"]').count() === 1,
      `unmatched flows (${kinds}) listed without a warning: class '${cls}', '${text}'`);
    // An AMD GPU (deviceProperties read in Python): its matrix-core (MFMA) kernels are recognised
    // by family (hipBLASLt/Tensile _MI, CK xdl, mfma: docs/gpu-analysis.md), so the Kernels tab shows
    // the share `mlprof kernels --json` computes, and names the matrix unit it measured.
    const amd = execFileSync('python3', ['-c', `import gzip, json, sys
d = json.load(gzip.open(sys.argv[1]))
print(any('AMD' in p.get('name', '') for p in d.get('deviceProperties', [])))`, compileTrace], { encoding: 'utf8' }).trim() === 'True';
    await page.click('button[data-tab="kernels"]');
    await page.waitForSelector('[data-pane="kernels"][data-ready="1"]', { timeout: 30000 });
    const share = await page.locator('[data-key="kernels.tensor_core_share"]').count();
    // Measured: the share card is shown (never on an unmeasured GPU) and names the matrix unit.
    const shareLabel = share === 1 ? await page.locator('[data-key="kernels.tensor_core_share"] .card-label').first().textContent() : '';
    const measured = share === 1 && shareLabel.includes(cliJson('kernels', compileTrace).matrix_unit || 'tensor cores') ? 'yes' : shareLabel;
    // The Overview's combined line is there exactly when the replay saves something.
    const bj = cliJson('bottlenecks', compileTrace);
    await page.click('button[data-tab="overview"]');
    const comb = page.locator('[data-key="bottlenecks.combined.saving_ns"]');
    const saves = !!(bj.combined && bj.combined.saving_ns > 0);
    check(saves === (await comb.count() > 0),
      `a combined saving line exactly when the replay saves (${saves ? bj.combined.saving_ns : 0} ns)`);
    const kj = cliJson('kernels', compileTrace);
    const shareText = share === 1 ? await cardText(page, 'kernels.tensor_core_share') : '';
    check(amd && kj.tensor_cores_measured === true && share === 1 && measured.trim() === 'yes' &&
      Math.abs(parseFloat(shareText) - 100 * kj.tensor_core_share) < 0.01,
      `AMD trace: tensor-core share cards ${share} '${shareText}' (CLI ${kj.tensor_core_share}), measured '${measured}'`);
    await page.click('button[data-tab="compile"]');
    await page.waitForSelector('[data-pane="compile"][data-ready="1"]', { timeout: 30000 });
    for (const k of ['gpu_ns_in_compiled', 'gpu_ns_outside']) {
      const t = await cardText(page, `compile.runtime.${k}`);
      check(/(ns|µs|ms|s)$/.test(t.trim()), `compile.runtime.${k}: '${t}' has a time unit`);
      close(t, j.runtime[k], `compile.runtime.${k}`);
    }
    await page.close();
  }
} finally {
  await browser.close();
  fs.rmSync(tmp, { recursive: true, force: true });
}
console.log(`${checks - failures}/${checks} checks passed`);
process.exit(failures ? 1 : 0);
