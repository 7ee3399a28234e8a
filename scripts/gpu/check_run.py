"""Compares what `mlprof run --gpu` captured with what the program measured itself.

  check_run.py cuda EXPECT.json CAPTURE.json            (examples/cuda/vector_add.cu)
  check_run.py torch RESULT.json CAPTURE.json [PROF.json.gz PROF_RESULT.json]

CAPTURE.json is `mlprof export CAPTURE.mlprof -o CAPTURE.json`. Prints one line per check and a
last line `RESULT: PASS|FAIL`; writes nothing. Tolerances say what a measurement can differ by:
CUDA events bracket the kernels (the span between them includes launch gaps the kernels don't).
"""
import collections
import gzip
import json
import sys

ok = True


def check(cond, text):
    global ok
    ok &= bool(cond)
    print(("ok   " if cond else "FAIL ") + text)


def load(path):
    op = gzip.open if path.endswith(".gz") else open
    with op(path, "rt") as f:
        doc = json.load(f)
    return doc["traceEvents"] if isinstance(doc, dict) else doc


def short(name):
    return name.split("(")[0].split("<")[0].split()[-1] if name else name


def gpu_events(events):
    kern, other = [], []
    for e in events:
        if e.get("ph") != "X":
            continue
        cat = e.get("cat", "")
        if cat == "kernel":
            kern.append(e)
        elif cat in ("gpu_memcpy", "gpu_memset"):
            other.append(e)
    kern.sort(key=lambda e: e["ts"])
    return kern, other


def counters(events):
    out = collections.defaultdict(list)
    for e in events:
        if e.get("ph") == "C":
            for k, v in e.get("args", {}).items():
                out[e["name"] + ("" if k in e["name"] else " " + k)].append(v)
    return out


def report_counters(events):
    c = counters(events)
    for k, v in sorted(c.items()):
        print(f"     counter {k}: {len(v)} samples, min {min(v)}, max {max(v)}")
    nvml = {k: v for k, v in c.items() if k.lower().startswith(("gpu", "nvml")) or "util" in k}
    check(nvml, f"NVML counters present ({len(nvml)} series)")
    for k, v in nvml.items():
        if "util" in k.lower():
            check(0 <= min(v) and max(v) <= 100, f"{k} within 0..100%")


def cmd_cuda(expect_path, capture_path):
    expect = json.loads(open(expect_path).read().strip().splitlines()[-1])
    events = load(capture_path)
    kern, other = gpu_events(events)
    by = collections.Counter(short(e["name"]) for e in kern)
    for k, n in expect["kernels"].items():
        check(by.get(k, 0) == n, f"kernel {k}: {by.get(k, 0)} captured, program launched {n}")
    memcpy = collections.Counter(e["name"] for e in other if e.get("cat") == "gpu_memcpy")
    htod = sum(n for k, n in memcpy.items() if "HtoD" in k)
    dtoh = sum(n for k, n in memcpy.items() if "DtoH" in k)
    memset = sum(1 for e in other if e.get("cat") == "gpu_memset")
    check(htod == expect["memcpy_htod"], f"memcpy HtoD {htod}, program {expect['memcpy_htod']}")
    check(dtoh == expect["memcpy_dtoh"], f"memcpy DtoH {dtoh}, program {expect['memcpy_dtoh']}")
    check(memset == expect["memsets"], f"memset {memset}, program {expect['memsets']}")
    loop = [e for e in kern if short(e["name"]) in expect["kernels"]]
    if loop:
        span_ms = (max(e["ts"] + e["dur"] for e in loop) - min(e["ts"] for e in loop)) / 1e3
        busy_ms = sum(e["dur"] for e in loop) / 1e3
        ev = expect.get("loop_ms")
        if ev:
            # The events bracket the loop: the kernels' span is inside it, and close to it.
            check(busy_ms <= span_ms * 1.0001 and span_ms <= ev * 1.02 + 0.05 and span_ms >= ev * 0.85,
                  f"kernel loop: span {span_ms:.3f} ms, busy {busy_ms:.3f} ms; CUDA events {ev:.3f} ms")
        for k in expect["kernels"]:
            d = [e["dur"] for e in loop if short(e["name"]) == k]
            print(f"     kernel {k}: mean {sum(d) / len(d):.2f} us, min {min(d):.2f}, max {max(d):.2f}")
    report_counters(events)


