"""One analysis stage under every consumer: for every trace in our tests/data and in the shared
traces folder, the JSON of each analysis is the same whether it comes from `mlprof NAME --json`,
`mlprof analyze --json`, the report's embedded data (`report --data-json`) or `serve`'s
/api/profiler/NAME. "The same" is token for token: numbers are compared as the text mlprof wrote
(parse_float/parse_int=str), objects with their key order; only whitespace may differ (the CLI
pretty-prints). Also the three disagreements the pipeline issue named: rank directories give the
report the same rank (the straggler, else the slowest) and the ranks result reaches its
bottlenecks, and "no GPU" is one object everywhere. The compiled-regions view (`compile`) and the CUDA allocator view of a memory snapshot
(`memory_snapshot`, which `mlprof memory SNAPSHOT` prints) are analyses of the stage like the
others: present where the trace has that content, one unavailable object everywhere else. A
torch.compile log (a file, or a TORCH_TRACE directory) gives the compile analysis of `mlprof
compile LOG --json` in analyze, the report and serve, and nothing else.

Usage: test_pipeline_consistency.py MLPROF DATA_DIR  (shared traces: $MLPROF_SHARED_DIR/traces,
see shared_data.py; skipped with a message when absent)."""
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
import shared_data  # noqa: E402
from checks import check, finish  # noqa: E402
import serve_process  # noqa: E402

MLPROF, DATA = sys.argv[1], sys.argv[2]
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# Each analysis of the report, and the subcommand that prints it alone.
REPORT = ["summary", "ops", "steps", "kernels", "gpu", "memory", "leaks", "bottlenecks", "flops",
          "flame", "timeline", "modules", "critical_path", "compile", "memory_snapshot", "roofline"]
COMMAND = {"critical_path": "critical-path"}  # JSON key -> subcommand
ANALYZE = ["summary", "steps", "memory", "leaks", "flops", "gpu", "kernels", "bottlenecks",
           "modules", "critical_path", "compile", "memory_snapshot", "roofline"]
NO_GPU = {"unavailable": "no GPU streams in this trace (a CPU-only profile)"}  # + its "schema"
# analyze's text sections, in order, and their analyses.
SECTIONS = [("Summary", "summary"), ("Steps", "steps"), ("GPU", "gpu"), ("Kernels", "kernels"),
            ("Memory", "memory"), ("Leaks", "leaks"), ("FLOPs", "flops"), ("Modules", "modules"),
            ("Critical path", "critical_path"), ("Compile", "compile"),
            ("CUDA memory snapshot", "memory_snapshot"), ("Bottlenecks", "bottlenecks"),
            ("Roofline", "roofline")]


def exact(text):
    """JSON parsed keeping the number text and key order: equal iff equal token for token."""
    return json.loads(text, parse_float=str, parse_int=str, object_pairs_hook=list)


REPORT_PATH_ROWS = 1000  # kReportCriticalPathRows (src/render/report.h)
REPORT_OP_ROWS = 10000  # kReportOpRows: the report and serve keep the first rows of each op list


def report_op_rows(ops):
    """ops --json as the report embeds it: each list cut to its first kReportOpRows rows (the
    *_rows counts still say how many there are)."""
    return [(k, v[:REPORT_OP_ROWS] if k in ("ops", "by_input_shape", "by_call_stack") else v)
            for k, v in ops]


def report_listed_path(got, ref, name):
    """The report lists the longest REPORT_PATH_ROWS edges of a long critical path (in path
    order, each with its 1-based index on the full path) and the syncs on the path first: checks
    that against the CLI's full lists; returns both results without the lists, to compare the
    rest token for token."""
    got, ref = dict(got), dict(ref)
    full = [dict(e) for e in ref["path"]]
    order = sorted(range(len(full)), key=lambda i: (-int(full[i]["ns"]), i))[:REPORT_PATH_ROWS]
    want = [list(ref["path"][i]) + [("index", str(i + 1))] for i in sorted(order)]
    check(got["path"] == want, f"{name}: the report's critical path lists the longest edges")
    check(got.get("path_listed_total") == str(len(full)), f"{name}: path_listed_total")
    syncs = ref["syncs"]
    if len(syncs) > REPORT_PATH_ROWS:
        on = [y for y in syncs if dict(y)["on_path"]] + [y for y in syncs if not dict(y)["on_path"]]
        check(got["syncs"] == on[:REPORT_PATH_ROWS], f"{name}: the report's syncs, those on the path first")
    else:
        check(got["syncs"] == syncs, f"{name}: the report's syncs")
    drop = ("path", "syncs", "path_listed_total", "path_cut", "syncs_total", "syncs_cut")
    return ([kv for kv in got.items() if kv[0] not in drop],
            [kv for kv in ref.items() if kv[0] not in drop])


