"""`mlprof sql` and `mlprof export -o .sqlite/.csv` against an independent stdlib computation over
the same JSON: per-name counts and totals, slices in a time window, per-track counts, launch ->
kernel pairs by correlation id; the flow table's bound slices and dst_next against the Chrome
v1 flow rule (a hand-made trace and Perfetto's flow_events_json_v1.json); the SQLite file read back with Python's sqlite3, CSV read back
with the csv module; SQL errors, refused writes and Ctrl-C. Narrowed scans (ts ranges, track,
name, parent, args.event_id) must give what the unnarrowed scan gives (`+col` disables SQLite's
use of a constraint). Usage: test_sql.py MLPROF TESTS_DATA."""
import csv
import io
import json
import os
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections import defaultdict

sys.path.insert(0, os.path.dirname(__file__))
import trace_reference as ref  # noqa: E402
from shared_data import shared_path  # noqa: E402
from checks import check, finish  # noqa: E402

MLPROF, DATA = sys.argv[1], sys.argv[2]
GPU = "traces/kineto-gpu/critical_path/"


def run(*args, expect=0):
    p = subprocess.run([MLPROF, *args], capture_output=True, text=True)
    check(p.returncode == expect, f"{args}: exit {p.returncode} (want {expect}): {p.stderr.strip()}")
    return p


def query(path, sql):
    doc = json.loads(run("sql", path, sql, "--json").stdout)
    check(doc["schema"] == "mlprof.sql/1" and list(doc) == ["schema", "columns", "rows"] and
          all(list(r) == doc["columns"] for r in doc["rows"]), f"sql --json document: {sql}")
    return doc["rows"]


def per_name(sl):
    out = defaultdict(lambda: [0, 0])
    for s in sl:
        out[s[3]][0] += 1
        out[s[3]][1] += s[2]
    return out


