"""Issue 32 items 2, 4 and 9 from the outside (docs/hardening.md): a pickle nested 200,000 deep
is a one-line error (it crashed the CLI and serve with a stack overflow), and serve keeps
answering; a pickle cycle is refused; timestamps whose span would overflow 64 bits are skipped
with a warning naming the file, and no command prints a wrong span (events at -9e15 and +9e15 us
printed "span -446744073.710 s"); a torch.compile log with many compile ids gives one row per id
with the statuses an independent count of the generated log expects; a 2 MB word in a compile
log's payload no longer overflows the stack (std::regex).
Expected values come from the inputs built here.
Usage: test_hostile_parse.py MLPROF TESTS_DATA"""
import json
import os
import subprocess
import sys
import tempfile
import time

MLPROF = os.path.abspath(sys.argv[1])
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import serve_process  # noqa: E402

failures = []


def check(cond, what):
    print(("ok  " if cond else "FAIL") + "  " + what, flush=True)
    if not cond:
        failures.append(what)


def mlprof(*args, timeout=300):
    return subprocess.run([MLPROF, *args], capture_output=True, timeout=timeout)


def one_line_error(p, path, want):
    err = p.stderr.decode("utf-8", "replace").strip()
    return (p.returncode == 2 and err.count("\n") == 0 and path in err and want in err,
            f"exit {p.returncode}, stderr {err[:300]!r}")


def test_nested(tmp):
    deep = os.path.join(tmp, "d.pickle")
    with open(deep, "wb") as f:  # the repro
        f.write(b"\x80\x04" + b"]" * 200000 + b"a" * 199999 + b".")
    p = mlprof("memory", deep)
    ok, how = one_line_error(p, deep, "nested deeper than 256 levels")
    check(ok, f"mlprof memory d.pickle (200,000 levels): one-line error, exit 2 ({how})")
    cycle = os.path.join(tmp, "cycle.pickle")
    with open(cycle, "wb") as f:  # l = []; l.append(l)
        f.write(b"\x80\x04]\x94h\x00a.")
    ok, how = one_line_error(mlprof("summary", cycle), cycle, "cycle")
    check(ok, f"a list stored in itself: one-line error ({how})")
    deep_json = os.path.join(tmp, "deep.json")
    with open(deep_json, "w") as f:
        f.write('{"segments": ' + "[" * 200000 + "]" * 200000 + "}")
    ok, how = one_line_error(mlprof("summary", deep_json), deep_json, "nested deeper")
    check(ok, f"the JSON twin nested 200,000 deep: one-line error ({how})")

    served = os.path.join(tmp, "served")
    os.makedirs(served)
    os.link(deep, os.path.join(served, "d.pickle"))
    hour_ago = time.time() - 3600  # not "probably still being written" (503)
    os.utime(os.path.join(served, "d.pickle"), (hour_ago, hour_ago))
    with open(os.path.join(served, "ok.json"), "w") as f:
        json.dump({"traceEvents": [{"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 1,
                                    "dur": 2}]}, f)
    s = serve_process.Serve(MLPROF, served)
    try:
        status, _, body = s.get("/api/profiler/summary?trace=d.pickle")
        check(status == 422 and b"nested deeper" in body,
              f"serve: the nested pickle is an error reply ({status} {body[:160]!r})")
        status, _, body = s.get("/api/profiler/summary?trace=ok.json")
        check(status == 200 and s.proc.poll() is None,
              f"serve: still answering afterwards ({status})")
    finally:
        s.stop()


def events_json(path, events):
    with open(path, "w") as f:
        json.dump({"traceEvents": events}, f)


