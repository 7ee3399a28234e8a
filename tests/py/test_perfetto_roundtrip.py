"""Perfetto protobuf out and in (issue 34 item 4): every trace below is exported to .pftrace,
the file is checked with a protobuf wire decoder written here (packets parse, every event's
track has a descriptor, begin/end pair up in order on each track, interned ids are defined
before use), and read back by mlprof: the same slices (time, duration, name, category,
pid/tid; overlapping slices of one track included), flows, counters, arg counts and memory events
(time, thread, address, bytes, device, allocator totals), so that `mlprof memory` and `mlprof
leaks` give the same answers on the round-tripped file; each device's allocated-bytes counter
track equals the allocator's totals as Python computes them from the original."""
import collections
import json
import os
import struct
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
from checks import check, finish  # noqa: E402
from shared_data import shared_path  # noqa: E402
from xplane_reference import fields, signed  # noqa: E402  (the same small wire decoder)
import pftrace_schema  # noqa: E402

MLPROF, DATA = sys.argv[1], sys.argv[2]
FILES = [os.path.join(DATA, n) for n in ["tiny_linear.json", "mlp_bs64.json.gz",
                                         "a_mlp_b32_w64.kineto.json.gz", "b_cnn.kineto.json.gz",
                                         "c_leaky.kineto.json.gz"]]
FILES += [p for p in map(shared_path, [
    "traces/kineto-gpu/critical_path/simple_add/benchmark_result_493459_1694039959_trace.json.gz",
    "traces/kineto-gpu/amd_trace/mi250_minitoy_train_ROCm6_2_kineto.json.gz",
    "traces/kineto-gpu/with_gpu_user_annotation/step_based_trace_2543932.json.gz",
    "traces/nsys/mfu_2gpu_after.sqlite", "traces/rocm/rpd/mytrace.rpd.gz",
    "traces/jax/jax_conv_minimal_08/tw003.xplane.pb"]) if p]


def sql(path, query):
    out = subprocess.run([MLPROF, "sql", path, query, "--json"], check=True, capture_output=True,
                         text=True).stdout
    return json.loads(out)["rows"]  # {"schema": "mlprof.sql/1", "columns", "rows"}


def tables(path):
    slices = collections.Counter(
        (r["ts"], r["dur"], r["name"], r["category"] or "", r["pid"],
         r["tid"] if isinstance(r["tid"], int) and r["tid"] > -1000000 else "label") for r in sql(
            path, "select s.ts, s.dur, s.name, s.category, case when t.type = 'async' then 0 "
            "else t.pid end pid, case when t.type = 'async' then 0 else t.tid end tid "
            "from slice s join track t on t.id = s.track_id"))
    flows = collections.Counter((r["a"], r["an"], r["b"], r["bn"]) for r in sql(
        path, "select a.ts a, a.name an, b.ts b, b.name bn from flow f join slice a on "
        "a.id = f.slice_out join slice b on b.id = f.slice_in"))
    counters = collections.Counter((r["name"], r["ts"], r["value"]) for r in sql(
        path, "select name, ts, value from counter"))
    args = sql(path, "select count(*) n from args where event_type = 'slice'")[0]["n"]
    gpu = sql(path, "select count(*) n from track where type = 'gpu_stream'")[0]["n"]
    memory = collections.Counter(tuple(r.values()) for r in sql(
        path, "select m.ts, t.pid, t.tid, m.addr, m.bytes, m.device_type, m.device_id, "
        "m.total_allocated, m.total_reserved from memory m join track t on t.id = m.track_id"))
    return slices, flows, counters, args, gpu, memory


def memory_counters(path):
    """Each device's allocated-bytes counter as written: (track name, ts, value) from the wire."""
    data = open(path, "rb").read()
    names, out = {}, []
    for num, wt, pkt in fields(memoryview(data)):
        ts, te = 0, None
        for n, w, v in fields(pkt):
            if n == 8:
                ts = v
            elif n == 60:
                d = {n2: v2 for n2, w2, v2 in fields(v)}
                if bytes(d.get(14, b"")).startswith(b"mlprof: allocated bytes"):
                    names[d[1]] = bytes(d[2]).decode()
            elif n == 11:
                te = v
        if te is not None:
            d = {n: v for n, w, v in fields(te)}
            if d.get(11) in names and d.get(9) == 4:
                out.append((names[d[11]], ts, struct.unpack("<d", struct.pack("<Q", d[44]))[0]))
    return out