def check_slices(path):
    _, events = ref.load(path)
    sl = ref.slices(events)
    want = per_name(sl)
    rows = query(path, "SELECT name, count(*) AS n, sum(dur) AS total FROM slice GROUP BY name")
    got = {r["name"]: [r["n"], r["total"]] for r in rows}
    diff = [k for k in set(got) | set(want) if got.get(k) != want.get(k)]
    check(not diff, f"{path}: per-name counts/totals differ for {diff[:3]}")
    # A time window: slices starting in [lo, hi], with and without the ts push-down.
    t0 = min(s[1] for s in sl)
    t1 = max(s[1] for s in sl)
    lo, hi = t0 + (t1 - t0) // 3, t0 + (t1 - t0) // 2
    inside = [s for s in sl if lo <= s[1] <= hi]
    for col in ("ts", "+ts"):
        r = query(path, f"SELECT count(*) AS n, coalesce(sum(dur), 0) AS total FROM slice "
                        f"WHERE {col} >= {lo} AND {col} <= {hi}")[0]
        check((r["n"], r["total"]) == (len(inside), sum(s[2] for s in inside)),
              f"{path}: window {col}: {r} vs {len(inside)}")
    # Overlapping the window (end bounds ts through each track's longest slice).
    overlap = [s for s in sl if s[1] < hi and s[1] + s[2] > lo]
    for a, b in (("ts", "end"), ("+ts", "+end")):
        r = query(path, f"SELECT count(*) AS n FROM slice WHERE {a} < {hi} AND {b} > {lo}")[0]
        check(r["n"] == len(overlap), f"{path}: overlap {a} {b}: {r['n']} vs {len(overlap)}")
    r = query(path, f"SELECT count(*) AS n FROM slice WHERE end <= {hi} AND end >= {lo}")[0]
    check(r["n"] == sum(1 for s in sl if lo <= s[1] + s[2] <= hi), f"{path}: end window")
    r = query(path, f"SELECT count(*) AS n FROM slice WHERE ts > {lo} AND ts < {hi}")[0]
    check(r["n"] == sum(1 for s in sl if lo < s[1] < hi), f"{path}: open window")
    # Per track (numeric pid/tid), through the track table and the track_id push-down.
    want_tracks = defaultdict(int)
    for s in sl:
        want_tracks[s[0]] += 1
    tracks = query(path, "SELECT t.id, t.pid, t.tid, count(*) AS n FROM slice s "
                         "JOIN track t ON s.track_id = t.id GROUP BY t.id")
    for t in tracks:
        key = (str(t["pid"]), str(t["tid"]))
        if key in want_tracks and t["pid"] > -1000000:
            check(t["n"] == want_tracks[key], f"{path}: track {key}: {t['n']} vs {want_tracks[key]}")
        for col in ("track_id", "+track_id"):
            n = query(path, f"SELECT count(*) AS n FROM slice WHERE {col} = {t['id']}")[0]["n"]
            check(n == t["n"], f"{path}: {col} = {t['id']}")
    # Name and parent push-downs agree with the plain scans.
    name = max(want, key=lambda k: want[k][0])
    esc = name.replace("'", "''")
    for col in ("name", "+name"):
        n = query(path, f"SELECT count(*) AS n FROM slice WHERE {col} = '{esc}'")[0]["n"]
        check(n == want[name][0], f"{path}: {col} = {name!r}")
    a = query(path, "SELECT count(*) AS n, sum(c.dur) AS d FROM slice c JOIN slice p "
                    "ON c.parent_id = p.id")[0]
    b = query(path, "SELECT count(*) AS n, sum(c.dur) AS d FROM slice c JOIN slice p "
                    "ON +c.parent_id = +p.id")[0]
    c = query(path, "SELECT count(*) AS n, sum(dur) AS d FROM slice WHERE parent_id IS NOT NULL")[0]
    check(a == b == c, f"{path}: parent joins {a} {b} {c}")
    # ORDER BY / GROUP BY name delivered by the table (a sorted permutation) = SQLite's own sort.
    names = sorted((s[3] for s in sl), key=lambda n: n.encode())
    for order in ("name", "+name"):
        got = [r["name"] for r in query(path, f"SELECT name FROM slice ORDER BY {order}")]
        check(got == names, f"{path}: ORDER BY {order}")
        got = [r["name"] for r in query(path, f"SELECT name FROM slice ORDER BY {order} DESC")]
        check(got == names[::-1], f"{path}: ORDER BY {order} DESC")
    cats = sorted({s[4] for s in sl}, key=lambda n: n.encode())
    got = [r["category"] for r in query(path, "SELECT category FROM slice GROUP BY category")]
    check(got == cats, f"{path}: GROUP BY category")
    # Args: per-key counts of the X events' args, and the event_id push-down.
    want_args = defaultdict(int)
    for e in events:
        if e.get("ph") == "X":
            for k in (e.get("args") or {}):
                want_args[k] += 1
    got_args = {r["key"]: r["n"] for r in query(
        path, "SELECT key, count(*) AS n FROM args WHERE event_type = 'slice' GROUP BY key")}
    check(got_args == dict(want_args), f"{path}: args per key")
    a = query(path, "SELECT count(*) AS n FROM slice s JOIN args a ON a.event_id = s.id")[0]
    b = query(path, "SELECT count(*) AS n FROM slice s JOIN args a ON +a.event_id = +s.id")[0]
    check(a == b, f"{path}: args join {a} {b}")
    return want


def correlated(events):
    """(correlation, launch name, kernel name, launch ts, kernel ts, delay) by correlation id."""
    launches, work = {}, []
    for e in events:
        if e.get("ph") != "X" or "correlation" not in (e.get("args") or {}):
            continue
        if e.get("cat") in ("cuda_runtime", "cuda_driver"):
            launches[e["args"]["correlation"]] = e
        elif e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset"):
            work.append(e)
    out = set()
    for k in work:
        lc = launches.get(k["args"]["correlation"])
        if lc is None:
            continue
        lts, kts = ref.ns(lc["ts"]), ref.ns(k["ts"])
        out.add((int(k["args"]["correlation"]), lc["name"], k["name"], lts, kts,
                 kts - (lts + ref.ns(lc["dur"]))))
    return out


def check_launches(path):
    _, events = ref.load(path)
    want = correlated(events)
    rows = query(path, "SELECT correlation, launch_name, kernel_name, launch_ts, kernel_ts, delay "
                       "FROM launches")
    got = {(r["correlation"], r["launch_name"], r["kernel_name"], r["launch_ts"], r["kernel_ts"],
            r["delay"]) for r in rows}
    check(len(want) > 0 and got == want, f"{path}: launch -> kernel pairs "
          f"({len(got)} vs {len(want)}; {sorted(got ^ want)[:2]})")
    # The launch and kernel ids point at those slices.
    bad = query(path, "SELECT count(*) AS n FROM launches l JOIN slice a ON a.id = l.launch_id "
                      "JOIN slice k ON k.id = l.kernel_id WHERE a.ts != l.launch_ts "
                      "OR k.ts != l.kernel_ts OR k.name != l.kernel_name")[0]["n"]
    check(bad == 0, f"{path}: launches ids")


