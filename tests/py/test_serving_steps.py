"""The step model (issue 27 item 1): iterations from vLLM's and SGLang's annotations, a
user-named one, or the TensorBoard plugin's one-window rule; per-iteration serving fields,
steady state and per-phase distributions.

Expected values: (1) the planted truths of serving_steps_traces.py (host time, GPU busy, phase,
batch, captures, warm-ups) for generated multi-iteration traces in three annotation styles;
(2) this script's own parse of the annotations (regular expressions below, written from the
annotation formats, not from mlprof) on the generated and the shared serving traces; (3) per-phase
statistics computed here from the truths.
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

VLLM = re.compile(r"^execute_(\d+)_context_(\d+)\(sq(\d+)sk(\d+)sqsq(\d+)sqsk(\d+)\)"
                  r"_generation_(\d+)\(sq(\d+)sk(\d+)sqsq(\d+)sqsk(\d+)\)$")
# vLLM's default annotation (vllm/v1/worker/gpu_worker.py, Worker.annotate_profile): per side the
# requests, then their scheduled tokens; the B200 trace's build added "_<sum of squares>".
VLLM_OLD = re.compile(r"^execute_context_(\d+)\((\d+)(?:_\d+)*\)_generation_(\d+)\((\d+)(?:_\d+)*\)$")
SGLANG = re.compile(r"^step\[([A-Z_]+)((?: \w+=\d+)*)\]$")


def phase(nc, ng):
    return "mixed" if nc and ng else "prefill" if nc else "decode" if ng else "unknown"


def parse(name):
    """(phase, batch, context requests, generation requests, context tokens, generation tokens,
    context kv, generation kv); None where the annotation does not say."""
    m = VLLM.match(name)
    if m:
        v = [int(g) for g in m.groups()]
        nc, ng = v[1], v[6]
        return {"phase": phase(nc, ng), "batch_size": nc + ng, "num_tokens": v[0],
                "context_requests": nc, "generation_requests": ng, "context_tokens": v[2],
                "generation_tokens": v[7], "context_kv_tokens": v[3],
                "generation_kv_tokens": v[8]}
    m = VLLM_OLD.match(name)
    if m:
        nc, ct, ng, gt = (int(g) for g in m.groups())
        return {"phase": phase(nc, ng), "batch_size": nc + ng, "num_tokens": ct + gt,
                "context_requests": nc, "generation_requests": ng, "context_tokens": ct,
                "generation_tokens": gt, "context_kv_tokens": None, "generation_kv_tokens": None}
    m = SGLANG.match(name)
    if m:
        mode = m.group(1)
        kv = dict(p.split("=") for p in m.group(2).split())
        bs = int(kv["bs"]) if "bs" in kv else None
        toks = int(kv["toks"]) if "toks" in kv else None
        out = {"phase": {"EXTEND": "prefill", "PREFILL": "prefill", "DECODE": "decode",
                         "MIXED": "mixed"}.get(mode, "unknown"), "mode": mode,
               "batch_size": bs, "num_tokens": toks, "context_requests": None,
               "generation_requests": None, "context_tokens": None, "generation_tokens": None,
               "context_kv_tokens": None, "generation_kv_tokens": None}
        if out["phase"] == "prefill" and bs is not None:
            out.update(context_requests=bs, generation_requests=0, context_tokens=toks,
                       generation_tokens=0)
        if out["phase"] == "decode" and bs is not None:
            out.update(context_requests=0, generation_requests=bs, context_tokens=0,
                       generation_tokens=toks if toks is not None else bs)
        return out
    return None


def check_serving(label, step, want):
    got = step.get("serving")
    if not check(got is not None, f"{label}: serving fields parsed"):
        return
    for k, v in want.items():
        check(got.get(k) == v, f"{label}: {k} {got.get(k)} vs {v}")


def quantile(v, q):
    v = sorted(v)
    pos = q * (len(v) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(v) - 1)
    return v[lo] + (v[hi] - v[lo]) * (pos - lo)


tmp = tempfile.mkdtemp()
for style, source in (("vllm", "vllm"), ("vllm_old", "vllm"), ("sglang", "sglang")):
    path = os.path.join(tmp, f"serving_{style}.json")
    truths = serving_steps_traces.write(path, style)
    got = mlprof_json(MLPROF, "steps", path)
    check(got["source"] == source, f"{style}: source {got['source']}")
    # One number for "steps": summary's count (the report's Key numbers) is the model's.
    summary_steps = mlprof_json(MLPROF, "summary", path)["steps"]
    check(summary_steps == len(truths), f"{style}: summary steps {summary_steps} vs {len(truths)}")
    steps = got["steps"]
    if not check(len(steps) == len(truths), f"{style}: {len(steps)} iterations vs {len(truths)}"):
        continue
    for k, (st, t) in enumerate(zip(steps, truths)):
        label = f"{style} #{k}"
        check(st["name"] == t["name"] and st["number"] == k, f"{label}: name/number")
        check(st["dur_ns"] == t["host_ns"], f"{label}: host {st['dur_ns']} vs {t['host_ns']}")
        check(st["gpu_busy_ns"] == t["gpu_busy_ns"],
              f"{label}: GPU busy {st['gpu_busy_ns']} vs {t['gpu_busy_ns']}")
        check(st["gpu_dur_ns"] == t["gpu_window_ns"] and
              st["gpu_idle_ns"] == t["gpu_window_ns"] - t["gpu_busy_ns"],
              f"{label}: GPU window {st['gpu_dur_ns']} vs {t['gpu_window_ns']}")
        check(st["capture"] == t["capture"], f"{label}: capture {st['capture']}")
        check(st["warmup"] == t["warmup"], f"{label}: warm-up {st['warmup']} vs {t['warmup']}")
        check_serving(label, st, parse(t["name"]))
        if style != "sglang" or t["phase"] != "mixed":
            check(st["serving"]["phase"] == t["phase"] and st["serving"]["batch_size"] == t["batch"],
                  f"{label}: planted phase {t['phase']} batch {t['batch']}")
        if style != "sglang":  # the planted token sums (mixed: 2 per decoding request)
            sv = st["serving"]
            check(sv["context_tokens"] == t["context_tokens"] and
                  sv["generation_tokens"] == t["generation_tokens"] and
                  sv["num_tokens"] == t["context_tokens"] + t["generation_tokens"],
                  f"{label}: planted tokens {t['context_tokens']}+{t['generation_tokens']} vs "
                  f"{sv['context_tokens']}+{sv['generation_tokens']} ({sv['num_tokens']})")
    steady = [t for t in truths if not t["capture"] and not t["warmup"]]
    ss = got["steady_state"]
    check(ss["count"] == len(steady) and ss["warmup"] == 2 and ss["capture"] == 3,
          f"{style}: steady state {ss} vs {len(steady)} (2 warm-up, 3 captures)")
    phases = {p["phase"]: p for p in got["phases"]}
    check(sorted(phases) == sorted({t["phase"] for t in steady}),
          f"{style}: phases {sorted(phases)}")
    for ph, p in phases.items():
        rows = [t for t in steady if t["phase"] == ph]
        host = [t["host_ns"] for t in rows]
        busy = [t["gpu_busy_ns"] for t in rows]
        check(p["count"] == len(rows), f"{style} {ph}: count {p['count']} vs {len(rows)}")
        check(abs(p["host_mean_ns"] - statistics.fmean(host)) < 1, f"{style} {ph}: host mean")
        check(abs(p["host_p50_ns"] - quantile(host, 0.5)) < 1, f"{style} {ph}: host p50")
        check(abs(p["host_p90_ns"] - quantile(host, 0.9)) < 1, f"{style} {ph}: host p90")
        check(p["host_min_ns"] == min(host) and p["host_max_ns"] == max(host),
              f"{style} {ph}: host min/max")
        check(abs(p["gpu_busy_mean_ns"] - statistics.fmean(busy)) < 1,
              f"{style} {ph}: GPU busy mean {p['gpu_busy_mean_ns']} vs {statistics.fmean(busy)}")
        batch = [t["batch"] for t in rows]
        check(abs(p["batch_mean"] - statistics.fmean(batch)) < 1e-9 and
              p["batch_min"] == min(batch) and p["batch_max"] == max(batch),
              f"{style} {ph}: batch {p.get('batch_mean')} vs {statistics.fmean(batch)}")
        if style != "sglang":
            toks = sum(t["context_tokens"] + t["generation_tokens"] for t in rows)
            check(p["tokens"] == toks, f"{style} {ph}: tokens {p['tokens']} vs {toks}")
    # Text: the source, the steady-state line and the phase table.
    text = subprocess.run([MLPROF, "steps", path], capture_output=True, text=True, check=True).stdout
    check("Steady state: " + str(len(steady)) + " of " + str(len(truths)) in text,
          f"{style}: text says the steady state")

# A user-named annotation picks the same iterations; a bad regex is a one-line error, exit 2.
path = os.path.join(tmp, "serving_vllm.json")
truths = serving_steps_traces.write(path, "vllm")
got = mlprof_json(MLPROF, "steps", path, "--step-annotation", r"^execute_\d+_context")
check(got["source"] == "annotation" and got["count"] == len(truths),
      f"--step-annotation: {got['source']} {got['count']}")
bad = subprocess.run([MLPROF, "steps", path, "--step-annotation", "(", "--json"],
                     capture_output=True, text=True)
check(bad.returncode == 2 and bad.stdout == "" and len(bad.stderr.strip().splitlines()) == 1 and
      "--step-annotation" in bad.stderr, f"bad regex: rc {bad.returncode} {bad.stderr!r}")

# No markers: the TensorBoard plugin's one window, extended to the GPU work launched in it.
with open(path) as f:
    doc = json.load(f)
doc["traceEvents"] = [e for e in doc["traceEvents"] if e.get("cat") != "user_annotation"]
bare = os.path.join(tmp, "bare.json")
with open(bare, "w") as f:
    json.dump(doc, f)
x = [e for e in doc["traceEvents"] if e.get("ph") == "X"]
host = [e for e in x if e["pid"] == serving_steps_traces.PID]
gpu = [e for e in x if e["pid"] == serving_steps_traces.GPU_PID]
lo = min(round(e["ts"] * 1000) for e in host)
hi = max(round((e["ts"] + e["dur"]) * 1000) for e in host)
gpu_hi = max(hi, max(round((e["ts"] + e["dur"]) * 1000) for e in gpu))
busy = sum(round(e["dur"] * 1000) for e in gpu)
got = mlprof_json(MLPROF, "steps", bare)
span = got.get("span", {})
check(got["source"] == "trace_span" and got["count"] == 0, f"bare: source {got['source']}")
check(span.get("begin_ns") == lo and span.get("dur_ns") == hi - lo,
      f"bare: host span {span.get('begin_ns')}+{span.get('dur_ns')} vs {lo}+{hi - lo}")
check(span.get("gpu_dur_ns") == gpu_hi - lo and span.get("gpu_busy_ns") == busy,
      f"bare: GPU window {span.get('gpu_dur_ns')} vs {gpu_hi - lo}, busy {span.get('gpu_busy_ns')} "
      f"vs {busy}")

# The shared serving traces: one iteration each, fields as the annotation says.
for rel, source in (("traces/serving/vllm_decode_full/graph_execution.json.gz", "vllm"),
                    ("traces/serving/sglang_decode/sglang_Qwen3-8B_decode.json.gz", "vllm"),
                    ("traces/compile/kineto/vllm_prefilldecode_piecewise/graph_execution.json.gz",
                     "vllm"),
                    ("traces/modules/mi300_sglang_Qwen3-8B_prefilldecode.json.gz", "vllm"),
                    ("traces/modules/b200_gptoss_vllm_eager_trace.json.gz", "vllm")):
    p = shared_data.shared_path(rel)
    if not p:
        print(f"SKIP {rel}: shared data absent")
        continue
    with gzip.open(p, "rt") as f:
        ev = [e for e in json.load(f)["traceEvents"]
              if e.get("ph") == "X" and e.get("cat") == "user_annotation" and
              (VLLM.match(e["name"]) or VLLM_OLD.match(e["name"]))]
    got = mlprof_json(MLPROF, "steps", p)
    name = os.path.basename(p)
    check(got["source"] == source and got["count"] == len(ev) == 1,
          f"{name}: source {got['source']} count {got['count']} vs {len(ev)}")
    summary_steps = mlprof_json(MLPROF, "summary", p)["steps"]
    check(summary_steps == len(ev), f"{name}: summary steps {summary_steps} vs {len(ev)}")
    if got["count"] == 1 and ev:
        st = got["steps"][0]
        check(st["dur_ns"] == round(ev[0]["dur"] * 1000) or abs(st["dur_ns"] - ev[0]["dur"] * 1000) <= 1,
              f"{name}: host {st['dur_ns']} vs {ev[0]['dur'] * 1000}")
        check_serving(name, st, parse(ev[0]["name"]))
    # SGLang's own annotation, named by the user.
    if "sglang" in rel:
        got = mlprof_json(MLPROF, "steps", p, "--step-annotation", r"^step\[")
        check(got["source"] == "annotation" and got["count"] == 1, f"{name}: step[ by regex")
        if got["count"] == 1:
            check_serving(name + " step[", got["steps"][0], parse(got["steps"][0]["name"]))
finish()
