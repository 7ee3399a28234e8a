"""`mlprof compare --json` matches rows whose names differ only by run-specific tokens (object
addresses, Jupyter kernel ids), lists python_function rows apart from ops, and lists every row
(more than the text's 40). Two traces written here; the expected grouping is done by this
script's own regular expressions (the rule of docs/analysis.md, compare)."""
import json
import os
import re
import subprocess
import sys
import tempfile
from checks import check, finish  # noqa: E402

MLPROF = sys.argv[1]


def key(name):
    name = re.sub(r"(?<![0-9a-fA-F])0[xX][0-9a-fA-F]{6,}", "0x*", name)
    name = re.sub(r"ipykernel_[0-9]+", "ipykernel_*", name)
    return re.sub(r"<ipython-input-[0-9]+-", "<ipython-input-*-", name)


def trace(type_addr, obj_addr, kernel_pid, cell):
    """60 Python functions (59 after matching) (addresses of this 'process') and 3 ops, 5 calls each."""
    names = [f"<built-in method op{i} of type object at {type_addr}>" for i in range(50)]
    names += [f"<built-in method add_ of Tensor object at {hex(obj_addr + 16 * i)}>" for i in range(2)]
    names += [f"/tmp/ipykernel_{kernel_pid}/3141592653.py({i}): f{i}" for i in range(4)]
    names += [f"<ipython-input-{cell}-1a2b3c4d5e6f>({i}): g{i}" for i in range(4)]
    events, ts = [], 0
    for rep in range(5):
        for i, n in enumerate(names):
            events.append({"ph": "X", "cat": "python_function", "name": n, "pid": 1, "tid": 1,
                           "ts": ts, "dur": 10 + i % 7})
            ts += 20
        for op, dur in [("aten::mm", 30), ("aten::relu", 5), ("kernel<0x10>", 7)]:
            events.append({"ph": "X", "cat": "cpu_op", "name": op, "pid": 1, "tid": 1, "ts": ts,
                           "dur": dur})
            ts += 40
    return {"traceEvents": events}, names


with tempfile.TemporaryDirectory() as tmp:
    base_doc, base_names = trace("0x7f1f3132d1e0", 0x7FA23AE98AF0, 1234, 7)
    new_doc, new_names = trace("0x7fb4c992d1e0", 0x7FB4A7D804B0, 98765, 12)
    base, new = os.path.join(tmp, "base.json"), os.path.join(tmp, "new.json")
    for path, doc in [(base, base_doc), (new, new_doc)]:
        with open(path, "w") as f:
            json.dump(doc, f)
    # Independent expectation: the groups by normalized key, and their per-trace totals.
    expect = {}
    for doc, side in [(base_doc, "base"), (new_doc, "new")]:
        for e in doc["traceEvents"]:
            row = expect.setdefault((key(e["name"]), e["cat"]), {"base": 0, "new": 0})
            row[side] += e["dur"]
    check(len({key(n) for n in base_names}) == 59, "the two add_ objects share a key")
    got = json.loads(subprocess.run([MLPROF, "compare", base, new, "--json"], check=True,
                                    capture_output=True, text=True).stdout)
    rows = got["ops"] + got["python_functions"]
    check(len(got["python_functions"]) == 59, f"59 python rows (got {len(got['python_functions'])})")
    check(all(r["category"] == "python_function" for r in got["python_functions"]),
          "python_functions holds only python_function rows")
    check(sorted(r["name"] for r in got["ops"]) == ["aten::mm", "aten::relu", "kernel<0x10>"],
          f"ops: {[r['name'] for r in got['ops']]}")
    check(len(rows) == len(expect), f"{len(rows)} rows, expected {len(expect)}")
    for r in rows:
        check(r["verdict"] not in ("added", "removed"), f"{r['name']} matched")
        e = expect.get((key(r["name"]), r["category"]))
        check(e is not None and e["base"] == r["base_total_ns"] // 1000 and
              e["new"] == r["new_total_ns"] // 1000, f"{r['name']}: totals")
        check(r["name"] in base_names or r["category"] != "python_function",
              f"{r['name']}: shown as the base spells it")
    # --top N cuts the JSON when given; --python-in-ops puts the rows back in one table.
    top = json.loads(subprocess.run([MLPROF, "compare", base, new, "--json", "--top", "5"],
                                    check=True, capture_output=True, text=True).stdout)
    check(len(top["python_functions"]) == 5, "--top 5 cuts the JSON")
    one = json.loads(subprocess.run([MLPROF, "compare", base, new, "--json", "--python-in-ops"],
                                    check=True, capture_output=True, text=True).stdout)
    check(len(one["ops"]) == 62 and not one["python_functions"], "--python-in-ops: one table")
    text = subprocess.run([MLPROF, "compare", base, new], check=True, capture_output=True,
                          text=True).stdout
    check("(19 more rows: --top 0 or --json)" in text, "the text shows 40 python rows")
finish()
