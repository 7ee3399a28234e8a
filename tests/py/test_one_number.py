"""One number per quantity (issue 25 item 4): a quantity mlprof shows has the same value in the
CLI text, the JSON and the report's data, and where two definitions differ each is labelled.

On the real traces the issue quoted:
- the import line: "events read" = kept + second ends of flows + unmatched (skipped) + other,
  with the parts counted here from the trace file itself (ph s/f/M), in text, JSON and report;
- GPU busy/idle and communication: `mlprof gpu` text's temporal table, its JSON, the report
  data and the bottleneck findings' evidence give one value each;
- the launch/idle finding's host-wait evidence is the device's idle time waiting on the host,
  never more than the GPU idle time beside it (it read 2.021 s next to 732 ms of idle).
Skips (exit 77) without the shared data."""
import gzip
import json
import os
import re
import subprocess
import sys

MLPROF = sys.argv[1]
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from shared_data import shared_path  # noqa: E402
from checks import check, finish  # noqa: E402

TRACES = [
    "traces/kineto-gpu/df_index_resolver/df_index_resolver.json.gz",
    "traces/modules/mi300_resnet_act_checkpoint.json.gz",
    "traces/modules/b200_gptoss_vllm_eager_trace.json.gz",
    "traces/kineto-gpu/trace_file_list/inference_rank_1.json.gz",
]


def run(*args):
    r = subprocess.run([MLPROF, *args], capture_output=True, text=True)
    check(r.returncode == 0, f"mlprof {' '.join(args)}: exit {r.returncode}: {r.stderr[:200]}")
    return r.stdout


for rel in TRACES:
    path = shared_path(rel)
    if path is None:
        continue
    with gzip.open(path) as fh:
        doc = json.load(fh)
    events = doc["traceEvents"]
    ph = {}
    for e in events:
        ph[e.get("ph")] = ph.get(e.get("ph"), 0) + 1
    report = json.loads(run("report", path, "--data-json"))["analyses"]

    # --- the import line --------------------------------------------------------------------
    summary = json.loads(run("summary", path, "--json"))
    acc = summary.get("events_read_account")
    if check(acc is not None, f"{rel}: summary has events_read_account"):
        check(acc["read"] == len(events), f"{rel}: events read {acc['read']} vs {len(events)} in traceEvents")
        check(acc["read"] == acc["kept"] + acc["flow_ends"] + acc["unmatched"] + acc["other"],
              f"{rel}: read = kept + flow ends + unmatched + other: {acc}")
        check(acc["kept"] == summary["events"]["total"], f"{rel}: kept is the events total")
        if True:  # other: metadata, E of B/E pairs, flow ends that joined nothing
            check(acc["other"] >= ph.get("M", 0), f"{rel}: other {acc['other']} >= metadata events {ph.get('M', 0)}")
        check(acc["flow_ends"] + acc["unmatched"] >= ph.get("f", 0) - ph.get("s", 0),
              f"{rel}: flow ends + unmatched cover the f events")
        text = run("summary", path)
        line = f"events read {acc['read']} = {acc['kept']} kept + {acc['flow_ends']} second ends of flows + {acc['unmatched']} unmatched"
        check(line in text, f"{rel}: summary text explains the count: {line!r}")
        check(report["summary"].get("events_read_account") == acc, f"{rel}: report data has the same account")

    # --- GPU busy / idle / communication -----------------------------------------------------
    gpu = json.loads(run("gpu", path, "--json"))
    tb = gpu["temporal_breakdown"]
    check(report["gpu"]["temporal_breakdown"] == tb, f"{rel}: report's temporal breakdown is gpu --json's")
    text = run("gpu", path)
    # The temporal table: a header (device span compute comm memcpy memset idle non-compute),
    # a rule, then one row per device.
    lines = text.splitlines()
    head = next((i for i, l in enumerate(lines) if l.split()[:3] == ["device", "span", "compute"]), None)
    if check(head is not None, f"{rel}: gpu text has the temporal table"):
        cols = lines[head].split()
        row = lines[head + 2].split()
        # "GPU 1 1.733 s 35.81% ...": the device label and the span take two fields each.
        vals = dict(zip(cols[2:], row[4:]))
        for col, key in [("idle", "idle_pct"), ("comm", "communication_pct"), ("compute", "compute_pct")]:
            shown = vals.get(col, "").rstrip("%")
            check(shown and abs(float(shown) - tb[key]) <= 0.005 + 1e-9, f"{rel}: gpu text {col} {shown}% vs JSON {tb[key]}")
    b = json.loads(run("bottlenecks", path, "--json"))
    for f in b["findings"]:
        ev = f["evidence"]
        if "gpu_idle_pct" in ev:
            check(ev["gpu_idle_pct"] == tb["idle_pct"], f"{rel}: {f['kind']} idle {ev['gpu_idle_pct']} vs gpu {tb['idle_pct']}")
            check(ev["gpu_idle_ns"] == tb["idle_ns"], f"{rel}: {f['kind']} idle ns vs gpu")
            check(ev.get("gpu_idle_waiting_on_host_ns", 0) <= ev["gpu_idle_ns"] + 1,
                  f"{rel}: host-wait evidence {ev.get('gpu_idle_waiting_on_host_ns')} <= GPU idle {ev['gpu_idle_ns']}")
            check("host_wait_ns" not in ev, f"{rel}: no per-stream host-wait sum beside the device idle")
        if "communication_pct" in ev:
            check(ev["communication_pct"] == tb["communication_pct"],
                  f"{rel}: {f['kind']} communication {ev['communication_pct']} vs gpu {tb['communication_pct']}")
    check(report["bottlenecks"] == b, f"{rel}: report's findings are bottlenecks --json's")
finish()
