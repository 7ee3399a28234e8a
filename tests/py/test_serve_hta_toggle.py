"""The GPU tab's HTA toggle in `mlprof serve` (issue 28): /api/profiler/{gpu,kernels}?trace=T&
hta_compatible=1 is `mlprof gpu|kernels T --hta-compatible --json`, and without the parameter (or
with another value) the default JSON; the HTA numbers match HTA v0.6.1's published idle breakdown
(shared/traces/reference). The report's data carries the same JSON under hta_compatible.
Usage: test_serve_hta_toggle.py MLPROF DATA_DIR"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import urllib.parse

MLPROF = sys.argv[1]
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from shared_data import require, shared_path  # noqa: E402
from checks import check, finish  # noqa: E402
from serve_process import Serve  # noqa: E402

trace = require("traces/kineto-gpu/trace_diff/control/control.json.gz")
reference = shared_path("traces/reference/trace_diff_control.json")


def cli(cmd, *args):
    p = subprocess.run([MLPROF, cmd, trace, *args, "--json"], capture_output=True, check=True)
    return json.loads(p.stdout)


tmp = tempfile.mkdtemp(prefix="mlprof-hta-")
try:
    shutil.copy(trace, os.path.join(tmp, "control.json.gz"))
    want = {(c, h): cli(c, *(["--hta-compatible"] if h else [])) for c in ("gpu", "kernels") for h in (False, True)}
    check(want[("gpu", True)] != want[("gpu", False)], "the HTA JSON differs from the default on this trace")
    with Serve(MLPROF, tmp) as srv:
        for c in ("gpu", "kernels"):
            for query, h in (("", False), ("&hta_compatible=1", True), ("&hta_compatible=0", False)):
                status, _, body = srv.get(f"/api/profiler/{c}?trace=control.json.gz{query}")
                check(status == 200, f"{c}{query}: HTTP {status}")
                check(json.loads(body) == want[(c, h)], f"{c}{query} equals mlprof {c}{' --hta-compatible' if h else ''} --json")
        status, _, body = srv.get("/api/profiler/ops?trace=control.json.gz&hta_compatible=1")
        check(status == 200, f"ops with hta_compatible=1: HTTP {status} (the parameter is only the GPU tab's)")
    # The report's data: the same JSON under hta_compatible.
    out = os.path.join(tmp, "r.html")
    subprocess.run([MLPROF, "report", trace, "-o", out], capture_output=True, check=True)
    html = open(out, encoding="utf-8").read()
    m = re.search(r'<script id="mlprof-data" type="application/json">(.*?)</script>', html, re.S)
    if m:
        data = json.loads(m.group(1))  # "<\\/" is JSON's escaped "/"
        check(data.get("hta_compatible", {}).get("gpu") == want[("gpu", True)], "report data hta_compatible.gpu")
        check(data.get("hta_compatible", {}).get("kernels") == want[("kernels", True)], "report data hta_compatible.kernels")
    else:
        check(False, "the report's data block was not found")
    if reference:
        ref = json.load(open(reference))
        got = {(s["stream"], k): s[k]["time_ns"] for s in want[("gpu", True)]["idle_time_breakdown"]
               for k in ("host_wait", "kernel_wait", "other")}
        for r in ref["idle_time_breakdown"]:
            k = (r["stream"], r["idle_category"])
            check(k in got and abs(got[k] / 1e3 - r["idle_time"]) <= 1, f"HTA reference {k}: {got.get(k)} ns vs {r['idle_time']} us")
finally:
    shutil.rmtree(tmp, ignore_errors=True)
finish()