def check_export(path, want):
    with tempfile.TemporaryDirectory() as d:
        db = os.path.join(d, "t.sqlite")
        run("export", path, "-o", db)
        con = sqlite3.connect(db)
        got = {n: [c, t] for n, c, t in con.execute(
            "SELECT name, count(*), sum(dur) FROM slice GROUP BY name")}
        check(got == dict(want), f"{path}: export per-name")
        indexes = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='index'")}
        check({"slice_track_ts", "args_event", "launches_kernel"} <= indexes, f"indexes {indexes}")
        # Every table has the in-memory database's row count.
        for table in ("slice", "args", "track", "process", "flow", "instant", "counter", "ops",
                      "kernels", "steps", "launches", "thread", "gpu_stream", "stack_frame"):
            n = con.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
            m = query(path, f"SELECT count(*) AS n FROM {table}")[0]["n"]
            check(n == m, f"{path}: export {table}: {n} vs {m}")
        ops = con.execute("SELECT name, count, total_ns FROM ops").fetchall()
        mem = {(r["name"], r["count"], r["total_ns"]) for r in query(path, "SELECT * FROM ops")}
        check(set(ops) == mem, f"{path}: export ops")
        con.close()
        # CSV: one table read back with the csv module.
        out = os.path.join(d, "slice.csv")
        run("export", path, "-o", out, "--table", "slice")
        with open(out, newline="") as f:
            rows = list(csv.DictReader(f))
        sums = defaultdict(lambda: [0, 0])
        for r in rows:
            sums[r["name"]][0] += 1
            sums[r["name"]][1] += int(r["dur"])
        check(dict(sums) == dict(want), f"{path}: CSV per-name")
        run("export", path, "-o", os.path.join(d, "x.csv"), "--table", "nosuch", expect=2)
        check(not os.path.exists(os.path.join(d, "x.csv")), "no CSV written for a bad table")
    # `sql --csv` gives the same cells as `--json` (names with commas and quotes included).
    sql = "SELECT name, category, ts, dur, depth FROM slice ORDER BY id"
    text = run("sql", path, sql, "--csv").stdout
    rows = list(csv.DictReader(io.StringIO(text, newline="")))
    js = query(path, sql)
    check(len(rows) == len(js) and all(
        r["name"] == j["name"] and r["category"] == j["category"] and int(r["ts"]) == j["ts"]
        and int(r["dur"]) == j["dur"] for r, j in zip(rows, js)), f"{path}: CSV round trip")


