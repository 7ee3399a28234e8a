"""`mlprof compile --json` against ../shared/traces/compile: the facts in tlparse/EXPECTED.json
and kineto/EXPECTED.json (computed when the data was collected; tlparse's own test facts are
cited in the README there), an independent parse here of the fx_graph_cache_* artifacts, a
generated log joining a compile id to the Kineto FX graph key, and hostile logs (CRLF, blank
lines, no final newline, corrupt JSON are tolerated; a non-log is exit 2 with one line).
Skips (exit 77) when the shared data is absent (MLPROF_SHARED_DIR, default ../shared)."""
import gzip
import json
import os
import re
import subprocess
import sys
import tempfile

MLPROF = sys.argv[1]
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from shared_data import require, shared_path  # noqa: E402

DIR = os.path.dirname(os.path.dirname(require("traces/compile/tlparse/EXPECTED.json")))

failures = checked = 0


def check(cond, what):
    global failures, checked
    checked += 1
    if not cond:
        failures += 1
        print("FAIL", what)


def run(*args):
    p = subprocess.run([MLPROF, *args], capture_output=True)
    return p.returncode, p.stdout, p.stderr.decode(errors="replace")


def run_json(*args):
    rc, out, err = run(*args, "--json")
    if rc != 0:
        check(False, f"{args}: exit {rc}: {err.strip()}")
        return None
    return json.loads(out)


