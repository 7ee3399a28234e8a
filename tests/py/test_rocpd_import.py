"""rocprofv3's rocpd SQLite output (issue 34 item 2): a synthetic database written from
rocprofiler-sdk's documented schema (rocpd_synthetic.py: uuid-suffixed tables with views over
them, as rocprofv3 writes; and the same without the views) is read by column name. Kernels per
name and per GPU, GPU busy time, copy bytes, API calls, markers, launch flows, memory and agents
equal a computation with Python over the rows; a damaged database is one line and exit 2."""
import collections
import json
import os
import sqlite3
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
from checks import check, finish, mlprof_json  # noqa: E402
from nsys_reference import union_ns  # noqa: E402
import rocpd_synthetic as syn  # noqa: E402

MLPROF = sys.argv[1]


def sql(path, query):
    out = subprocess.run([MLPROF, "sql", path, query, "--json"], check=True, capture_output=True,
                         text=True).stdout
    return json.loads(out)["rows"]


def reference(path):
    """Expected values from the database itself, with sqlite3 (no mlprof)."""
    db = sqlite3.connect(path)
    s = dict(db.execute("select id, string from rocpd_string"))
    gpu = dict(db.execute("select id, type_index from rocpd_info_agent where type = 'GPU'"))
    sym = {i: d or k for i, d, k in db.execute(
        "select id, display_name, kernel_name from rocpd_info_kernel_symbol")}
    ev = {i: (s.get(c), corr) for i, c, corr in db.execute(
        "select id, category_id, correlation_id from rocpd_event")}
    out = {"by_name": {}, "per_dev": collections.Counter(), "copy_bytes": 0, "copies": 0}
    iv = collections.defaultdict(list)
    for a, k, st, en in db.execute("select agent_id, kernel_id, start, end from rocpd_kernel_dispatch"):
        c, t = out["by_name"].get(sym[k], (0, 0))
        out["by_name"][sym[k]] = (c + 1, t + en - st)
        out["per_dev"][gpu[a]] += 1
        iv[gpu[a]].append((st, en))
    for d, sa, st, en, size in db.execute(
            "select dst_agent_id, src_agent_id, start, end, size from rocpd_memory_copy"):
        dev = gpu[d] if d in gpu else gpu[sa]
        iv[dev].append((st, en))
        out["copy_bytes"] += size
        out["copies"] += 1
    out["busy"] = {d: union_ns(v) for d, v in iv.items()}
    cats = [ev[e][0] for (e,) in db.execute("select event_id from rocpd_region")]
    out["markers"] = sum(1 for c in cats if "MARKER" in c)
    out["api_calls"] = len(cats) - out["markers"]
    api_corr = {ev[e][1] for (e,) in db.execute("select event_id from rocpd_region")
                if "MARKER" not in ev[e][0]}
    gpu_work = [e for (e,) in db.execute(
        "select event_id from rocpd_kernel_dispatch union all select event_id from rocpd_memory_copy")]
    out["flows"] = sum(1 for e in gpu_work if ev[e][1] in api_corr)
    # Device memory: REAL allocations live at the end, per GPU; frees take the allocation's size.
    live, peak, cur = {}, collections.Counter(), collections.Counter()
    for a, typ, lvl, st, addr, size in db.execute(
            "select agent_id, type, level, start, address, size from rocpd_memory_allocate "
            "where level = 'REAL' order by start"):
        if typ == "ALLOC":
            live[addr] = (gpu[a], size)
            cur[gpu[a]] += size
        elif addr in live:
            d, n = live.pop(addr)
            cur[d] -= n
        peak[gpu[a]] = max(peak[gpu[a]], cur[gpu[a]])
    out["mem_peak"], out["mem_end"] = dict(peak), dict(cur)
    out["devices"] = [p for (p,) in db.execute(
        "select product_name from rocpd_info_agent where type = 'GPU' order by type_index")]
    return out


