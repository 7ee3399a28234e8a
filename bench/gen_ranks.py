#!/usr/bin/env python3
"""Makes N rank traces of a distributed job from one real rank trace, with known answers.

Every rank gets the source's events with:
  * its rank id and world size in distributedInfo, and "Group size" (and, up to 64 ranks,
    "Process Group Ranks") on the collective kernels rewritten for N ranks;
  * its clock shifted by a whole number of microseconds drawn per rank in [-skew, +skew]
    (baseTimeNanoseconds moves the other way, so base + ts is unchanged and the true answer of
    a base-time alignment is offset 0; --no-base-time drops the key, so the ranks must be
    aligned at collective ends);
  * on --delay-rank R: rank R arrives --delay-us later at every communication kernel (its
    kernel keeps its duration and starts that much later; the other ranks' kernels wait for it,
    ending that much later too, but never past the start of the next call on their stream),
    so R is the last rank at every collective by exactly the delay;
  * --jitter-us J: every other rank's arrival moves later by up to J us (at most half the
    kernel; seeded), so the last rank is R by the delay minus at most J.
Problems on purpose: --duplicate R writes a second trace claiming rank R; --missing R writes
no trace for rank R; --world-size R=M writes world size M into rank R.

The answers are written to OUT/answers.txt as JSON (the delay, the offsets, what is duplicated
or missing; not a *.json name, so mlprof does not take it for a rank).

Usage: gen_ranks.py SOURCE OUT_DIR -n N [--delay-rank R --delay-us X] [--skew-us S]
                    [--jitter-us J] [--no-base-time | --base-time NS] [--duplicate R] [--missing R]
                    [--world-size R=M] [--gzip] [--seed S]
"""
import argparse
import copy
import gzip
import json
import os
import random
import sys


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        return json.load(f)


def is_comm_kernel(e):
    return e.get("cat") == "kernel" and "nccl" in e.get("name", "").lower()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("source")
    ap.add_argument("out")
    ap.add_argument("-n", "--ranks", type=int, required=True)
    ap.add_argument("--delay-rank", type=int, default=-1)
    ap.add_argument("--delay-us", type=float, default=0)
    ap.add_argument("--skew-us", type=int, default=0)
    ap.add_argument("--jitter-us", type=float, default=0)
    ap.add_argument("--no-base-time", action="store_true")
    ap.add_argument("--base-time", type=int, default=None,
                    help="baseTimeNanoseconds to write when the source has none")
    ap.add_argument("--duplicate", type=int, action="append", default=[])
    ap.add_argument("--missing", type=int, action="append", default=[])
    ap.add_argument("--world-size", action="append", default=[], metavar="R=M")
    ap.add_argument("--gzip", action="store_true")
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()

    src = load(a.source)
    if isinstance(src, list):
        src = {"traceEvents": src}
    events = src.pop("traceEvents")
    if a.base_time is not None and "baseTimeNanoseconds" not in src:
        src["baseTimeNanoseconds"] = a.base_time
    base = src.get("baseTimeNanoseconds")
    if a.no_base_time:
        src.pop("baseTimeNanoseconds", None)
        base = None
    world_of = {int(r): int(m) for r, m in (x.split("=") for x in a.world_size)}
    n = a.ranks
    os.makedirs(a.out, exist_ok=True)
    group_ranks = str(list(range(n))) if n <= 64 else None

    # The communication kernels' positions, and their args rewritten once for N ranks.
    comm = [i for i, e in enumerate(events) if is_comm_kernel(e)]
    comm_args = {}
    for i in comm:
        args = dict(events[i].get("args", {}))
        if "Group size" in args:
            args["Group size"] = n
        if "Process Group Ranks" in args:
            if group_ranks is None:
                del args["Process Group Ranks"]
            else:
                args["Process Group Ranks"] = group_ranks
        comm_args[i] = args
    comm_set = set(comm)
    # Each communication kernel's successor on its stream (its start bounds the wait).
    next_start = {}
    by_stream = {}
    for i in comm:
        by_stream.setdefault((events[i].get("pid"), events[i].get("tid")), []).append(i)
    for ids in by_stream.values():
        ids.sort(key=lambda i: events[i]["ts"])
        for x, y in zip(ids, ids[1:]):
            next_start[x] = events[y]["ts"]
    delay = a.delay_us if a.delay_rank >= 0 else 0.0

    expected = {"ranks": n, "delay_rank": a.delay_rank, "delay_us": a.delay_us,
                "jitter_us": a.jitter_us, "base_time": base is not None,
                "comm_kernels_per_rank": len(comm), "offsets_us": {}, "files": [],
                "duplicate": a.duplicate, "missing": a.missing, "world_size": world_of}
    jobs = [(r, "") for r in range(n) if r not in a.missing] + [(r, "-dup") for r in a.duplicate]
    for rank, suffix in jobs:
        rng = random.Random(a.seed * 1000003 + rank)
        shift = rng.randint(-a.skew_us, a.skew_us) if a.skew_us else 0
        expected["offsets_us"][str(rank)] = shift
        out_events = []
        for i, e in enumerate(events):
            if e.get("ph") == "M" or "ts" not in e:
                out_events.append(e)
                continue
            e = dict(e)
            ts, dur = e["ts"], e.get("dur")
            if i in comm_set and dur is not None:
                e["args"] = comm_args[i]
                # The call ends `delay` later on every rank (everyone waits for the late one);
                # the late rank starts `delay` later, the others on time (+ jitter). The waiting
                # kernels stop before the next call on their stream starts.
                end = ts + dur + delay
                if rank == a.delay_rank:
                    ts += delay
                else:
                    if i in next_start:
                        end = min(end, max(ts + dur, next_start[i]))
                    if a.jitter_us:
                        ts += rng.uniform(0, min(a.jitter_us, dur / 2))
                dur = end - ts
            e["ts"] = ts + shift
            if dur is not None:
                e["dur"] = dur
            out_events.append(e)
        top = copy.deepcopy(src)
        info = top.get("distributedInfo", {})
        info["rank"] = rank
        info["world_size"] = world_of.get(rank, n)
        top["distributedInfo"] = info
        if base is not None:
            top["baseTimeNanoseconds"] = base - shift * 1000
        top["traceEvents"] = out_events
        name = f"rank-{rank:05d}{suffix}.json" + (".gz" if a.gzip else "")
        path = os.path.join(a.out, name)
        if a.gzip:
            with gzip.open(path, "wt", compresslevel=1) as f:
                json.dump(top, f)
        else:
            with open(path, "w") as f:
                json.dump(top, f)
        expected["files"].append(name)
    with open(os.path.join(a.out, "answers.txt"), "w") as f:
        json.dump(expected, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
