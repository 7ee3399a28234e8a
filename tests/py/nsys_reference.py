"""Expected numbers for an Nsight Systems SQLite export, read with the standard sqlite3 module
only (no mlprof): kernels per device, kernel time per device, kernel count and time per name,
the union of GPU time per device (kernels, memcpys, memsets), memcpy bytes, NVTX ranges."""
import collections
import sqlite3


def union_ns(intervals):
    busy, cur_s, cur_e = 0, None, None
    for s, e in sorted(intervals):
        if cur_e is None or s > cur_e:
            if cur_e is not None:
                busy += cur_e - cur_s
            cur_s, cur_e = s, e
        else:
            cur_e = max(cur_e, e)
    return busy + (cur_e - cur_s if cur_e is not None else 0)


def nsys_reference(path):
    db = sqlite3.connect(f"file:{path}?immutable=1", uri=True)
    tables = {r[0] for r in db.execute("select name from sqlite_master where type='table'")}
    strings = dict(db.execute("select id, value from StringIds"))
    out = {"kernels": collections.Counter(), "kernel_ns": collections.Counter(), "by_name": {},
           "busy_ns": {}, "memcpy_bytes": 0, "memcpys": 0, "memsets": 0, "nvtx_ranges": 0,
           "api_calls": 0}
    intervals = collections.defaultdict(list)
    for start, end, dev, name in db.execute(
            "select start, end, deviceId, coalesce(demangledName, shortName) "
            "from CUPTI_ACTIVITY_KIND_KERNEL"):
        out["kernels"][dev] += 1
        out["kernel_ns"][dev] += end - start
        count, total = out["by_name"].get(strings[name], (0, 0))
        out["by_name"][strings[name]] = (count + 1, total + end - start)
        intervals[dev].append((start, end))
    if "CUPTI_ACTIVITY_KIND_MEMCPY" in tables:
        for start, end, dev, nbytes in db.execute(
                "select start, end, deviceId, bytes from CUPTI_ACTIVITY_KIND_MEMCPY"):
            out["memcpy_bytes"] += nbytes
            out["memcpys"] += 1
            intervals[dev].append((start, end))
    if "CUPTI_ACTIVITY_KIND_MEMSET" in tables:
        for start, end, dev in db.execute(
                "select start, end, deviceId from CUPTI_ACTIVITY_KIND_MEMSET"):
            out["memsets"] += 1
            intervals[dev].append((start, end))
    out["busy_ns"] = {dev: union_ns(iv) for dev, iv in intervals.items()}
    if "NVTX_EVENTS" in tables:
        out["nvtx_ranges"] = db.execute(
            "select count(*) from NVTX_EVENTS where eventType in (59, 60) and end is not null"
        ).fetchone()[0]
    if "CUPTI_ACTIVITY_KIND_RUNTIME" in tables:
        out["api_calls"] = db.execute("select count(*) from CUPTI_ACTIVITY_KIND_RUNTIME").fetchone()[0]
    return out
