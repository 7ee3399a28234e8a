"""What the serve big-trace tests share (issue 33): a Kineto-shaped trace from
bench/gen_big_trace.py, and an independent reading of its slices straight from the JSON."""
import json
import os
import subprocess
import sys
from decimal import Decimal

GEN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench", "gen_big_trace.py")


def generate(n, path):
    subprocess.run([sys.executable, GEN, str(n), path], check=True, capture_output=True)
    return path


def ns(us):
    """Kineto's microseconds (three decimals) in whole ns, exactly."""
    return int(Decimal(str(us)) * 1000)


def slices_by_lane(path):
    """{(pid, tid): [(ts_ns, dur_ns, name), ...]} of the complete ('X') events, by start."""
    with open(path) as f:
        doc = json.load(f, parse_float=Decimal)
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    lanes = {}
    for e in events:
        if e.get("ph") != "X" or "dur" not in e:
            continue
        lanes.setdefault((e["pid"], e["tid"]), []).append((ns(e["ts"]), ns(e["dur"]), e["name"]))
    for v in lanes.values():
        v.sort()
    return lanes