def run(*args):
    out = subprocess.run([MLPROF, *args], capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(f"mlprof {' '.join(args)}: exit {out.returncode}: {out.stderr.strip()}")
    return out.stdout


def traces_under(root):
    found = []
    for d, dirs, files in os.walk(root):
        dirs.sort()
        for f in sorted(files):
            if f.endswith((".json", ".json.gz", ".mlprof", ".pickle", ".pickle.gz")) and \
                    f != "EXPECTED.json":
                found.append(os.path.join(d, f))
    return found


def is_trace(path):
    try:
        run("summary", "--json", path)
        return True
    except RuntimeError:
        return False  # reference numbers, snapshots, logs: not traces


def Serve(root):
    return serve_process.Serve(MLPROF, root)


def check_trace(path, serve, rel):
    name = os.path.relpath(path, REPO) if path.startswith(REPO) else path
    # `mlprof memory SNAPSHOT` prints the CUDA allocator's own view (the memory_snapshot
    # analysis), `mlprof memory TRACE` the memory analysis; the other consumers show both. An
    # analysis with no subcommand for this input is compared with the report's copy.
    snapshot = "memory-snapshot" in path.split(os.sep) or path.endswith((".pickle", ".pickle.gz"))
    if snapshot:
        command = dict(COMMAND, memory=None, memory_snapshot="memory")
    else:
        command = dict(COMMAND, memory_snapshot=None)
    singles = {a: exact(run(command.get(a, a), "--json", path)) for a in REPORT if command.get(a, a)}
    analyze = dict(exact(run("analyze", "--json", path)))
    report = dict(dict(exact(run("report", "--data-json", path)))["analyses"])
    for a in REPORT:
        ref, what = (singles[a], f"{command.get(a, a)} --json") if a in singles else (report.get(a), "report")
        check(ref is not None, f"{name}: {a} in the report")
        if a in singles:
            got = report.get(a)
            if a == "critical_path" and got and "path_cut" in dict(got):
                got, ref_cmp = report_listed_path(got, ref, name)
            elif a == "ops":
                ref_cmp = report_op_rows(ref)
            else:
                ref_cmp = ref
            check(got == ref_cmp, f"{name}: report.{a} == {what}")
        if a in ANALYZE:
            check(analyze.get(a) == ref, f"{name}: analyze.{a} == {what}")
        if serve:
            from urllib.parse import quote
            body = serve.text(f"/api/profiler/{a}?trace={quote(rel)}")
            want = report_op_rows(ref) if a == "ops" and a in singles else ref
            check(exact(body) == want, f"{name}: serve /api/profiler/{a} == {what}")
    # The content-dependent views: there on the data made for them, a reason everywhere else.
    views = json.loads(run("analyze", "--json", path))
    check(("unavailable" in views["memory_snapshot"]) != snapshot,
          f"{name}: memory_snapshot {'missing' if snapshot else 'present'}")
    # The documented rule: an analysis the input lacks is one {"unavailable": why} object and
    # has no section in analyze's text (a snapshot has no module tree and no critical path).
    for a in ANALYZE:
        check("unavailable" not in views[a] or list(views[a]) == ["schema", "unavailable"],
              f"{name}: {a} is {{\"unavailable\"}} alone or a result, not {list(views[a])[:3]}")
    text = run("analyze", path)
    titles = [l[3:].rstrip("= ").strip() for l in text.splitlines() if l.startswith("== ")]
    want = [t for t, a in SECTIONS if "unavailable" not in views[a]]
    check(titles == want, f"{name}: analyze sections {titles}, want {want}")
    if snapshot:
        check("unavailable" in views["modules"] and "unavailable" in views["critical_path"],
              f"{name}: a snapshot has no modules, no critical path")
    if os.path.basename(path).startswith("xdit_sd_3.5"):
        check("unavailable" not in views["compile"], f"{name}: compiled regions found")
    gpu = json.loads(run("gpu", "--json", path))
    if "unavailable" in gpu:
        check(gpu == dict(NO_GPU, schema="mlprof.gpu/1"), f"{name}: gpu without GPU streams is {NO_GPU}")
        check(json.loads(run("kernels", "--json", path)) == dict(NO_GPU, schema="mlprof.kernels/1"),
              f"{name}: kernels too")


def check_compile_log(path, serve, rel):
    """A torch.compile structured log (or a TORCH_TRACE directory of them) is an input of the
    stage too: its compile analysis is `mlprof compile LOG --json` token for token in analyze,
    the report and serve, and every other analysis is unavailable (no section in the text)."""
    name = os.path.relpath(path, shared_traces)
    path = os.path.realpath(path)  # serve names the file by its real path
    ref = exact(run("compile", "--json", path))
    check(dict(ref).get("ranks"), f"{name}: compile --json has the log's rank")
    check(dict(exact(run("analyze", "--json", path))).get("compile") == ref,
          f"{name}: analyze.compile == compile --json")
    report = dict(exact(run("report", "--data-json", path)))
    check(dict(report["analyses"]).get("compile") == ref, f"{name}: report.compile == compile --json")
    if serve:
        from urllib.parse import quote
        check(exact(serve.text(f"/api/profiler/compile?trace={quote(rel)}")) == ref,
              f"{name}: serve /api/profiler/compile == compile --json")
    views = json.loads(run("analyze", "--json", path))
    present = [a for a in ANALYZE if a != "compile" and "unavailable" not in views[a]]
    check(not present, f"{name}: analyses other than compile on a log: {present}")
    text = run("analyze", path)
    sections = [l.split(" ")[1] for l in text.splitlines() if l.startswith("== ")]
    check(sections == ["Compile"], f"{name}: analyze's sections {sections}")


def check_rank_dir(ranks_dir):
    """report DIR and analyze DIR describe the same rank (the straggler that costs most, else the
    slowest), with the ranks result in both and in the bottleneck rules."""
    analyze = json.loads(run("analyze", "--json", ranks_dir))
    report = json.loads(run("report", "--data-json", ranks_dir))
    ranks = analyze["ranks"]
    evidence = ranks["straggler_evidence"]
    if evidence:
        worst = max(evidence, key=lambda e: (e["time_lost_ns"], -e["rank"]))
        focus = next(r for r in ranks["ranks"] if r["straggler"] and r["rank"] == worst["rank"])
    else:
        focus = max(ranks["ranks"], key=lambda r: r["wall_ns"])
    check(analyze["source"] == focus["source"], "analyze DIR: in depth = the straggler, else the slowest rank")
    check(report["analyses"]["summary"]["source"] == focus["source"],
          f"report DIR: tabs show the rank in depth ({focus['source']}), "
          f"not {report['analyses']['summary']['source']}")
    check(report["ranks"] == ranks, "report DIR: ranks == analyze DIR ranks")
    check(report["analyses"]["bottlenecks"] == analyze["bottlenecks"],
          "report DIR: bottlenecks == analyze DIR bottlenecks (rank results included)")
    check(json.loads(run("bottlenecks", "--json", ranks_dir)) == analyze["bottlenecks"],
          "bottlenecks DIR == analyze DIR bottlenecks")
    # The ranks result token for token: its subcommand, analyze, the report, serve's endpoint
    # (serve names files by their real path: the directory is given as one).
    real = os.path.realpath(ranks_dir)
    single = exact(run("ranks", "--json", real))
    check(dict(exact(run("analyze", "--json", real)))["ranks"] == single,
          "analyze DIR ranks == ranks DIR --json")
    check(dict(exact(run("report", "--data-json", real)))["ranks"] == single,
          "report DIR ranks == ranks DIR --json")
    srv = Serve(real)
    try:
        check(exact(srv.text("/api/profiler/ranks")) == single,
              "serve /api/profiler/ranks == ranks DIR --json")
    finally:
        srv.stop()


own = [p for p in traces_under(DATA) if is_trace(p)]
for p in own:
    check_trace(p, None, None)

shared_traces = shared_data.shared_path("traces")
if shared_traces is not None:
    serve = Serve(shared_traces)
    try:
        for p in traces_under(shared_traces):
            if is_trace(p):
                check_trace(p, serve, os.path.relpath(p, shared_traces))
    finally:
        serve.stop()
    # torch.compile logs: each file (serve lists it beside the traces), and a TORCH_TRACE
    # directory of one log per rank (serve lists its files).
    tlparse = os.path.join(shared_traces, "compile", "tlparse")
    if os.path.isdir(tlparse):
        serve = Serve(shared_traces)
        try:
            listed = {t["name"] for t in json.loads(serve.text("/api/traces"))["traces"]}
            logs = [p for p in sorted(os.listdir(tlparse)) if p.endswith((".log", ".log.gz"))]
            logs += [os.path.join("multi_rank_logs", p)
                     for p in sorted(os.listdir(os.path.join(tlparse, "multi_rank_logs")))]
            for log in logs:
                rel = os.path.join("compile", "tlparse", log)
                check(rel in listed, f"serve lists {rel}")
                check_compile_log(os.path.join(tlparse, log), serve, rel)
        finally:
            serve.stop()
        check_compile_log(os.path.join(tlparse, "multi_rank_logs"), None, None)
    rank_dir = os.path.join(shared_traces, "kineto-gpu", "trace_filter")
    if os.path.isdir(rank_dir):
        check_rank_dir(rank_dir)

# A rank directory of our own data: two copies of a trace, one slowed down by scaling its times.
tmp = tempfile.mkdtemp()
try:
    src = os.path.join(DATA, "mlp_bs64.json.gz")
    if os.path.exists(src):
        import gzip
        events = json.load(gzip.open(src))
        # Slowed down from its own start (a rank of the same job starts when the others do:
        # serve groups a folder's ranks by job, start times included).
        t0 = min(e["ts"] for e in events if "ts" in e)
        slow = [dict(e, ts=t0 + (e["ts"] - t0) * 2, dur=e.get("dur", 0) * 2) if "ts" in e else e
                for e in events]
        json.dump({"traceEvents": events, "distributedInfo": {"rank": 0}},
                  open(os.path.join(tmp, "rank0.json"), "w"))
        json.dump({"traceEvents": slow, "distributedInfo": {"rank": 1}},
                  open(os.path.join(tmp, "rank1.json"), "w"))
        check_rank_dir(tmp)
        analyze = json.loads(run("analyze", "--json", tmp))
        check(analyze["source"].endswith("rank1.json"), "the slowed-down rank is analyzed in depth")
finally:
    shutil.rmtree(tmp)

finish()