def expected_memory_counters(path):
    """The same from the original file with mlprof's sql (rows, not analysis): per device, the
    allocator's Total Allocated where recorded, else the running sum of bytes."""
    rows = sql(path, "select ts, bytes, device_type, device_id, total_allocated from memory order by ts, id")
    run, out = collections.Counter(), []
    for r in rows:
        dev = {"cpu": "CPU", "cuda": "GPU"}.get(r["device_type"], "device")
        if r["device_id"] >= 0:
            dev += f" {r['device_id']}"
        run[dev] += r["bytes"]
        ta = r["total_allocated"]
        out.append((f"memory allocated: {dev}", r["ts"], float(ta if ta is not None and ta >= 0 else run[dev])))
    return out


def check_wire(path, name):
    """The file as Perfetto reads it: packets, descriptors, begin/end order, interning."""
    data = open(path, "rb").read()
    uuids, stacks, iids = set(), collections.defaultdict(list), set()
    problems = []
    for num, wt, pkt in fields(memoryview(data)):
        if num != 1 or wt != 2:
            problems.append(f"top-level field {num}")
            continue
        ts, te, flags = 0, None, 0
        for n, w, v in fields(pkt):
            if n == 8:
                ts = v
            elif n == 13:
                flags = v
            elif n == 60:
                for n2, w2, v2 in fields(v):
                    if n2 == 1:
                        uuids.add(v2)
            elif n == 12:
                for n2, w2, v2 in fields(v):
                    for n3, w3, v3 in fields(v2):
                        if n3 == 1:
                            iids.add((n2, v3))
            elif n == 11:
                te = v
        if te is None:
            continue
        typ, track, name_iid = 0, None, None
        for n, w, v in fields(te):
            if n == 9:
                typ = v
            elif n == 11:
                track = v
            elif n == 10:
                name_iid = v
        if track not in uuids:
            problems.append(f"event on track {track} without a descriptor")
        if name_iid is not None and (2, name_iid) not in iids:
            problems.append(f"name iid {name_iid} used before it is interned")
        if typ == 1:
            stacks[track].append(ts)
        elif typ == 2:
            if not stacks[track] or stacks[track][-1] > ts:
                problems.append(f"end at {ts} on track {track} without a matching begin")
            else:
                stacks[track].pop()
        if flags != 2 and typ:
            problems.append("a track event without SEQ_NEEDS_INCREMENTAL_STATE")
    open_left = sum(len(s) for s in stacks.values())
    check(not problems and open_left == 0,
          f"{name}: wire check: {problems[:3]} ({len(problems)} problems), {open_left} unclosed")


# Perfetto's own schema, when the shared formats directory has it: each exported file is also
# decoded by field *names* with the numbers and types read from perfetto_trace.proto.
PROTO = shared_path("formats/perfetto-protos/perfetto/trace/perfetto_trace.proto")
SCHEMA = pftrace_schema.load_schema(PROTO) if PROTO else None
if not SCHEMA:
    print("perfetto_trace.proto not in the shared formats directory: the schema check is skipped")


def check_schema(out, path, name, a):
    """Decoded with Perfetto's schema: no unknown field, wrong wire type or undeclared enum value,
    and its events by type equal the original's tables (memory: an instant and a counter value)."""
    problems, seen = pftrace_schema.validate(SCHEMA, open(out, "rb").read())
    check(not problems, f"{name}: against perfetto_trace.proto: {problems[:3]} ({len(problems)})")
    slices, flows, counters, memory = (sum(a[i].values()) for i in (0, 1, 2, 5))
    instants = sql(path, "select count(*) n from instant")[0]["n"]
    ev = seen["events"]
    want = {"TYPE_SLICE_BEGIN": slices, "TYPE_SLICE_END": slices, "TYPE_INSTANT": instants + memory,
            "TYPE_COUNTER": counters + memory}
    check({k: ev.get(k, 0) for k in want} == want and seen["flow ids"]["out"] == flows ==
          seen["flow ids"]["terminating"],
          f"{name}: events by schema {dict(ev)}, flows {dict(seen['flow ids'])}; expected {want}, {flows} flows")
    checked_schema.append(name)


