"""Independent reference computation over Chrome/Kineto trace JSON (stdlib only).

Used by the tests to get expected numbers without mlprof: per-op count / total / self time,
events per category, profiler steps. Timestamps are read as Decimal (never float) so float-ns
Kineto traces keep exact nanoseconds: ns = round_half_up(us * 1000).
"""
import gzip
import json
from collections import Counter, defaultdict
from decimal import Decimal, ROUND_HALF_UP


def load(path):
    opener = gzip.open if open(path, "rb").read(2) == b"\x1f\x8b" else open
    with opener(path, "rt") as f:
        doc = json.load(f, parse_float=Decimal)
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    return doc, events


def ns(v):
    return int((Decimal(v) * 1000).quantize(Decimal(1), rounding=ROUND_HALF_UP))


def slices(events):
    """Complete slices: X events plus matched B/E pairs, as (track, ts, dur, name, cat)."""
    out = []
    open_by_track = defaultdict(list)
    for e in events:
        ph = e.get("ph")
        track = (str(e.get("pid")), str(e.get("tid", 0)))
        if ph == "X":
            out.append((track, ns(e["ts"]), max(0, ns(e["dur"])), e.get("name", ""), e.get("cat", "")))
        elif ph == "B":
            open_by_track[track].append(e)
        elif ph == "E" and open_by_track[track]:
            b = open_by_track[track].pop()
            out.append((track, ns(b["ts"]), ns(e["ts"]) - ns(b["ts"]), b.get("name", ""), b.get("cat", "")))
    return out


def self_times(sl):
    """Self time of each slice: duration minus its direct children's (clipped) time, nesting
    per track by start time, longest first."""
    by_track = defaultdict(list)
    for i, s in enumerate(sl):
        by_track[s[0]].append(i)
    self_ns = [s[2] for s in sl]
    for idx in by_track.values():
        idx.sort(key=lambda i: (sl[i][1], -sl[i][2], i))
        stack = []
        for i in idx:
            ts, dur = sl[i][1], sl[i][2]
            while stack and sl[stack[-1]][1] + sl[stack[-1]][2] <= ts and sl[stack[-1]][1] != ts:
                stack.pop()
            if stack:
                p = stack[-1]
                self_ns[p] -= min(ts + dur, sl[p][1] + sl[p][2]) - ts
            stack.append(i)
    return [max(0, x) for x in self_ns]


def op_table(sl, merge_steps=False):
    """{(name, cat): (count, total_ns, self_ns)}; merge_steps folds ProfilerStep#N into one
    "ProfilerStep#*" row per category (as `mlprof summary` shows them). Kineto's own
    "PyTorch Profiler (0)" envelope (category "Trace", alone on its thread) is not an op."""
    selfs = self_times(sl)
    table = defaultdict(lambda: [0, 0, 0])
    for s, self_ns in zip(sl, selfs):
        if s[4] == "Trace":
            continue
        name = "ProfilerStep#*" if merge_steps and s[3].startswith("ProfilerStep#") else s[3]
        row = table[(name, s[4])]
        row[0] += 1
        row[1] += s[2]
        row[2] += self_ns
    return {k: tuple(v) for k, v in table.items()}


def categories(events, sl):
    """Slices and instants per category ([memory] instants are memory events, not instants)."""
    c = Counter(s[4] for s in sl)
    for e in events:
        if e.get("ph") in ("i", "I") and e.get("name") != "[memory]":
            c[e.get("cat", "")] += 1
    return c


def steps(sl):
    return len({s[3] for s in sl if s[3].startswith("ProfilerStep#")})
