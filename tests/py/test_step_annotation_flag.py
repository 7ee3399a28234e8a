"""`--step-annotation REGEX` everywhere steps are used (issue 27 item 1): `report` (its steps, the
Overview's "Iterations by phase" data, the replay window of its advice), `compare` (both traces'
steps and its critical-path windows) and `ranks` (every rank's steps).

Expected values come from this script: the iterations a regex names are found here over the
trace JSON (host slices whose name the regex searches, in time order, one starting inside the
previous one left out), their host durations summed and averaged here, and the per-phase
statistics computed from the planted truths of serving_steps_traces.py. Each regex is chosen so
that the iterations it names differ from the ones mlprof picks without the flag (checked too): a
command that ignored the flag fails.

Real traces: cuda-graphs/xdit_flux (4 `## Call CompiledFxGraph` calls inside one ProfilerStep),
serving/sglang_decode (SGLang's own `step[DECODE bs=32]` beside vLLM's annotation) and
compile/kineto/vllm_prefilldecode_piecewise (each of its 25 `hipGraphLaunch` calls as an
iteration); generated: multi-iteration vLLM traces (two seeds).
"""
import gzip
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
import serving_steps_traces  # noqa: E402
import shared_data  # noqa: E402
from checks import check, finish, mlprof_json  # noqa: E402

MLPROF = sys.argv[1]
GPU_CATS = {"kernel", "gpu_memcpy", "gpu_memset", "gpu_user_annotation", "Kernel", "Memcpy",
            "Memset"}
tmp = tempfile.mkdtemp()


def load(path):
    with (gzip.open(path, "rt") if path.endswith(".gz") else open(path)) as f:
        d = json.load(f)
    return d["traceEvents"] if isinstance(d, dict) else d


def iterations(path, regex, gpu_pids=()):
    """(begin ns, duration ns) of the host slices the regex names, duplicates left out."""
    rx = re.compile(regex)
    ev = sorted((e for e in load(path) if e.get("ph") == "X" and e.get("cat") not in GPU_CATS and
                 e.get("pid") not in gpu_pids and rx.search(e.get("name", ""))),
                key=lambda e: float(e["ts"]))
    out, last_end = [], None
    for e in ev:
        b = round(float(e["ts"]) * 1000)
        d = round(float(e["dur"]) * 1000)
        if last_end is not None and b < last_end:
            continue
        out.append((b, d))
        last_end = b + d
    return out


def near(a, b, tol=1.0):
    return a is not None and abs(a - b) <= tol


def report_data(path, *args):
    out = os.path.join(tmp, "r.html")
    subprocess.run([MLPROF, "report", path, "-o", out, *args], check=True, capture_output=True)
    html = open(out, encoding="utf-8").read()
    m = re.search(r'<script id="mlprof-data" type="application/json">(.*?)</script>', html, re.S)
    return json.loads(m.group(1))["analyses"] if m else {}


def check_steps(label, steps, want):
    """A steps JSON (mlprof steps / the report's) against this script's iterations."""
    check(steps.get("source") == "annotation", f"{label}: source {steps.get('source')}")
    got = [s["dur_ns"] for s in steps.get("steps", [])]
    check(len(got) == len(want) and all(near(g, d) for g, (_, d) in zip(got, want)),
          f"{label}: {len(got)} steps {got[:4]} vs {len(want)} {[d for _, d in want][:4]}")


# The traces and the regexes that name other iterations than mlprof's default choice.
G = serving_steps_traces
gen = {}
for seed in (7, 11):
    p = os.path.join(tmp, f"vllm_seed{seed}.json")
    gen[seed] = (p, G.write(p, "vllm", seed=seed))
DECODE_16_32 = r"^execute_\d+_context_0\(.*_generation_(16|32)\("  # decodes (and captures) at 16, 32
cases = [(gen[7][0], DECODE_16_32, (G.GPU_PID,)), (gen[11][0], DECODE_16_32, (G.GPU_PID,))]
for rel, rx in (("traces/cuda-graphs/xdit_flux/profile_trace_rank_0.json.gz", r"^## Call CompiledFxGraph"),
                ("traces/serving/sglang_decode/sglang_Qwen3-8B_decode.json.gz", r"^step\["),
                ("traces/compile/kineto/vllm_prefilldecode_piecewise/graph_execution.json.gz",
                 r"^hipGraphLaunch$")):
    p = shared_data.shared_path(rel)
    if p:
        cases.append((p, rx, ()))

want = {}
for path, rx, gpu_pids in cases:
    name = os.path.basename(path)
    want[path] = iterations(path, rx, gpu_pids)
    check(len(want[path]) > 0, f"{name}: the regex names iterations")
    default = mlprof_json(MLPROF, "steps", path)
    differs = (default["count"] != len(want[path]) or
               any(not near(s["dur_ns"], d) for s, (_, d) in zip(default["steps"], want[path])))
    check(differs, f"{name}: the regex's iterations differ from the default ({default['source']})")

# report: its steps and the replay window of its advice.
for path, rx, _ in cases:
    name = os.path.basename(path)
    a = report_data(path, "--step-annotation", rx)
    check_steps(f"report {name}", a.get("steps", {}), want[path])
    b = a.get("bottlenecks", {})
    if "combined" in b:
        check(b["combined"].get("window") == "annotation",
              f"report {name}: advice replay window {b['combined'].get('window')}")