checked_schema = []
memory_files = []
with tempfile.TemporaryDirectory() as tmp:
    for path in FILES:
        name = os.path.basename(path)
        out = os.path.join(tmp, name + ".pftrace")
        r = subprocess.run([MLPROF, "export", path, "-o", out], capture_output=True, text=True)
        if not check(r.returncode == 0, f"{name}: export exit {r.returncode}: {r.stderr}"):
            continue
        check_wire(out, name)
        a, b = tables(path), tables(out)
        if SCHEMA and os.path.getsize(out) < 40 << 20:
            check_schema(out, path, name, a)
        for what, x, y in zip(["slices", "flows", "counters", "slice args", "GPU streams",
                               "memory events"], a, b):
            if isinstance(x, collections.Counter):
                check(x == y, f"{name}: {what}: {sum(x.values())} -> {sum(y.values())}, "
                      f"missing {list((x - y).items())[:2]}, extra {list((y - x).items())[:2]}")
            else:
                check(x == y, f"{name}: {what}: {x} -> {y}")
        s = json.loads(subprocess.run([MLPROF, "summary", out, "--json"], capture_output=True,
                                      text=True, check=True).stdout)
        check(s["format"] == "perfetto", f"{name}: read back as perfetto")
        if sum(a[5].values()):
            # The memory timeline survives: the analyses agree, and the counter tracks match.
            for cmd in ("memory", "leaks"):
                x, y = (json.loads(subprocess.run([MLPROF, cmd, p, "--json"], capture_output=True,
                                                  text=True, check=True).stdout) for p in (path, out))
                for d in (x, y):
                    d.pop("source", None)
                check(x == y, f"{name}: mlprof {cmd} differs after the round trip: "
                      f"{json.dumps(x)[:200]} / {json.dumps(y)[:200]}")
            got, want = memory_counters(out), expected_memory_counters(path)
            check(sorted(got) == sorted(want), f"{name}: memory counters {len(got)} values, "
                  f"expected {len(want)}: {sorted(set(got) - set(want))[:2]}")
            memory_files.append(name)

    check(len(memory_files) >= 2, f"memory events round-tripped in {memory_files}")
    if SCHEMA:
        print(f"checked against perfetto_trace.proto: {', '.join(checked_schema)}")

    # Bad input: cut files are one line and exit 2 (or read with the cut slices counted).
    if FILES:
        out = os.path.join(tmp, "cut.pftrace")
        data = open(os.path.join(tmp, os.path.basename(FILES[0]) + ".pftrace"), "rb").read()
        open(out, "wb").write(data[: len(data) // 2])
        r = subprocess.run([MLPROF, "summary", out], capture_output=True, text=True)
        check(r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and out in r.stderr,
              f"cut pftrace: exit {r.returncode}: {r.stderr!r}")

    # Bit flips: read or refused with one line, never a crash or a hang.
    import random
    rnd = random.Random(11)
    src = [os.path.join(tmp, n) for n in os.listdir(tmp) if n.endswith(".pftrace") and n != "cut.pftrace"]
    for i in range(30 if src else 0):
        d = bytearray(open(src[i % len(src)], "rb").read())
        for _ in range(8):
            d[rnd.randrange(len(d))] ^= 1 << rnd.randrange(8)
        p = os.path.join(tmp, f"flip{i}.pftrace")
        open(p, "wb").write(d)
        r = subprocess.run([MLPROF, "summary", p], capture_output=True, timeout=120)
        check(r.returncode in (0, 2), f"bit flips {i}: exit {r.returncode}")
    # Deeply nested debug annotations: an error, not a stack overflow.
    def field(num, payload):
        def varint(v):
            out = bytearray()
            while v >= 0x80:
                out.append((v & 0x7F) | 0x80)
                v >>= 7
            out.append(v)
            return bytes(out)
        return varint(num << 3 | 2) + varint(len(payload)) + payload
    ann = b""
    for _ in range(100000):
        ann = field(11, ann)
    te = b"\x48\x01" + b"\x58\x01" + field(4, ann)  # type begin, track 1, annotation
    pkt = b"\x40\x01" + b"\x50\x01" + field(11, te)
    deep = os.path.join(tmp, "deep.pftrace")
    open(deep, "wb").write(field(1, pkt))
    r = subprocess.run([MLPROF, "summary", deep], capture_output=True, text=True, timeout=120)
    check(r.returncode == 2 and "nested" in r.stderr, f"deep annotations: exit {r.returncode}: {r.stderr[:200]!r}")

finish()