def read_text(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        return f.read().decode("utf-8", errors="replace")


def artifact_cache_events(text):
    """(kind, key) of fx_graph_cache_* artifacts: envelope line, TAB payload lines."""
    out, lines, i = [], [l.rstrip("\r") for l in text.split("\n")], 0
    while i < len(lines):
        l = lines[i]
        i += 1
        if '"artifact": {"name": "fx_graph_cache_' not in l:
            continue
        kind = l.split('"artifact": {"name": "')[1].split('"')[0]
        payload = []
        while i < len(lines) and (lines[i].startswith("\t") or not lines[i].strip()):
            if lines[i].startswith("\t"):
                payload.append(lines[i][1:])
            i += 1
        try:
            key = json.loads("\n".join(payload)).get("key", "")
        except ValueError:
            key = ""
        out.append((kind, key))
    return out


tl = json.load(open(os.path.join(DIR, "tlparse", "EXPECTED.json")))["files"]
for name, f in tl.items():
    path = os.path.join(DIR, "tlparse", name)
    got = run_json("compile", path)
    if got is None:
        continue
    s = got["ranks"][0]
    check(s["md5_mismatches"] == f["payload_md5_mismatches"], f"{name}: md5 mismatches {s['md5_mismatches']}")
    check(s["crlf"] == f["crlf_line_endings"], f"{name}: crlf")
    check(s["blank_lines"] == f["blank_lines_skipped"], f"{name}: blank lines {s['blank_lines']}")
    check(s["unrecognized_lines"] == f["unrecognized_lines"], f"{name}: unrecognized")
    check(s["id_sequence"] == " ".join(f["compile_ids"]), f"{name}: ids {s['id_sequence']!r}")
    check(s["restarts"] == len(f["restarts"]), f"{name}: restarts {s['restarts']}")
    check(s["failures"] == len(f["failures"]), f"{name}: failures {s['failures']}")
    recompiled = {r[0] for r in f["recompile_reasons"]}
    check(s["recompiles"] >= len(recompiled), f"{name}: recompiles {s['recompiles']} < {len(recompiled)}")
    total = 0.0
    for cid, m in f["compilation_metrics"]:
        t = m.get("entire_frame_compile_time_s")
        if t is None and m.get("dynamo_cumulative_compile_time_us") is not None:
            t = m["dynamo_cumulative_compile_time_us"] / 1e6
        total += t or 0.0
    check(abs(s["compile_s"] - total) < 1e-6, f"{name}: compile time {s['compile_s']} vs {total}")
    rows = {c["id"]: c for c in got["compiles"]}
    for key, us in f["compile_phase_us"].items():
        phase, cid = key.rsplit("@", 1)
        phases = got["global_phases_us"] if cid == "None" else rows.get(f"[{cid}]", {}).get("phases_us", {})
        check(abs(phases.get(phase, -1) - us) < 1e-3, f"{name}: phase {key} {phases.get(phase)} vs {us}")
    for cid, reasons in f["recompile_reasons"]:
        check(rows.get(cid, {}).get("recompile_reason") == reasons[0], f"{name}: recompile reason of {cid}")
    for cid, reason in f["restarts"]:
        check(any(reason == g["reason"] and any(i.startswith(cid) for i in g["ids"]) for g in got["graph_breaks"]),
              f"{name}: graph break {cid} {reason}")
    if f["failures"]:
        check(len(got["failures"]) == len(f["failures"]), f"{name}: failure rows")
    # FX graph cache outcomes: the artifacts when present, else the chromium instants.
    arts = artifact_cache_events(read_text(path))
    hm = ("fx_graph_cache_hit", "fx_graph_cache_miss")
    want = [k for k, _ in arts if k in hm] if arts else [k for k, _ in f["fx_graph_cache_events"] if k in hm]
    seq = [k for k in ("fx_graph_cache_" + x for x in s["cache_sequence"].split()) if k in hm]
    check(seq == want, f"{name}: cache sequence {seq} vs {want}")
    if name == "simple.log.gz":
        check(rows["[0/0]"]["kernels"] == len(f["inductor_kernels"]), f"{name}: kernels")

# Autotuning: benchmarking phases (B/E chromium events named *benchmark* / *autotun*), summed
# here from the payloads.
path = os.path.join(DIR, "tlparse", "autotune_with_compile_id.log.gz")
lines = [l.rstrip("\r") for l in read_text(path).split("\n")]
events, cur = [], None
for l in lines:
    if l.startswith("\t"):
        if cur is not None:
            cur.append(l[1:])
        continue
    if not l.strip():
        continue
    if cur:
        events.append("\n".join(cur))
    cur = [] if '"chromium_event"' in l else None
if cur:
    events.append("\n".join(cur))
open_b, total, count = {}, 0.0, 0
for text in events:
    e = json.loads(text)
    if "benchmark" not in e["name"] and "autotun" not in e["name"]:
        continue
    if e["ph"] == "B":
        open_b.setdefault(e["name"], []).append(e["ts"])
        count += 1
    elif e["ph"] == "E" and open_b.get(e["name"]):
        total += e["ts"] - open_b[e["name"]].pop()
got = run_json("compile", path)
if got:
    s = got["ranks"][0]
    check(count > 0 and s["autotune_events"] == count and abs(s["autotune_us"] - total) < 1e-3,
          f"autotune: {s['autotune_events']} events {s['autotune_us']} us vs {count} {total}")

# Ranks: tlparse's landing page facts (README): diverging compile ids and cache patterns.
got = run_json("compile", os.path.join(DIR, "tlparse", "multi_rank_logs"))
if got:
    check([r["rank"] for r in got["ranks"]] == [0, 1, 2, 3], "multi_rank_logs: ranks")
    div = {d["what"]: d["groups"] for d in got["divergences"]}
    check("compile ids" in div and sorted(g["ranks"] for g in div["compile ids"]) == [[0, 2], [1], [3]],
          f"multi_rank_logs: compile id groups {div.get('compile ids')}")
    check("FX graph cache hit/miss" in div, "multi_rank_logs: cache divergence")
# multi_rank_runtime: ranks 5 and 6 are copies whose envelopes say "rank": 1; the rank is the
# file name's (tlparse groups them as "Ranks: 5, 6"). Compile-id sequences parsed here.
mrr = os.path.join(DIR, "tlparse", "multi_rank_runtime")
want_ids = {}
for fn in sorted(os.listdir(mrr)):
    m = re.search(r"rank_(\d+)", fn)
    ids = []
    for l in read_text(os.path.join(mrr, fn)).split("\n"):
        j = l.find("] {")
        if l.startswith("\t") or j < 0 or '"frame_id"' not in l:
            continue
        e = json.loads(l[j + 2:])
        if e.get("frame_id") is None:
            continue
        cid = f"[{e['frame_id']}/{e['frame_compile_id']}" + (f"_{e['attempt']}" if e.get("attempt") else "") + "]"
        if cid not in ids:
            ids.append(cid)
    want_ids[int(m.group(1))] = " ".join(ids)
want_groups = {}
for r, seq in sorted(want_ids.items()):
    want_groups.setdefault(seq, []).append(r)
got = run_json("compile", mrr)
if got:
    check([r["rank"] for r in got["ranks"]] == sorted(want_ids), f"multi_rank_runtime: ranks {[r['rank'] for r in got['ranks']]}")
    div = {d["what"]: d["groups"] for d in got["divergences"]}
    check(sorted(g["ranks"] for g in div.get("compile ids", [])) == sorted(want_groups.values()),
          f"multi_rank_runtime: compile id groups {div.get('compile ids')} vs {want_groups}")
# Text: each log named by its whole file name (TORCH_TRACE's "dedicated_log_torch_trace_" prefix
# dropped), a single rank as "rank N", an empty sequence as "(none)", the compile-id table and the
# failure line naming the rank they are of.
mrl = os.path.join(DIR, "tlparse", "multi_rank_logs")
rc, out, err = run("compile", mrl)
text = out.decode()
table = text.split("\n\n")[0].splitlines()[2:]
for fn in sorted(os.listdir(mrl)):
    short = fn[len("dedicated_log_torch_trace_"):] if fn.startswith("dedicated_log_torch_trace_") else fn
    rank = re.search(r"rank_(\d+)", fn).group(1)
    check(any(l.split()[:2] == [short, rank] for l in table), f"multi_rank_logs text: row '{short} {rank}' in {table}")
check("\n  rank 1: [0/0] [0/1]" in text and "\n  ranks 0, 2: (none)\n" in text,
      "multi_rank_logs text: 'rank 1:' and '(none)'")
check("failed [0/0] (rank 0) in " in text and "failed [0/0] (rank 2) in " in text,
      "multi_rank_logs text: the failures of ranks 0 and 2, each naming its rank")
# A log with no compile id (torch.export) says why its row is zeros; md5 mismatches are explained
# (counts from EXPECTED.json).
for name in ("export_guard_added.log", "simple_corrupted_json.log.gz", "simple.log.gz"):
    f = tl[name]
    rc, out, err = run("compile", os.path.join(DIR, "tlparse", name))
    text = out.decode()
    check(("no compile ids in this log" in text) == (not f["compile_ids"]), f"{name}: 'no compile ids' line")
    n = f["payload_md5_mismatches"]
    want = f"bad md5: {n} payload{' does' if n == 1 else 's do'} not match"
    check((want in text) == (n > 0) and ("bad md5: " in text) == (n > 0), f"{name}: md5 line for {n} mismatches")
# The graph-break table shows each restart reason whole (EXPECTED.json's restarts); it was cut
# in the middle to fit 100 columns.
rc, out, err = run("compile", os.path.join(DIR, "tlparse", "comp_metrics.log"))
gb = out.decode().split("graph break: frame", 1)[-1].split("\n\n")[0].splitlines()[2:]
for cid, reason in tl["comp_metrics.log"]["restarts"]:
    check(any(l.endswith(reason) for l in gb), f"comp_metrics: graph break row ending in {reason!r}: {gb}")
# vLLM's piecewise graphs: no Dynamo region, but Inductor's triton kernels ran; the "why empty"
# line says so (it said "eager code"). Kernels counted here from the JSON.
vllm = os.path.join(DIR, "kineto", "vllm_prefilldecode_piecewise", "graph_execution.json.gz")
with gzip.open(vllm) as fh:
    tri = sum(1 for e in json.load(fh)["traceEvents"] if e.get("cat") == "kernel" and str(e.get("name", "")).startswith("triton_"))
got = run_json("compile", vllm)
check(tri > 0 and got is not None and f"{tri} triton kernels ran" in got.get("unavailable", ""),
      f"vllm graph_execution: {tri} triton kernels named in {got}")
# The recompile bullet's cache-limit warning counts one rank's recompiles, not the sum over ranks
# (7 ranks with at most 3 each read "17 recompiles ... falls back to eager"). Per rank from
# EXPECTED.json's compile ids ([F/C] with C > 0 and no restart suffix).
for d in ("multi_rank_runtime", "multi_rank_logs"):
    per = [sum(1 for cid in f["compile_ids"] if re.fullmatch(r"\[\d+/[1-9]\d*\]", cid))
           for name, f in tl.items() if name.startswith(d + "/")]
    per = [n for n in per if n]
    rc, out, err = run("compile", os.path.join(DIR, "tlparse", d))
    bullet = next((l for l in out.decode().splitlines() if l.startswith("* ") and " recompiles of " in l), "")
    check(f" over {len(per)} ranks (at most {max(per)} on one)" in bullet, f"{d}: per-rank recompiles {per} in {bullet!r}")
    check(("falls back to eager" in bullet) == (max(per) + 1 >= 8), f"{d}: cache limit claim with at most {max(per)} per rank: {bullet!r}")
# The cold-cache bullet is the first rank's numbers: with several ranks it names the rank.
rc, out, err = run("compile", os.path.join(DIR, "tlparse", "multi_rank_runtime"))
cache = [l for l in out.decode().splitlines() if l.startswith("* FX graph cache")]
check(len(cache) == 1 and cache[0].startswith("* FX graph cache on rank 0: "), f"multi_rank_runtime: {cache}")
got = run_json("compile", os.path.join(DIR, "tlparse", "graph_exec_order"))
if got:
    div = {d["what"]: d["groups"] for d in got["divergences"]}
    orders = {tuple(g["ranks"]): g["value"] for g in div.get("graph execution order", [])}
    check(orders == {(0,): "0/1,0/0,0/1,0/0,0/1,0/0", (1,): "0/0,0/1,0/1,0/0,0/1,0/0"},
          f"graph_exec_order: {orders}")
    check("FX graph cache hit/miss" not in div, "graph_exec_order: cache consistent")

# Kineto: per compiled region, GPU events launched inside (by correlation) and their busy time.
kin = json.load(open(os.path.join(DIR, "kineto", "EXPECTED.json")))["files"]
xdit = os.path.join(DIR, "kineto", "xdit_sd_3.5_profile_trace_rank_0.json.gz")
got = run_json("compile", xdit)
if got:
    regions = {r["name"]: r for r in got["runtime"]["regions"]}
    for rname in {a["name"] for a in kin["xdit_sd_3.5_profile_trace_rank_0.json.gz"]["regions_gpu_attribution"]}:
        rows = [a for a in kin["xdit_sd_3.5_profile_trace_rank_0.json.gz"]["regions_gpu_attribution"] if a["name"] == rname]
        if rname == "TorchDynamo Cache Lookup":
            check(got["runtime"]["cache_lookups"] == len(rows), "xdit: cache lookups")
            continue
        r = regions.get(rname)
        check(r is not None, f"xdit: region {rname}")
        if not r:
            continue
        check(r["calls"] == len(rows), f"xdit: {rname} calls")
        check(r["gpu_events"] == sum(a["gpu_events"] for a in rows), f"xdit: {rname} gpu events {r['gpu_events']}")
        check(r["triton_kernels"] == sum(a["triton_kernels"] for a in rows), f"xdit: {rname} triton")
        want_ns = sum(a["gpu_busy_us"] for a in rows) * 1000
        check(abs(r["gpu_busy_ns"] - want_ns) < 10 * len(rows), f"xdit: {rname} busy {r['gpu_busy_ns']} vs {want_ns}")
    check(got["runtime"]["triton_total"] == kin["xdit_sd_3.5_profile_trace_rank_0.json.gz"]["triton_kernel_launches"],
          "xdit: triton launches")
    # Join: a generated log whose FX graph cache miss has the trace's key joins it to [0/0].
    key = "fp5r5pk7bndvtfxhvsvzndl5pa42kyv4kgpya5imdcl36x5bf6lh"
    payload = json.dumps({"key": key, "components": []})
    import hashlib
    log = ('V1206 15:18:20.252000 1 torch/_dynamo/convert_frame.py:1] {"dynamo_start": {"stack": []}, '
           '"frame_id": 0, "frame_compile_id": 0, "attempt": 0}\n'
           'V1206 15:18:21.000000 1 torch/_inductor/codecache.py:1] {"artifact": {"name": "fx_graph_cache_miss", '
           f'"encoding": "json"}}, "frame_id": 0, "frame_compile_id": 0, "attempt": 0, "has_payload": '
           f'"{hashlib.md5(payload.encode()).hexdigest()}"}}\n\t{payload}\n')
    with tempfile.TemporaryDirectory() as tmp:
        p = os.path.join(tmp, "dedicated_log_torch_trace_rank_0_x.log")
        open(p, "w").write(log)
        got = run_json("compile", p, xdit)
        if got:
            fx = [r for r in got["runtime"]["regions"] if r["kind"] == "CompiledFxGraph"]
            check(len(fx) == 1 and fx[0]["compile_id"] == "0/0" and fx[0]["fx_key"] == key, f"join: {fx}")
            check(got["ranks"][0]["md5_mismatches"] == 0, "generated log md5")

# The runtime view is an analysis of the stage: `analyze --json`, the report and `compile TRACE
# --json` give the same object; a trace without compiled regions says why everywhere and has no
# Compile section in `analyze`'s text.
single = run_json("compile", xdit)
rc, out, err = run("analyze", xdit, "--json")
check(rc == 0 and json.loads(out)["compile"] == single, "xdit: analyze.compile == compile --json")
rc, out, err = run("report", xdit, "--data-json")
check(rc == 0 and json.loads(out)["analyses"]["compile"] == single, "xdit: report compile == compile --json")
rc, out, err = run("analyze", xdit)
check(b"== Compile" in out and b"Torch-Compiled Region: 0/0" in out, "xdit: analyze text has the Compile section")
eager = shared_path("traces/kineto-gpu/critical_path/simple_add/benchmark_result_493459_1694039959_trace.json.gz")
if eager:
    got = run_json("compile", eager)
    check(got is not None and "no torch.compile regions" in got.get("unavailable", ""), f"eager trace: {got}")
    rc, out, err = run("analyze", eager, "--json")
    check(rc == 0 and json.loads(out)["compile"] == got, "eager trace: analyze.compile == compile --json")
    rc, out, err = run("analyze", eager)
    check(rc == 0 and b"== Compile" not in out, "eager trace: no Compile section in the text")

# Tolerated damage: CRLF + blank lines + no final newline + a corrupt JSON line give the same
# compile ids and timings as the clean file; a non-log / empty file is exit 2, one line.
clean = read_text(os.path.join(DIR, "tlparse", "comp_metrics.log"))
base = run_json("compile", os.path.join(DIR, "tlparse", "comp_metrics.log"))
with tempfile.TemporaryDirectory() as tmp:
    lines = clean.rstrip("\n").split("\n")
    damaged = "\r\n\r\n".join(lines)  # CRLF, a blank line between all lines, no final newline
    damaged += "\r\nV0403 07:28:48.078000 1 x.py:1] {not json\r\nthis is not a log line"
    p = os.path.join(tmp, "damaged.log")
    open(p, "w", newline="").write(damaged)
    got = run_json("compile", p)
    if got and base:
        s = got["ranks"][0]
        check(s["id_sequence"] == base["ranks"][0]["id_sequence"], "damaged: ids")
        check(s["md5_mismatches"] == 0, f"damaged: md5 {s['md5_mismatches']}")
        check(s["crlf"] and s["blank_lines"] >= len(lines) - 1, "damaged: crlf/blank counted")
        check(s["json_failures"] == 1 and s["unrecognized_lines"] == 1, f"damaged: counted {s}")
        check(abs(s["compile_s"] - base["ranks"][0]["compile_s"]) < 1e-9, "damaged: times")
    for fname, data in {"empty.log": b"", "notalog.log": b"hello\nworld\n", "binary.log": bytes(range(256)) * 4,
                        "cut.log.gz": gzip.compress(clean.encode())[:200]}.items():
        p = os.path.join(tmp, fname)
        open(p, "wb").write(data)
        rc, out, err = run("compile", p)
        lines_err = err.strip().splitlines()
        check(rc == 2 and len(lines_err) == 1 and p in lines_err[0] and not out, f"{fname}: rc={rc} err={err.strip()[:200]}")



def log_entries(path):
    """(envelope, payload) per glog line: TAB lines are the payload, blank lines skipped, CR dropped."""
    cur = None
    for l in read_text(path).split("\n"):
        l = l.rstrip("\r")
        if l.startswith("\t"):
            if cur is not None:
                cur[1].append(l[1:])
            continue
        if not l.strip():
            continue
        if cur:
            yield cur[0], "\n".join(cur[1])
        j = l.find("] {")
        try:
            cur = (json.loads(l[j + 2:]), []) if j >= 0 else None
        except ValueError:
            cur = None
    if cur:
        yield cur[0], "\n".join(cur[1])


def cid_text(e):
    return f"[{e['frame_id']}/{e['frame_compile_id']}" + (f"_{e['attempt']}" if e.get("attempt") else "") + "]"


def rank_of(fn):
    return int(re.search(r"rank_(\d+)", fn).group(1))


# Multi-rank: every rank's compile ids are rows (each with its rank), in the JSON and the text;
# --rank N picks one. Compile ids per rank from EXPECTED.json.
got = run_json("compile", mrl)
if got:
    by_rank = {}
    for c in got["compiles"]:
        by_rank.setdefault(c.get("rank"), []).append(c["id"])
    want = {rank_of(n): f["compile_ids"] for n, f in tl.items() if n.startswith("multi_rank_logs/")}
    check(by_rank == want, f"multi_rank_logs: compile rows per rank {by_rank} vs {want}")
    check(sorted(f.get("rank", -1) for f in got["failures"]) == [0, 2], f"multi_rank_logs: failures {got['failures']}")
rc, out, err = run("compile", mrl)
rows = [l.split() for l in out.decode().split("\n\n")[1].splitlines()[2:]]
check(sorted({(r[0], r[1]) for r in rows if len(r) > 1}) == sorted({(str(k), i) for k, ids in want.items() for i in ids}),
      "multi_rank_logs text: a row per rank and compile id")
got = run_json("compile", mrl, "--rank", "1")
check(got is not None and {c.get("rank") for c in got["compiles"]} == {1} and len(got["compiles"]) == len(want[1])
      and not got["failures"] and len(got["ranks"]) == 4, "multi_rank_logs --rank 1: rank 1's rows only")
rc, out, err = run("compile", mrl, "--rank", "7")
check(rc == 2 and "--rank 7" in err, f"--rank 7: rc {rc} {err!r}")

# Past 8 ranks the text shows one rank per distinct compile-id sequence (here 9 copies of
# simple.log and comp_metrics.log as rank 9: ranks 0 and 9), and says so; the JSON has all.
with tempfile.TemporaryDirectory() as tmp:
    for r in range(10):
        src = os.path.join(DIR, "tlparse", "comp_metrics.log" if r == 9 else "simple.log.gz")
        open(os.path.join(tmp, f"dedicated_log_torch_trace_rank_{r}.log"), "w").write(read_text(src))
    rc, out, err = run("compile", tmp)
    rows = [l.split() for l in out.decode().split("\n\n")[1].splitlines()[2:]]
    check(sorted({r[0] for r in rows}) == ["0", "9"] and "compile ids of ranks 0, 9 of 10" in out.decode(),
          f"10 ranks: rows of ranks {sorted({r[0] for r in rows})}")
    got = run_json("compile", tmp)
    check(got is not None and len(got["compiles"]) == 9 * len(tl["simple.log.gz"]["compile_ids"])
          + len(tl["comp_metrics.log"]["compile_ids"]), "10 ranks: every row in the JSON")

# Divergence per graph across ranks, as tlparse's landing page reports it: the collective
# schedule (inductor_collective_schedule) and the tensor meta (inductor_runtime_and_tensor_meta:
# op names and output shape/stride/dtype) of each compile id, grouped by rank, parsed here.
def per_graph(directory, artifact, item):
    """{graph: sorted rank groups} where the ranks that compiled the graph (and log the artifact
    for some graph) disagree; a rank that compiled it without the artifact is a group of its own."""
    graphs, carrying, compiled = {}, set(), {}
    for fn in sorted(os.listdir(directory)):
        for e, payload in log_entries(os.path.join(directory, fn)):
            if e.get("frame_id") is not None:
                compiled.setdefault(rank_of(fn), set()).add(cid_text(e))
            if (e.get("artifact") or {}).get("name") == artifact:
                carrying.add(rank_of(fn))
                graphs.setdefault(cid_text(e), {})[rank_of(fn)] = item(json.loads(payload))
    out = {}
    for g, ranks in graphs.items():
        groups = {}
        for r in sorted(carrying):
            if g in compiled.get(r, ()):
                groups.setdefault(json.dumps(ranks.get(r)), []).append(r)
        if len(groups) > 1:
            out[g] = sorted(groups.values())
    return out


def meta(p):
    return [(op["name"], op.get("outputs")) for op in p["ops"]]


mrs = os.path.join(DIR, "tlparse", "multi_rank_schedule")
for d, artifact, what, item in ((mrs, "inductor_collective_schedule", "collective schedule", lambda p: p),
                                (mrr, "inductor_collective_schedule", "collective schedule", lambda p: p),
                                (mrr, "inductor_runtime_and_tensor_meta", "inductor tensor meta", meta)):
    want = per_graph(d, artifact, item)
    got = run_json("compile", d)
    if not got:
        continue
    have = {x.get("graph"): sorted(g["ranks"] for g in x["groups"]) for x in got["divergences"] if x["what"] == what}
    check(have == want, f"{os.path.basename(d)}: {what} divergence {have} vs {want}")
    rc, out, err = run("compile", d)
    for g in want:
        check(f"ranks diverge in {what} of {g}:" in out.decode()
              and any(l.startswith("* ranks diverge in ") and what in l and g in l for l in out.decode().splitlines()),
              f"{os.path.basename(d)}: text and bullet for {what} of {g}")
# tlparse's own facts (README): multi_rank_schedule [0/0] is 6 ops on ranks 0 and 2, 4 on rank 1;
# multi_rank_runtime's ranks 5 and 6 group together in tensor meta.
got = run_json("compile", mrs)
if got:
    sched = [x for x in got["divergences"] if x["what"] == "collective schedule"]
    check(len(sched) == 1 and sched[0].get("graph") == "[0/0]"
          and sorted((g["ranks"], g["value"].split(":")[0]) for g in sched[0]["groups"]) == [([0, 2], "6 ops"), ([1], "4 ops")],
          f"multi_rank_schedule: {sched}")
got = run_json("compile", mrr)
if got:
    check(all([5, 6] in [g["ranks"] for g in x["groups"]] for x in got["divergences"] if x["what"] == "inductor tensor meta")
          and any(x["what"] == "inductor tensor meta" for x in got["divergences"]), "multi_rank_runtime: ranks 5, 6 grouped")

# Phases: code generation time from compilation_metrics (inductor_code_gen_cumulative_compile_time_us
# in newer logs), in the JSON and the text; every chromium phase in the text, compile_file (no
# compile id) included, at EXPECTED.json's duration.
simple = os.path.join(DIR, "tlparse", "simple.log.gz")
cm = [e["compilation_metrics"] for e, _ in log_entries(simple) if "compilation_metrics" in e]
got = run_json("compile", simple)
if got:
    want_cg = cm[0]["inductor_code_gen_cumulative_compile_time_us"] / 1e6
    check(got["compiles"][0]["code_gen_s"] is not None and abs(got["compiles"][0]["code_gen_s"] - want_cg) < 1e-9,
          f"simple: code_gen_s {got['compiles'][0]['code_gen_s']} vs {want_cg}")
rc, out, err = run("compile", simple)
text = out.decode()


def dur_text(us):
    """mlprof's duration format (3 decimals, ms below a second)."""
    return f"{us / 1e6:.3f} s" if us >= 1e6 else f"{us / 1e3:.3f} ms"


phase_rows = {l.split("  ")[0].strip(): l for l in text.split("compile phase", 1)[-1].split("\n\n")[0].splitlines()[2:]}
for key, us in tl["simple.log.gz"]["compile_phase_us"].items():
    phase, cid = key.rsplit("@", 1)
    name = phase + (" (no compile id)" if cid == "None" else "")
    check(name in phase_rows and dur_text(us) in phase_rows[name], f"simple text: phase {name} {us} us in {phase_rows.get(name)!r}")
check("codegen" in text and dur_text(want_cg * 1e6) in text.split("compile phase")[0], "simple text: codegen column")
# The frame of a compile id is its code object for every attempt: [0/0] (restarted, no metrics of
# its own) names fn like [0/0_1]; the user frame skips torch/_dynamo's eval_frame wrapper.
got = run_json("compile", os.path.join(DIR, "tlparse", "comp_metrics.log"))
if got:
    rows = {c["id"]: c for c in got["compiles"]}
    names = {cid: m["co_name"] for cid, m in tl["comp_metrics.log"]["compilation_metrics"]}
    check(rows["[0/0]"]["frame"] == rows["[0/0_1]"]["frame"] and rows["[0/0]"]["frame"].startswith(names["[0/0_1]"] + " ("),
          f"comp_metrics: [0/0] frame {rows['[0/0]']['frame']!r}")
    check(all("eval_frame.py" not in c["user_frame"] for c in got["compiles"]), "comp_metrics: user frames skip eval_frame")
    # A restart has no dynamo_start: its caller is its first attempt's (the log's dynamo_start
    # stacks, parsed here: innermost frame outside torch/).
    strings, callers = {}, {}
    for e, _ in log_entries(os.path.join(DIR, "tlparse", "comp_metrics.log")):
        if "str" in e:
            strings[e["str"][1]] = e["str"][0]
        elif "dynamo_start" in e:
            user = [f for f in e["dynamo_start"]["stack"] if "/torch/" not in strings[f["filename"]]][-1]
            callers[(e["frame_id"], e["frame_compile_id"])] = (
                f"{os.path.basename(strings[user['filename']])}:{user['line']} in {user['name']}")
    for c in got["compiles"]:
        f, comp = map(int, c["id"].strip("[]").split("_")[0].split("/"))
        check(c["user_frame"] == callers.get((f, comp)), f"comp_metrics: {c['id']} user frame {c['user_frame']!r}")

# Graph capture (vLLM's capture pass): the regions launched nothing because kernels under capture
# are recorded, not run; no "compile the modules" advice. Capture calls counted here.
cap_dir = os.path.join(DIR, "kineto", "vllm_prefilldecode_piecewise", "capture_traces")
cap = os.path.join(cap_dir, next(n for n in os.listdir(cap_dir) if n.endswith(".json.gz")))
with gzip.open(cap) as fh:
    ncap = sum(1 for e in json.load(fh)["traceEvents"] if e.get("ph") == "X" and re.match(
        r"(cuda|hip)(StreamBeginCapture|GraphInstantiate)", str(e.get("name", ""))))
got = run_json("compile", cap)
if got:
    check(ncap > 0 and got["runtime"].get("graph_captures") == ncap, f"capture: {got['runtime'].get('graph_captures')} vs {ncap}")
    check(not any("outside compiled regions" in x for x in got["recommendations"])
          and any("graph-capture pass" in x for x in got["recommendations"]), f"capture: {got['recommendations']}")
# A share just under 100% is not rounded up to 100% (B200: one triton kernel in the region).
b200 = shared_path("traces/modules/b200_gptoss_vllm_eager_trace.json.gz")
if b200:
    got = run_json("compile", b200)
    if got:
        rt = got["runtime"]
        share = rt["gpu_ns_outside"] / (rt["gpu_ns_outside"] + rt["gpu_ns_in_compiled"])
        bullet = next((x for x in got["recommendations"] if "outside compiled regions" in x), "")
        pct = bullet.split("%")[0]
        check(0 < rt["gpu_ns_in_compiled"] and share < 1 and pct != "100" and abs(float(pct or -1) - 100 * share) < 0.01,
              f"b200: {bullet!r} for share {share}")
# Region names whole in the text (the FX graph key was cut in the middle).
rc, out, err = run("compile", xdit)
fx_key = "fp5r5pk7bndvtfxhvsvzndl5pa42kyv4kgpya5imdcl36x5bf6lh"
check(f"## Call CompiledFxGraph {fx_key} ##" in out.decode(), "xdit text: the region name whole")

print(f"{checked - failures}/{checked} checks passed")
sys.exit(1 if failures else 0)