def test_span(tmp):
    ok_events = [{"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 1000, "dur": 500},
                 {"ph": "X", "name": "b", "pid": 1, "tid": 1, "ts": 3000, "dur": 250}]
    span_ns = (3000 + 250 - 1000) * 1000  # from the events kept, computed here
    cases = {
        "far_apart.json": [{"ph": "X", "name": "early", "pid": 1, "tid": 1, "ts": -9e15, "dur": 1},
                           {"ph": "X", "name": "late", "pid": 1, "tid": 1, "ts": 9e15, "dur": 1}],
        "far_end.json": [{"ph": "X", "name": "long", "pid": 1, "tid": 1, "ts": 4e15, "dur": 1e15}],
        "far_instant.json": [{"ph": "i", "name": "i", "pid": 1, "tid": 1, "ts": -9e15, "s": "t"},
                             {"ph": "C", "name": "c", "pid": 1, "tid": 1, "ts": 9e15,
                              "args": {"v": 1}}],
    }
    for name, bad in cases.items():
        path = os.path.join(tmp, name)
        events_json(path, ok_events + bad)
        p = mlprof("summary", path, "--json")
        err = p.stderr.decode("utf-8", "replace")
        try:
            doc = json.loads(p.stdout)
        except ValueError:
            doc = {}
        check(p.returncode == 0 and doc.get("span_ns") == span_ns,
              f"{name}: summary span {doc.get('span_ns')} ns is the kept events' {span_ns}")
        check("out of range" in err and path in err,
              f"{name}: a warning names the file and the range ({err.strip()[:200]!r})")
        text = mlprof("summary", path).stdout.decode()
        check("span 2.250 ms" in text.replace("  ", " ") or "2.250 ms" in text,
              f"{name}: the text says 2.250 ms ({text.splitlines()[:3]})")
        for cmd in (["analyze", path, "--json"], ["report", path, "-o", path + ".html"]):
            q = mlprof(*cmd)
            out = q.stdout.decode() + (open(path + ".html").read() if cmd[0] == "report" else "")
            check(q.returncode == 0 and "-446744073" not in out and '"span_ns":-' not in out
                  and '"span_ns": -' not in out, f"{name}: {cmd[0]} prints no negative span")
        strict = mlprof("summary", path, "--strict")
        check(strict.returncode == 2, f"{name}: --strict refuses it ({strict.returncode})")


def test_compile_ids(tmp):
    n = 3000
    log = os.path.join(tmp, "c.log")
    subprocess.run([sys.executable, os.path.join(HERE, "..", "..", "bench", "gen_compile_log.py"),
                    str(n), log], check=True)
    # Independently from the generator's rule: ids i = 1, 2, ... per (frame, compile) slot k
    # (k = 0, 1, ...); every 5th slot (k % 5 == 4) is restarted once (attempt 0, then 1).
    restarted = ok = 0
    ids = k = 0
    while ids < n:
        attempts = 2 if (k + 1) % 5 == 0 else 1
        for a in range(attempts):
            if ids >= n:
                break
            ids += 1
            if attempts == 2 and a == 0:
                restarted += 1
            else:
                ok += 1
        k += 1
    p = mlprof("compile", log, "--json")
    doc = json.loads(p.stdout) if p.returncode == 0 else {}
    rows = doc.get("compiles", [])
    check(len(rows) == n, f"compile: {len(rows)} rows for {n} compile ids")
    statuses = [r.get("status") for r in rows]
    check(statuses.count("restarted") == restarted and statuses.count("ok") == ok,
          f"statuses: {statuses.count('restarted')} restarted (want {restarted}), "
          f"{statuses.count('ok')} ok (want {ok})")
    # A restarted attempt has no code object of its own: its frame is its frame's other record's.
    check(all(r.get("frame", "").startswith("fn_") for r in rows),
          "every row names its frame (restarts take the frame's code object)")
    check(all(r.get("user_frame") for r in rows),
          "every row has its caller (restarts take their first attempt's)")


def test_long_kernel_word(tmp):
    """The kernel names of inductor_output_code were found with std::regex, whose matcher recurses
    per character: one 2 MB word overflowed the stack (exit 139)."""
    import hashlib
    import re
    payload = ("def triton_poi_fused_" + "a" * 2000000 + "(): pass\n"
               "call(cpp_fused_mul_1, x_fused_y, triton_fused_z, triton_poi_fused_add_0)\n"
               "triton_poi_fused_add_0(); cpp_fusedx; triton__fused_q; triton_red_fused_")
    # What the reader's pattern finds, by Python's re (an independent matcher).
    want = len(set(re.findall(r"\b((?:triton|cpp)_[a-z]*_?fused_\w+)\b", payload)))
    env = {"inductor_output_code": {"filename": "x"}, "frame_id": 0, "frame_compile_id": 0,
           "has_payload": hashlib.md5(payload.encode()).hexdigest()}
    path = os.path.join(tmp, "long_word.log")
    with open(path, "w") as f:
        f.write("V1206 15:24:45.403000 1 u.py:1] " + json.dumps(env) + "\n")
        f.write("".join("\t" + line + "\n" for line in payload.split("\n")))
    p = mlprof("compile", path, "--json")
    doc = json.loads(p.stdout) if p.returncode == 0 else {}
    kernels = [r.get("kernels") for r in doc.get("compiles", [])]
    check(p.returncode == 0 and kernels == [want] and want == 5,
          f"a 2 MB word in a payload: exit {p.returncode}, kernels {kernels} (want [{want}])")


def test_chromium_without_args(tmp):
    """A chromium event without "args" (or with args that are not an object) ended `mlprof
    compile` with an uncaught simdjson exception (found by compile_log_fuzz)."""
    import hashlib
    lines = []
    for ev in ({"name": "dynamo", "ph": "B", "ts": 1}, {"name": "dynamo", "ph": "E", "ts": 3},
               {"name": "fx_graph_cache_hit", "ph": "i", "ts": 2, "args": 5}):
        payload = json.dumps(ev)
        env = {"chromium_event": {}, "frame_id": 0, "frame_compile_id": 0,
               "has_payload": hashlib.md5(payload.encode()).hexdigest()}
        lines.append("V1206 15:24:45.403000 1 u.py:1] " + json.dumps(env) + "\n\t" + payload + "\n")
    path = os.path.join(tmp, "no_args.log")
    with open(path, "w") as f:
        f.write("".join(lines))
    p = mlprof("compile", path, "--json")
    doc = json.loads(p.stdout) if p.returncode == 0 else {}
    check(p.returncode == 0 and doc.get("global_phases_us", {}).get("dynamo") == 2,
          f"chromium events without args: exit {p.returncode}, {p.stderr.decode()[:200]!r}, "
          f"global phases {doc.get('global_phases_us')}")


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as tmp:
        for fn in (test_nested, test_span, test_compile_ids, test_long_kernel_word,
                   test_chromium_without_args):
            print(f"== {fn.__name__}", flush=True)
            sub = os.path.join(tmp, fn.__name__)
            os.makedirs(sub)
            fn(sub)
    if failures:
        print(f"{len(failures)} failed")
        sys.exit(1)
    print("all passed")