def check_errors(path):
    p = run("sql", path, "SELECT name FORM slice", expect=2)  # FORM is an alias: "slice" is wrong
    check("syntax error" in p.stderr and "offset 17" in p.stderr and "^" in p.stderr,
          f"syntax error message: {p.stderr!r}")
    p = run("sql", path, "SELECT nosuch FROM slice", expect=2)
    check("no such column: nosuch" in p.stderr, p.stderr)
    for sql in ("DELETE FROM slice", "UPDATE slice SET dur = 0", "INSERT INTO track(id) VALUES (1)",
                "DROP TABLE slice", "CREATE TABLE x(a)", "ATTACH 'x.db' AS x"):
        p = run("sql", path, sql, expect=2)
        check("read-only" in p.stderr, f"{sql}: {p.stderr!r}")
    p = run("sql", path, "CREATE TEMP TABLE t AS SELECT 1 AS a; SELECT a FROM t", "--json")
    check(json.loads(p.stdout)["rows"] == [{"a": 1}], "temp tables are allowed")
    run("sql", os.path.join(DATA, "nosuch.json"), "SELECT 1", expect=2)
    # Ctrl-C stops a query that would never end.
    proc = subprocess.Popen([MLPROF, "sql", path, "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL "
                             "SELECT x + 1 FROM c) SELECT count(*) FROM c"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(1.0)
    proc.send_signal(signal.SIGINT)
    try:
        _, err = proc.communicate(timeout=30)
        check(proc.returncode == 130 and "interrupted" in err, f"SIGINT: {proc.returncode} {err!r}")
    except subprocess.TimeoutExpired:
        proc.kill()
        check(False, "SIGINT did not stop the query")


def check_inputs(path):
    """-f FILE, SQL on stdin, and the interactive prompt on a terminal (a pty)."""
    want = len(ref.slices(ref.load(path)[1]))
    with tempfile.TemporaryDirectory() as d:
        f = os.path.join(d, "q.sql")
        with open(f, "w") as out:
            out.write("-- a comment\nSELECT count(*) AS n\nFROM slice;\n")
        check(json.loads(run("sql", path, "-f", f, "--json").stdout)["rows"] == [{"n": want}],
              "-f FILE")
    p = subprocess.run([MLPROF, "sql", path, "--csv"], input="SELECT count(*) AS n FROM slice;",
                       capture_output=True, text=True)
    check(p.returncode == 0 and p.stdout.split() == ["n", str(want)], f"stdin: {p.stdout!r}")
    import pty
    master, slave = pty.openpty()
    proc = subprocess.Popen([MLPROF, "sql", path, "--csv"], stdin=slave, stdout=slave,
                            stderr=subprocess.PIPE)
    os.close(slave)
    os.write(master, b"SELECT count(*)\n  AS n FROM slice;\nSELECT nosuch;\n.tables\n.quit\n")
    out = b""
    deadline = time.time() + 30
    while time.time() < deadline:
        try:
            chunk = os.read(master, 65536)
        except OSError:
            break
        if not chunk:
            break
        out += chunk
    proc.wait(timeout=30)
    os.close(master)
    text = out.decode(errors="replace")
    err = proc.stderr.read().decode()
    check(proc.returncode == 0 and f"n\r\n{want}\r\n" in text and "launches" in text
          and "no such column: nosuch" in err, f"interactive: {text!r} {err!r}")


def check_directory(paths):
    with tempfile.TemporaryDirectory() as d:
        want = {}
        for rank, p in enumerate(paths):
            os.symlink(os.path.abspath(p), os.path.join(d, f"rank-{rank}.json.gz"))
            want[rank] = len(ref.slices(ref.load(p)[1]))
        got = {r["rank"]: r["n"] for r in query(d, "SELECT rank, count(*) AS n FROM slice GROUP BY rank")}
        check(got == want, f"directory ranks {got} vs {want}")
        r = query(d, "SELECT count(DISTINCT id) AS ids, count(*) AS n FROM slice")[0]
        check(r["ids"] == r["n"], "ids unique over ranks")
        r = query(d, "SELECT count(*) AS n FROM slice c JOIN slice p ON c.parent_id = p.id "
                     "WHERE c.rank != p.rank OR c.track_id != p.track_id")[0]
        check(r["n"] == 0, "parents stay in their rank and track")
        check("rank" in query(d, "SELECT * FROM track LIMIT 1")[0], "rank column shown")
        for rank, n in want.items():
            for col in ("rank", "+rank"):
                got = query(d, f"SELECT count(*) AS n FROM slice WHERE {col} = {rank}")[0]["n"]
                check(got == n, f"{col} = {rank}: {got} vs {n}")


def v1_flows(path):
    """(source slice, destination slice, ts_in ns, dst_next) per flow hop of a Chrome JSON with v1
    flows (s/t/f by id, in time order), by the Chrome/Perfetto rule: s and t bind the deepest
    slice enclosing them on their thread; an f with "bp": "e" too; an f without it binds the next
    slice beginning on its thread at or after it (the outermost if several), and ts_in becomes
    that slice's start (dst_next 1; None when no slice follows)."""
    with open(path) as f:
        d = json.load(f)
    events = d["traceEvents"] if isinstance(d, dict) else d
    ns = lambda us: int(round(float(us) * 1000))  # noqa: E731
    slices = defaultdict(list)  # (pid, tid) -> [(ts, end, name)]
    for e in events:
        if e.get("ph") == "X":
            slices[(e["pid"], e["tid"])].append((ns(e["ts"]), ns(e["ts"]) + ns(e["dur"]), e["name"]))

    def enclosing(thread, ts):
        inside = [s for s in slices[thread] if s[0] <= ts < s[1]]
        return min(inside, key=lambda s: s[1] - s[0])[2] if inside else None

    chains = defaultdict(list)
    for e in events:
        if e.get("ph") in ("s", "t", "f"):
            chains[e["id"]].append(e)
    out = []
    for chain in chains.values():
        chain.sort(key=lambda e: ns(e["ts"]))
        for a, b in zip(chain, chain[1:]):
            src = enclosing((a["pid"], a["tid"]), ns(a["ts"]))
            ts = ns(b["ts"])
            if b["ph"] == "f" and b.get("bp") != "e":
                after = [s for s in slices[(b["pid"], b["tid"])] if s[0] >= ts]
                first = min(after, key=lambda s: (s[0], -(s[1] - s[0])), default=None)
                out.append((src, first[2] if first else None, first[0] if first else ts, 1))
            else:
                out.append((src, enclosing((b["pid"], b["tid"]), ts), ts, 0))
    return sorted(out, key=repr)


def check_flow_dst_next(path):
    """The flow table's dst_next: 1 for a v1 flow end without "bp": "e" (bound to the next
    slice), 0 for the others; the bound slices and ts_in as the rule computed in Python."""
    want = v1_flows(path)
    rows = query(path, "SELECT so.name AS src, si.name AS dst, f.ts_in, f.dst_next FROM flow f "
                       "LEFT JOIN slice so ON so.id = f.slice_out "
                       "LEFT JOIN slice si ON si.id = f.slice_in")
    got = sorted(((r["src"], r["dst"], r["ts_in"], r["dst_next"]) for r in rows), key=repr)
    check(got == want, f"{os.path.basename(path)}: flow dst_next {got} == {want}")
    check(any(w[3] for w in want) and not all(w[3] for w in want),
          f"{os.path.basename(path)}: has flows with and without dst_next")


cpu = os.path.join(DATA, "mlp_bs64.json.gz")
kineto = os.path.join(DATA, "a_mlp_b32_w64.kineto.json.gz")
simple_add = shared_path(GPU + "simple_add/benchmark_result_493459_1694039959_trace.json.gz")
alexnet = shared_path(GPU + "alexnet/benchmark_result_2869224_1695835535_trace.json.gz")
check("rank" not in query(cpu, "SELECT * FROM slice LIMIT 1")[0], "rank hidden for one file")
for p in (cpu, kineto):
    check_export(p, check_slices(p))
if simple_add:
    check_export(simple_add, check_slices(simple_add))
    check_launches(simple_add)
if alexnet:
    check_slices(alexnet)
    check_launches(alexnet)
with tempfile.TemporaryDirectory() as d:
    flows = os.path.join(d, "flows.json")
    with open(flows, "w") as f:
        json.dump([{"ph": "X", "name": "src", "pid": 1, "tid": 1, "ts": 0, "dur": 10},
                   {"ph": "X", "name": "encl", "pid": 1, "tid": 2, "ts": 0, "dur": 10},
                   {"ph": "X", "name": "next", "pid": 1, "tid": 2, "ts": 12, "dur": 4},
                   {"ph": "X", "name": "next_child", "pid": 1, "tid": 2, "ts": 12, "dur": 1},
                   {"ph": "X", "name": "lone", "pid": 1, "tid": 3, "ts": 0, "dur": 10}]
                  + [{"ph": "s", "id": i, "cat": "c", "pid": 1, "tid": 1, "ts": i} for i in (1, 2, 3)]
                  + [{"ph": "f", "id": 1, "cat": "c", "pid": 1, "tid": 2, "ts": 5},  # next
                     {"ph": "f", "id": 2, "cat": "c", "pid": 1, "tid": 2, "ts": 6, "bp": "e"},
                     {"ph": "f", "id": 3, "cat": "c", "pid": 1, "tid": 3, "ts": 20}],  # none
                  f)
    check_flow_dst_next(flows)
    check(v1_flows(flows) == sorted([("src", "next", 12000, 1), ("src", "encl", 6000, 0),
                                     ("src", None, 20000, 1)], key=repr), "flows.json cases")
peer_flows = shared_path("peers/perfetto/traces/flow_events_json_v1.json")
if peer_flows:  # Perfetto's own v1 flow test trace: SenderA -> OtherSlice -> SomeSlice, SenderB -> Blergh
    check_flow_dst_next(peer_flows)
check_errors(cpu)
check_inputs(cpu)
check_directory([cpu, kineto])
finish()
