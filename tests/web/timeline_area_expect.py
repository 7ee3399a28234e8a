#!/usr/bin/env python3
"""Per-name count and total duration of the slices of one thread or stream that overlap a time
range, straight from the trace JSON (the independent side of the timeline's area-selection test).

    timeline_area_expect.py TRACE.json[.gz] PID TID T0_NS T1_NS

A slice is an 'X' event, or a matched 'B'/'E' pair, on (pid, tid); it overlaps [T0, T1) when it
starts before T1 and ends after T0 (Perfetto's area selection: each counts whole). Prints JSON
{name: {"count": n, "total_ns": ns, "in_range_ns": ns}}; in_range_ns: the part of those slices
inside [T0, T1).
"""
import gzip
import json
import sys


def main():
    path, pid, tid, t0, t1 = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
    opener = gzip.open if path.endswith('.gz') else open
    with opener(path, 'rt') as f:
        doc = json.load(f)
    events = doc['traceEvents'] if isinstance(doc, dict) else doc
    out = {}
    stack = []
    for e in events:
        if str(e.get('pid')) != pid or str(e.get('tid')) != tid:
            continue
        ph = e.get('ph')
        if ph == 'X':
            ts = round(float(e['ts']) * 1000)
            dur = round(float(e.get('dur', 0)) * 1000)
        elif ph == 'B':
            stack.append(e)
            continue
        elif ph == 'E' and stack:
            b = stack.pop()
            ts = round(float(b['ts']) * 1000)
            dur = round(float(e['ts']) * 1000) - ts
            e = b
        else:
            continue
        if ts < t1 and ts + dur > t0:
            g = out.setdefault(e['name'], {'count': 0, 'total_ns': 0, 'in_range_ns': 0})
            g['count'] += 1
            g['total_ns'] += dur
            g['in_range_ns'] += min(ts + dur, t1) - max(ts, t0)
    json.dump(out, sys.stdout)


if __name__ == '__main__':
    main()