# report: the Overview's "Iterations by phase" data, from the planted truths of the iterations
# the regex names (decodes at batch 16 and 32; captures and warm-ups out of the steady state).
path, truths = gen[7]
rx = re.compile(DECODE_16_32)
chosen = [t for t in truths if rx.search(t["name"])]
steady = [t for t in chosen if not t["capture"] and not t["warmup"]]
a = report_data(path, "--step-annotation", DECODE_16_32)
phases = a.get("steps", {}).get("phases", [])
check([p["phase"] for p in phases] == ["decode"], f"report phases {[p['phase'] for p in phases]}")
if phases:
    p = phases[0]
    host = sorted(t["host_ns"] for t in steady)
    busy = [t["gpu_busy_ns"] for t in steady]
    idle = [t["gpu_window_ns"] - t["gpu_busy_ns"] for t in steady]
    batch = [t["batch"] for t in steady]

    def q(v, f):
        pos = f * (len(v) - 1)
        lo = int(pos)
        hi = min(lo + 1, len(v) - 1)
        return v[lo] + (v[hi] - v[lo]) * (pos - lo)

    exp = {"count": len(steady), "batch_mean": statistics.fmean(batch), "batch_min": min(batch),
           "batch_max": max(batch),
           "tokens": sum(t["context_tokens"] + t["generation_tokens"] for t in steady),
           "host_mean_ns": statistics.fmean(host), "host_p50_ns": q(host, 0.5),
           "host_p90_ns": q(host, 0.9), "gpu_busy_mean_ns": statistics.fmean(busy),
           "gpu_idle_mean_ns": statistics.fmean(idle)}
    for k, v in exp.items():
        check(near(p.get(k), v, 1e-6 if isinstance(v, float) and v < 100 else 1),
              f"report phase decode: {k} {p.get(k)} vs {v}")
    ss = a["steps"].get("steady_state", {})
    check(ss.get("count") == len(steady) and ss.get("capture") == sum(t["capture"] for t in chosen),
          f"report steady state {ss} vs {len(steady)} ({sum(t['capture'] for t in chosen)} captures)")

# compare: both traces' steps, and its critical-path windows (one per iteration, at most 8 spread
# over the trace: kComparePathSteps in include/mlprof/analyze/compare.h).
PATH_CAP = 8
pairs = [(gen[7][0], gen[11][0], DECODE_16_32)]
pairs += [(p, p, rx) for p, rx, _ in cases[2:]]
for base, new, rx in pairs:
    label = f"compare {os.path.basename(base)} {os.path.basename(new)}"
    c = mlprof_json(MLPROF, "compare", base, new, "--step-annotation", rx)
    for side, path in (("base", base), ("new", new)):
        w = want[path]
        got = c[side]
        check(got["steps"] == len(w) and near(got["step_mean_ns"], statistics.fmean(d for _, d in w)),
              f"{label} {side}: {got['steps']} steps mean {got['step_mean_ns']} vs {len(w)} "
              f"{statistics.fmean(d for _, d in w)}")
    at = c.get("attribution", {})
    if not at or "base_path_steps" not in at:
        continue
    w = want[base]
    check(at["base_path_steps"] == min(len(w), PATH_CAP) and
          at["new_path_steps"] == min(len(want[new]), PATH_CAP),
          f"{label}: path windows {at['base_path_steps']}/{at['new_path_steps']} vs "
          f"{len(w)}/{len(want[new])} (at most {PATH_CAP})")
    if base == new and at["base_path_steps"] == len(w):
        # Each window is an iteration of the regex: critical-path --step k names the same slice,
        # and compare's mean path length is the mean over those windows.
        paths = []
        for k, (b, d) in enumerate(w):
            cp = mlprof_json(MLPROF, "critical-path", base, "--step", str(k), "--step-annotation", rx)
            # critical path's graph is in whole µs (HTA's), so its window is within 1 µs
            check(near(cp.get("window_begin_ns"), b, 1000) and
                  near(cp.get("window_end_ns"), b + d, 1000),
                  f"{label}: window {k} {cp.get('window_begin_ns')}..{cp.get('window_end_ns')} vs "
                  f"{b}..{b + d}")
            paths.append(cp.get("path_ns", 0))
        check(near(at["base_path_ns"], statistics.fmean(paths), 1),
              f"{label}: mean path {at['base_path_ns']} vs {statistics.fmean(paths)} over the windows")

# ranks: every rank's steps (a rank directory of the two generated traces, and one of a
# shared trace beside a generated one).
rank_dirs = [[gen[7][0], gen[11][0]]]
if len(cases) > 2:
    rank_dirs.append([gen[7][0], cases[2][0]])
for files in rank_dirs:
    d = tempfile.mkdtemp(dir=tmp)
    rxs = sorted({rx for p, rx, _ in cases if p in files})
    rx = "|".join(f"(?:{r})" for r in rxs)
    for k, f in enumerate(files):
        os.symlink(f, os.path.join(d, f"rank{k}" + (".json.gz" if f.endswith(".gz") else ".json")))
    r = mlprof_json(MLPROF, "ranks", d, "--step-annotation", rx)
    rows = {os.path.basename(x["source"]): x for x in r.get("ranks", [])}
    check(len(rows) == len(files), f"ranks {d}: {len(rows)} ranks")
    for k, f in enumerate(files):
        # every rank's iterations: the union regex names only that trace's own kind here
        w = iterations(f, rx, (G.GPU_PID,) if f.endswith(".json") else ())
        row = rows.get(f"rank{k}" + (".json.gz" if f.endswith(".gz") else ".json"), {})
        check(row.get("steps") == len(w) and near(row.get("step_mean_ns"), statistics.fmean(d for _, d in w)),
              f"ranks rank {k} ({os.path.basename(f)}): {row.get('steps')} steps mean "
              f"{row.get('step_mean_ns')} vs {len(w)} {statistics.fmean(d for _, d in w)}")
finish()
