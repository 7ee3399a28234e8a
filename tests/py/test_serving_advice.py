"""Issue 27 item 3 / issue 25 item 1: the replay prices findings over the step model's
iterations, and the serving findings state numbers an independent pass over the JSON gives.

1. Shared serving and graph traces (skipped without ../shared): the replay's windows
   (`combined.window`) are the step model's source, found here from the annotations
   (ProfilerStep#N > vLLM execute_* > SGLang step[...] > none: one window); the findings' savings
   add up to at most the basis; the share of GPU time inside graph replays (GPU events whose
   correlation is a *GraphLaunch call's) is the `graph_gpu_time_pct` evidence wherever a finding
   gives it, and no serving_graph_coverage finding fires at >= 90%.
2. Traces without iterations (capture passes, kineto-gpu/trace_file_list): the basis is the one
   window computed here: the thread that launches the most GPU work, from its first slice to its
   last, extended to the end of the GPU work launched (from any thread) while it ran.
3. The generated multi-iteration serving trace (serving_steps_traces.py): a prefill/decode
   imbalance finding exactly when the prefills' share of the iterations' time and their length
   against a decode (computed here from the trace: each iteration from its host start to the end
   of its host span and of the GPU work it launched) pass the rule's thresholds, and its evidence
   gives those numbers.
Usage: test_serving_advice.py MLPROF
"""
import gzip
import json
import os
import re
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
import serving_steps_traces as gen  # noqa: E402
import shared_data  # noqa: E402
from checks import check, finish, mlprof_json  # noqa: E402

MLPROF = sys.argv[1]
GPU_CATS = {"kernel", "gpu_memcpy", "gpu_memset", "Kernel", "Memcpy", "Memset"}
SKIP_HOST = {"cuda_sync", "gpu_user_annotation", "mtia_ccp_events", "Trace"}
VLLM = re.compile(r"^execute_(\d+_context_\d+\(sq\d+sk\d+sqsq\d+sqsk\d+\)_generation_\d+\(sq\d+sk\d+sqsq\d+sqsk\d+\)"
                  r"|context_\d+\([\d_]+\)_generation_\d+\([\d_]+\))$")


def load(path):
    op = gzip.open if path.endswith(".gz") else open
    with op(path, "rt") as f:
        d = json.load(f)
    return [e for e in (d["traceEvents"] if isinstance(d, dict) else d) if e.get("ph") == "X"]


def gpu_pids(ev):
    return {e["pid"] for e in ev if e.get("cat") in GPU_CATS}


def expected_window(ev):
    gp = gpu_pids(ev)
    host = [e for e in ev if e.get("cat") not in GPU_CATS and e["pid"] not in gp]
    names = [e["name"] for e in host]
    if any(n.startswith("ProfilerStep#") for n in names):
        return "profiler_step"
    if any(VLLM.match(n) for n in names):
        return "vllm"
    if any(re.match(r"^step\[[A-Z_]+( \w+=\d+)*\]$", n) for n in names):
        return "sglang"
    return "trace_span"


def graph_share(ev):
    launches = {e["args"]["correlation"] for e in ev if e.get("cat") in ("cuda_runtime", "cuda_driver")
                and "GraphLaunch" in e["name"] and "correlation" in e.get("args", {})}
    gpu = [e for e in ev if e.get("cat") in GPU_CATS]
    total = sum(e["dur"] for e in gpu)
    graph = sum(e["dur"] for e in gpu if e.get("args", {}).get("correlation") in launches)
    return 100.0 * graph / total if total else 0.0


def one_window_us(ev):
    """The replay's window of a trace without iterations (see the docstring), in us."""
    gpu = [e for e in ev if e.get("cat") in GPU_CATS]
    gp = {e["pid"] for e in gpu}
    host = [e for e in ev if e.get("cat") not in GPU_CATS and e["pid"] not in gp
            and e.get("cat") not in SKIP_HOST and e.get("dur", 0) >= 0
            and not str(e["pid"]).startswith("Spans")]
    by_corr = {}
    for e in gpu:
        by_corr.setdefault(e.get("args", {}).get("correlation"), []).append(e)
    launches = {}
    calls = {}
    for e in host:
        c = e.get("args", {}).get("correlation")
        if e.get("cat") in ("cuda_runtime", "cuda_driver") and c in by_corr:
            k = (e["pid"], e["tid"])
            launches[k] = launches.get(k, 0) + len(by_corr[c])
            calls[c] = e
    threads = {}
    for e in host:
        threads.setdefault((e["pid"], e["tid"]), []).append(e)
    main = max(threads, key=lambda k: (launches.get(k, 0), len(threads[k])))
    lo = min(e["ts"] for e in threads[main])
    hi = max(e["ts"] + e["dur"] for e in threads[main])
    end = hi
    for c, evs in by_corr.items():
        key = calls[c]["ts"] if c in calls else None
        for g in evs:
            k = key if key is not None else g["ts"]
            if lo <= k <= hi:
                end = max(end, g["ts"] + g["dur"])
    return end - lo


def savings_add_up(doc, name):
    basis = doc["basis_ns"]
    total = sum(f["est_savings_ns"] for f in doc["findings"])
    check(total <= basis, f"{name}: findings' savings {total} <= basis {basis}")
    check(doc["combined"]["saving_ns"] <= basis, f"{name}: combined <= basis")