def bursts(kern, gap_us):
    """Kernels (sorted by start) cut where the GPU was idle for more than gap_us."""
    out, end = [], None
    for e in kern:
        if out and e["ts"] - end <= gap_us:
            out[-1].append(e)
        else:
            out.append([e])
        end = e["ts"] + e["dur"] if end is None else max(end, e["ts"] + e["dur"])
    return out


def cmd_torch(result_path, capture_path, prof_path=None, prof_result=None):
    res = json.loads(open(result_path).read().strip().splitlines()[-1])
    events = load(capture_path)
    kern, _ = gpu_events(events)
    steps = res["steps"]
    bs = bursts(kern, 30_000)
    print(f"     {len(kern)} kernels in {len(bs)} bursts separated by > 30 ms idle; {steps} steps")
    # The last `steps` bursts are the steps (model init and data come before the first).
    check(len(bs) >= steps, f"at least one burst per step ({len(bs)} >= {steps})")
    per_step = bs[-steps:]
    counts = [len(b) for b in per_step]
    print(f"     kernels per step (capture): {counts}")
    check(len(set(counts[1:])) == 1, "same kernel count in every step after the first")
    for i, b in enumerate(per_step):
        span = (max(e["ts"] + e["dur"] for e in b) - b[0]["ts"]) / 1e3
        busy = sum(e["dur"] for e in b) / 1e3
        ev = res["step_gpu_ms"][i]
        good = span <= ev * 1.02 + 0.05 and (i == 0 or span >= ev * 0.8)
        check(good, f"step {i}: kernel span {span:.3f} ms (busy {busy:.3f}); CUDA events {ev:.3f} ms")
    if prof_path:
        pev = load(prof_path)
        # The host's ProfilerStep ranges (Kineto repeats them as gpu_user_annotation on the GPU lanes).
        marks = sorted((e for e in pev if e.get("ph") == "X" and e.get("name", "").startswith("ProfilerStep#")
                        and e.get("cat") != "gpu_user_annotation"),
                       key=lambda e: e["ts"])
        pk = [e for e in pev if e.get("ph") == "X" and e.get("cat") == "kernel"]
        # Kernels belong to the step whose launch (correlation) is inside the ProfilerStep range.
        runtime = {e["args"].get("correlation"): e["ts"] for e in pev
                   if e.get("ph") == "X" and e.get("cat") in ("cuda_runtime", "cuda_driver")}
        pcount = []
        for m in marks:
            n = sum(1 for k in pk if m["ts"] <= runtime.get(k["args"].get("correlation"), -1) <= m["ts"] + m["dur"])
            pcount.append(n)
        print(f"     kernels per step (torch.profiler, {len(marks)} ProfilerStep): {pcount}")
        check(pcount and all(c == counts[-1] for c in pcount),
              f"torch.profiler's kernels per step {pcount} equal the capture's {counts[-1]}")
        cap_names = collections.Counter(short(e["name"]) for e in per_step[-1])
        last = marks[-1] if marks else None
        if last:
            prof_names = collections.Counter(
                short(k["name"]) for k in pk
                if last["ts"] <= runtime.get(k["args"].get("correlation"), -1) <= last["ts"] + last["dur"])
            diff = {k: (cap_names.get(k, 0), prof_names.get(k, 0)) for k in set(cap_names) | set(prof_names)
                    if cap_names.get(k, 0) != prof_names.get(k, 0)}
            check(not diff, f"per-kernel-name counts of one step equal ({len(cap_names)} names); differ: {dict(list(diff.items())[:5])}")
    report_counters(events)


if __name__ == "__main__":
    what, args = sys.argv[1], sys.argv[2:]
    {"cuda": cmd_cuda, "torch": cmd_torch}[what](*args)
    print("RESULT:", "PASS" if ok else "FAIL")
    sys.exit(0 if ok else 1)