with tempfile.TemporaryDirectory() as tmp:
    for label, views in (("views", True), ("tables only", False)):
        path = os.path.join(tmp, f"run_{label.replace(' ', '_')}.db")
        syn.build(path, views=views)
        refdb = os.path.join(tmp, "ref.db")
        if not os.path.exists(refdb):
            syn.build(refdb)
        ref = reference(refdb)
        kernels = mlprof_json(MLPROF, "kernels", path)
        got = {k["name"]: (k["count"], k["total_ns"]) for k in kernels["kernels"] if k["kind"] == "kernel"}
        check(got == ref["by_name"], f"{label}: per-name kernels {got}, expected {ref['by_name']}")
        per_dev = sql(path, "select t.device, count(*) n from slice s join track t on t.id = s.track_id "
                      "where s.category = 'kernel' group by 1")
        check({r["device"]: r["n"] for r in per_dev} == dict(ref["per_dev"]),
              f"{label}: kernels per GPU {per_dev}, expected {dict(ref['per_dev'])}")
        g = mlprof_json(MLPROF, "gpu", path)
        busy = {d["device"]: d["gpu_busy_ns"] for d in g["devices"]}
        check(busy == ref["busy"], f"{label}: GPU busy {busy}, expected {ref['busy']}")
        copied = sum(m["bytes"] for m in g["memory_bandwidth"] if m["kind"].startswith("Memcpy"))
        check(copied == ref["copy_bytes"], f"{label}: copy bytes {copied}, expected {ref['copy_bytes']}")
        cats = {r["category"]: r["n"] for r in sql(path, "select category, count(*) n from slice group by 1")}
        check(cats.get("cuda_runtime", 0) == ref["api_calls"], f"{label}: API calls {cats}, expected {ref['api_calls']}")
        check(cats.get("cpu_op", 0) + cats.get("user_annotation", 0) == ref["markers"],
              f"{label}: markers {cats}, expected {ref['markers']}")
        check(cats.get("gpu_memcpy", 0) == ref["copies"], f"{label}: copies {cats}")
        flows = sql(path, "select a.name src, k.category dst from flow f join slice a on a.id = f.slice_out "
                    "join slice k on k.id = f.slice_in")
        check(len(flows) == ref["flows"], f"{label}: {len(flows)} launch flows, expected {ref['flows']}")
        check(all(f["src"].startswith("hip") and f["dst"] in ("kernel", "gpu_memcpy") for f in flows),
              f"{label}: flows join HIP calls to GPU work: {flows[:3]}")
        s = mlprof_json(MLPROF, "summary", path)
        check(s["format"] == "rocpd" and len(s["devices"]) == len(ref["devices"]) and
              all(n in d for n, d in zip(ref["devices"], s["devices"])) and
              "kernel dispatches 12" in s.get("import_line", ""),
              f"{label}: summary {s['format']} {s['devices']} {s.get('import_line')}")
        mem = {d["device_id"]: d for d in mlprof_json(MLPROF, "memory", path)["devices"]
               if d["device_type"] == 1}
        check({k: d["peak_allocated"] for k, d in mem.items()} == ref["mem_peak"] and
              {k: d["final_allocated"] for k, d in mem.items()} == ref["mem_end"],
              f"{label}: GPU memory peak/final {[(k, d['peak_allocated'], d['final_allocated']) for k, d in mem.items()]}, "
              f"expected {ref['mem_peak']} {ref['mem_end']}")
        for cmd in (["analyze", path], ["report", path, "-o", os.devnull]):
            r = subprocess.run([MLPROF, *cmd], capture_output=True, text=True)
            check(r.returncode == 0, f"{label}: {cmd[0]} exit {r.returncode}: {r.stderr[-300:]}")

    # Damage: a cut database, and a rocpd database whose dispatch table lacks a needed column.
    path = os.path.join(tmp, "run_views.db")
    cut = os.path.join(tmp, "cut.db")
    data = open(path, "rb").read()
    open(cut, "wb").write(data[: len(data) // 2])
    bad = os.path.join(tmp, "bad.db")
    syn.build(bad)
    db = sqlite3.connect(bad)
    db.executescript(f'DROP VIEW rocpd_kernel_dispatch; DROP TABLE "rocpd_kernel_dispatch{syn.UUID}";'
                     f'CREATE TABLE "rocpd_kernel_dispatch{syn.UUID}" (id INTEGER PRIMARY KEY, start, end);'
                     f'INSERT INTO "rocpd_kernel_dispatch{syn.UUID}" VALUES (1, 10, 20);')
    db.close()
    for f in (cut, bad):
        r = subprocess.run([MLPROF, "summary", f], capture_output=True, text=True)
        check(r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and f in r.stderr,
              f"{os.path.basename(f)}: exit {r.returncode}: {r.stderr!r}")
finish()
