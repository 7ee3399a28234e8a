"""Expected values for tests/web/input_screens_test.mjs, computed here from the files themselves
(independent of mlprof):
  compile LOG      -> the failures (compile id, exception type) and the graph-break reasons of a
                      TORCH_TRACE log, from its compilation_metrics envelopes
  snapshot PICKLE  -> the peak of memory_viz's Active Memory Timeline per device (pickle module),
                      and each OOM entry: bytes requested, free on the device, in use then
  ranks-dir DIR    -> writes two jobs' rank traces and an unrelated trace under DIR, and prints
                      their grouping by job read back from the files' distributedInfo
Prints one JSON object."""
import gzip
import json
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "py"))
from snapshot_replay import active_curve, starting_bytes  # noqa: E402
from snapshot_replay import load as load_snapshot  # noqa: E402

GLOG = re.compile(r"^[VIWEC]\d{4} \d{2}:\d{2}:\d{2}\.\d{6} +\d+ [^\]]*\] (\{.*)$")


def opener(path):
    return gzip.open if path.endswith(".gz") else open


def compile_id(env):
    fid, fcid, attempt = env.get("frame_id"), env.get("frame_compile_id"), env.get("attempt") or 0
    s = f"[{'-' if fid is None else fid}/{'-' if fcid is None else fcid}"
    s += f"_{attempt}]" if attempt else "]"
    if env.get("compiled_autograd_id") is not None:
        s = f"!{env['compiled_autograd_id']}/" + s[1:]
        s = "[" + s
    return s


def compile_log(path):
    failures, breaks = [], []
    with opener(path)(path, "rt", encoding="utf-8", errors="replace") as f:
        for line in f:
            m = GLOG.match(line.rstrip("\r\n"))
            if not m:
                continue
            try:
                env = json.loads(m.group(1))
            except ValueError:
                continue
            cm = env.get("compilation_metrics")
            if not isinstance(cm, dict):
                continue
            if cm.get("fail_type"):
                failures.append({"id": compile_id(env), "type": cm["fail_type"]})
            for r in cm.get("restart_reasons") or []:
                if r not in breaks:
                    breaks.append(r)
    return {"failures": failures, "graph_breaks": breaks}


def snapshot(path):
    snap = load_snapshot(path)
    out = []
    for dev in range(len(snap.get("device_traces") or [])):
        peak = starting_bytes(snap, dev)
        ooms = []
        for _, e, cur in active_curve(snap, dev):
            if e["action"] == "oom":
                # What was in use when the allocator gave up, and what it was asked for.
                top = (e.get("frames") or [{}])[0]
                ooms.append({"requested_bytes": e["size"], "device_free_bytes": e.get("device_free"),
                             "active_bytes": cur, "function": top.get("name")})
            peak = max(peak, cur)
        out.append({"device": dev, "peak_active_bytes": peak, "ooms": ooms})
    return {"devices": out}


def kineto(path, rank, world, t0_us, with_dist=True):
    ev = [{"ph": "X", "cat": "cpu_op", "name": f"aten::mm", "pid": 1, "tid": 1, "ts": t0_us + 10 * i, "dur": 5}
          for i in range(4)]
    ev.insert(0, {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 1, "tid": 1, "ts": t0_us, "dur": 40})
    d = {"schemaVersion": 1, "traceEvents": ev}
    if with_dist:
        d["distributedInfo"] = {"backend": "nccl", "rank": rank, "world_size": world}
    with open(path, "w") as f:
        json.dump(d, f)


def ranks_dir(root):
    """Job A (world 2) starts now, job B (world 2) an hour later in a subfolder, and a trace
    without distributedInfo; then the grouping read back from the files."""
    os.makedirs(os.path.join(root, "job_b"), exist_ok=True)
    t = 1_760_000_000_000_000  # µs
    files = {
        "job_a_rank0.json": (0, 2, t), "job_a_rank1.json": (1, 2, t + 2_000_000),
        "job_b/rank0.json": (0, 2, t + 3_600_000_000), "job_b/rank1.json": (1, 2, t + 3_601_000_000),
    }
    for name, (r, w, ts) in files.items():
        kineto(os.path.join(root, name), r, w, ts)
    kineto(os.path.join(root, "lone_profile.json"), 0, 0, t + 5_000_000, with_dist=False)
    # Read back: distributedInfo and the first event of each file.
    info = {}
    for dirpath, _, names in os.walk(root):
        for n in names:
            p = os.path.join(dirpath, n)
            d = json.load(open(p))
            di = d.get("distributedInfo") or {}
            info[os.path.relpath(p, root)] = (di.get("rank"), di.get("world_size"), min(e["ts"] for e in d["traceEvents"]))
    jobs, unrelated = [], []
    for name, (r, w, ts) in sorted(info.items(), key=lambda kv: kv[1][2]):
        if not w or r is None:
            unrelated.append(name)
            continue
        home = next((j for j in jobs if j["world_size"] == w and ts - j["begin_us"] <= 600e6 and r not in j["ranks"]), None)
        if home is None:
            home = {"world_size": w, "begin_us": ts, "ranks": {}}
            jobs.append(home)
        home["ranks"][r] = name
    groups = [[home["ranks"][r] for r in sorted(home["ranks"])] for home in jobs]
    return {"groups": sorted(groups), "unrelated": sorted(unrelated)}


if __name__ == "__main__":
    what, arg = sys.argv[1], sys.argv[2]
    fn = {"compile": compile_log, "snapshot": snapshot, "ranks-dir": ranks_dir}[what]
    print(json.dumps(fn(arg)))