root = shared_data.shared_path("traces")
if root:
    for rel in ["serving/vllm_decode_full/graph_execution.json.gz",
                "serving/sglang_decode/sglang_Qwen3-8B_decode.json.gz",
                "cuda-graphs/xdit_flux/profile_trace_rank_0.json.gz",
                "compile/kineto/vllm_prefilldecode_piecewise/graph_execution.json.gz",
                "modules/b200_gptoss_vllm_eager_trace.json.gz",
                "modules/mi300_sglang_Qwen3-8B_prefilldecode.json.gz",
                "serving/vllm_decode_full/capture_traces/graph_capture_rank_0.1773709742341309550.pt.trace.json.gz",
                "cuda-graphs/xdit_flux/capture_traces/capture_trace_rank_0.json.gz",
                "kineto-gpu/trace_file_list/inference_rank_1.json.gz"]:
        path = os.path.join(root, rel)
        if not os.path.exists(path):
            print("skip (absent)", rel)
            continue
        ev = load(path)
        doc = mlprof_json(MLPROF, "bottlenecks", path)
        win = expected_window(ev)
        comb = doc["combined"]
        if comb["replayed"]:
            check(comb["window"] == win, f"{rel}: replay window {comb['window']} = {win}")
        savings_add_up(doc, rel)
        share = graph_share(ev)
        for f in doc["findings"]:
            if "graph_gpu_time_pct" in f["evidence"]:
                got = f["evidence"]["graph_gpu_time_pct"]
                check(abs(got - share) <= 0.05, f"{rel}: {f['kind']} graph share {got:.2f}% = {share:.2f}%")
        cov = [f for f in doc["findings"] if f["kind"] == "serving_graph_coverage"]
        if share >= 90:
            check(not cov, f"{rel}: no graph-coverage finding at {share:.1f}% in graphs")
        for f in cov:
            check(f["evidence"]["graph_gpu_time_pct"] < 90, f"{rel}: coverage finding under 90%")
            check(f["priced_by"] == "replay", f"{rel}: coverage priced by the replay")
        if win == "trace_span" and comb["replayed"]:
            want = one_window_us(ev) * 1000
            check(doc["basis"] == "window", f"{rel}: basis 'window', got {doc['basis']}")
            check(abs(doc["basis_ns"] - want) <= max(0.005 * want, 2000),
                  f"{rel}: window {doc['basis_ns']} ns = {want:.0f} ns computed here")

# 3. The generated multi-iteration serving trace: prefill/decode imbalance.
with tempfile.TemporaryDirectory() as tmp:
    path = os.path.join(tmp, "serving.json")
    gen.write(path, "vllm")
    ev = load(path)
    host = sorted((e for e in ev if VLLM.match(e["name"])), key=lambda e: e["ts"])
    gpu = [e for e in ev if e.get("cat") in GPU_CATS]
    rt = {e["args"]["correlation"]: e["ts"] for e in ev
          if e.get("cat") == "cuda_runtime" and "correlation" in e.get("args", {})}
    steps = mlprof_json(MLPROF, "steps", path)["steps"]
    check(len(steps) == len(host), f"serving: {len(steps)} iterations = {len(host)} annotations")
    pre, dec, allt, npre, ndec = 0.0, 0.0, 0.0, 0, 0
    for h, st in zip(host, steps):
        if st.get("warmup") or st.get("capture"):
            continue
        end = h["ts"] + h["dur"]
        for g in gpu:
            t = rt.get(g.get("args", {}).get("correlation"))
            if t is not None and h["ts"] <= t <= h["ts"] + h["dur"]:
                end = max(end, g["ts"] + g["dur"])
        d = end - h["ts"]
        allt += d
        m = re.match(r"execute_\d+_context_(\d+).*_generation_(\d+)", h["name"])
        nc, ng = int(m.group(1)), int(m.group(2))
        if nc and not ng:
            pre, npre = pre + d, npre + 1
        elif ng and not nc:
            dec, ndec = dec + d, ndec + 1
    share = 100 * pre / allt
    ratio = (pre / npre) / (dec / ndec)
    doc = mlprof_json(MLPROF, "bottlenecks", path)
    f = next((f for f in doc["findings"] if f["kind"] == "serving_prefill_decode_imbalance"), None)
    print(f"serving: prefill share {share:.1f}%, prefill/decode {ratio:.2f}x")
    fires = share >= 20 and ratio >= 4
    check((f is not None) == fires, f"serving: imbalance finding present={f is not None}, expected {fires}")
    if f:
        check(f["evidence"]["prefill_iterations"] == npre, f"serving: {npre} prefill iterations")
        check(f["evidence"]["decode_iterations"] == ndec, f"serving: {ndec} decode iterations")
        check(abs(f["evidence"]["prefill_share_pct"] - share) <= 0.5,
              f"serving: prefill share {f['evidence']['prefill_share_pct']:.2f}% = {share:.2f}%")
        check(abs(f["evidence"]["prefill_over_decode"] - ratio) <= 0.02 * ratio,
              f"serving: prefill/decode {f['evidence']['prefill_over_decode']:.3f} = {ratio:.3f}")
        check(f["priced_by"] == "" and f["est_savings_ns"] == 0,
              "serving: a scheduling change the replay cannot price claims no saving")
        check("chunked" in f["recommendation"], "serving: vLLM advice names chunked prefill")
    check(doc["combined"]["window"] == "vllm", "serving: replayed over the vLLM iterations")
    savings_add_up(doc, "serving")
finish()
