#!/usr/bin/env python3
"""Writes the seed corpora of the other-profiler format fuzzers: small synthetic inputs written
here from each format's documented field names and numbers (nothing copied from real traces).

  make_format_seeds.py OUT_DIR

OUT_DIR/sqlite:    SQL scripts that build an Nsight Systems export, an rpd file and a rocprofv3
                   rocpd database (a few rows of every table the readers use, and damaged forms:
                   missing columns, text ids, NULLs, a recursive view), and the same databases as
                   images (page size 512, so they stay a few KiB).
OUT_DIR/rocprofv3: rocprofv3 JSON documents (agents, kernel symbols, HIP/marker API, dispatches,
                   copies) and damaged ones.
OUT_DIR/xspace:    XSpace protobufs (a host plane with launches, a device plane with kernels and
                   a memcpy, stat metadata of every value kind, a step number).
OUT_DIR/perfetto:  Perfetto traces (descriptors for processes, threads, GPU streams, overlap and
                   counter tracks, interned names, begin/end, complete-as-begin/end, instants,
                   counters, flows old and new, debug annotations nested and flat).
"""
import json
import os
import sqlite3
import struct
import sys

OUT = sys.argv[1] if len(sys.argv) > 1 else "corpus"


def write(kind, name, data):
    os.makedirs(os.path.join(OUT, kind), exist_ok=True)
    with open(os.path.join(OUT, kind, name), "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())


# ---- SQLite ---------------------------------------------------------------------------------

NSYS = """
CREATE TABLE StringIds(id INTEGER PRIMARY KEY, value TEXT);
INSERT INTO StringIds VALUES(1,'cudaLaunchKernel'),(2,'gemm_kernel'),(3,'aten::mm, op_id = 4'),
 (4,'cudaMemcpyAsync'),(5,'python');
CREATE TABLE PROCESSES(globalPid INT, pid INT, name TEXT);
INSERT INTO PROCESSES VALUES(281474976710656,100,'python');
CREATE TABLE ThreadNames(globalTid INT, nameId INT);
INSERT INTO ThreadNames VALUES(281474976710756,5);
CREATE TABLE TARGET_INFO_GPU(id INT, name TEXT, totalMemory INT, smCount INT, computeMajor INT,
 computeMinor INT, maxThreadsPerBlock INT, threadsPerWarp INT);
INSERT INTO TARGET_INFO_GPU VALUES(0,'H100',85000000000,132,9,0,1024,32);
CREATE TABLE META_DATA_EXPORT(name TEXT, value TEXT);
INSERT INTO META_DATA_EXPORT VALUES('EXPORT_SCHEMA_VERSION','3.11.0');
CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME(start INT, end INT, eventClass INT, globalTid INT,
 correlationId INT, nameId INT, returnValue INT);
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES(1000,1500,0,281474976710756,7,1,0),
 (2000,2600,0,281474976710756,8,4,0);
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL(start INT, end INT, deviceId INT, contextId INT,
 streamId INT, correlationId INT, globalPid INT, demangledName INT, shortName INT, gridX INT,
 gridY INT, gridZ INT, blockX INT, blockY INT, blockZ INT, registersPerThread INT,
 staticSharedMemory INT, dynamicSharedMemory INT, graphId INT, graphNodeId INT);
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES(1600,2400,0,1,7,7,281474976710656,2,2,4,1,1,128,1,
 1,32,0,1024,NULL,NULL),(2500,2700,0,1,7,99,281474976710656,2,2,1,1,1,1,1,1,8,0,0,3,5);
CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY(start INT, end INT, deviceId INT, contextId INT,
 streamId INT, correlationId INT, globalPid INT, bytes INT, copyKind INT, srcKind INT,
 dstKind INT, graphNodeId INT);
INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES(2700,2900,0,1,7,8,281474976710656,4096,1,1,3,NULL);
CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET(start INT, end INT, deviceId INT, contextId INT,
 streamId INT, correlationId INT, globalPid INT, bytes INT, memKind INT, value INT);
INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET VALUES(3000,3100,0,1,7,9,281474976710656,256,3,0);
CREATE TABLE CUPTI_ACTIVITY_KIND_SYNCHRONIZATION(start INT, end INT, deviceId INT, contextId INT,
 streamId INT, correlationId INT, globalPid INT, syncType INT);
INSERT INTO CUPTI_ACTIVITY_KIND_SYNCHRONIZATION VALUES(3100,3200,0,1,7,10,281474976710656,1);
CREATE TABLE NVTX_EVENTS(start INT, end INT, eventType INT, rangeId INT, category INT, color INT,
 text TEXT, globalTid INT, endGlobalTid INT, textId INT, domainId INT);
INSERT INTO NVTX_EVENTS VALUES(900,3000,59,NULL,NULL,NULL,NULL,281474976710756,NULL,3,0),
 (950,960,34,NULL,NULL,NULL,'mark',281474976710756,NULL,NULL,0),
 (1000,2000,60,1,NULL,NULL,'range',281474976710756,NULL,NULL,0),
 (10,NULL,75,NULL,NULL,NULL,'domain',281474976710756,NULL,NULL,1);
"""

RPD = """
CREATE TABLE rocpd_string(id INTEGER PRIMARY KEY, string TEXT);
INSERT INTO rocpd_string VALUES(1,'hipLaunchKernel'),(2,'KernelExecution'),(3,'Cijk_gemm'),
 (4,'hipMemcpyAsync'),(5,'CopyHostToDevice'),(6,'UserMarker'),(7,'aten::mm'),(8,'FillBuffer'),
 (9,''),(10,'Task'),(11,'Barrier');
CREATE TABLE rocpd_api(id INTEGER PRIMARY KEY, pid INT, tid INT, start INT, end INT,
 apiName_id INT, args_id INT);
INSERT INTO rocpd_api VALUES(1,10,11,1000,1400,1,9),(2,10,11,1500,1700,4,9),(3,10,11,900,3000,6,7);
CREATE TABLE rocpd_op(id INTEGER PRIMARY KEY, gpuId INT, queueId INT, sequenceId INT,
 completionSignal TEXT, start INT, end INT, description_id INT, opType_id INT);
INSERT INTO rocpd_op VALUES(1,2,0,0,'',1600,2200,3,2),(2,2,1,0,'',1800,1900,9,5),
 (3,2,0,0,'',2300,2400,9,8),(4,2,0,0,'',2400,2500,3,10),(5,2,0,0,'',2500,2600,9,11);
CREATE TABLE rocpd_api_ops(id INTEGER PRIMARY KEY, api_id INT, op_id INT);
INSERT INTO rocpd_api_ops VALUES(1,1,1),(2,2,2);
CREATE TABLE rocpd_kernelapi(api_ptr_id INT, stream TEXT, gridX INT, gridY INT, gridZ INT,
 workgroupX INT, workgroupY INT, workgroupZ INT, groupSegmentSize INT, privateSegmentSize INT,
 kernelArgAddress TEXT, aquireFence TEXT, releaseFence TEXT, codeObject_id INT, kernelName_id INT);
INSERT INTO rocpd_kernelapi VALUES(1,'0',1024,1,1,256,1,1,0,0,'','','',0,3);
CREATE TABLE rocpd_copyapi(api_ptr_id INT, stream TEXT, size INT, width INT, height INT,
 kind INT, dst TEXT, src TEXT, dstDevice INT, srcDevice INT, sync BOOL, pinned BOOL);
INSERT INTO rocpd_copyapi VALUES(2,'0',65536,0,0,1,'','',2,0,0,1);
CREATE TABLE rocpd_monitor(id INTEGER PRIMARY KEY, deviceType TEXT, deviceId INT,
 monitorType TEXT, start INT, end INT, value TEXT);
INSERT INTO rocpd_monitor VALUES(1,'gpu',2,'sclk',1000,2000,'1700'),(2,'gpu',2,'temp',1000,2000,'x');
CREATE TABLE rocpd_metadata(id INTEGER PRIMARY KEY, tag TEXT, value TEXT);
INSERT INTO rocpd_metadata VALUES(1,'schema_version','2');
"""


def rocpd_script():
    """rocprofv3's rocpd database (tests/py/rocpd_synthetic.py builds the full one)."""
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path.insert(0, os.path.join(here, "..", "py"))
    try:
        import rocpd_synthetic
    except ImportError:
        return None
    return rocpd_synthetic.small_script()


def damaged(script):
    """Variants of a script a damaged or foreign database resembles."""
    yield "no_rows", "\n".join(l for l in script.splitlines() if not l.lstrip().startswith(("INSERT", "(")))
    yield "text_ids", script.replace(",7,", ",'seven',", 3).replace("(1,", "('1',", 2)
    yield "huge", script.replace("1600", "9223372036854775807").replace("2400", "-9223372036854775807")
    yield "nulls", script.replace(",0,", ",NULL,")


def image(script):
    db = sqlite3.connect(":memory:")
    db.execute("PRAGMA page_size=512")
    db.executescript(script)
    data = db.serialize()
    db.close()
    return data


def sqlite_seeds():
    scripts = {"nsys": NSYS, "rpd": RPD}
    r = rocpd_script()
    if r:
        scripts["rocpd"] = r
    for name, script in scripts.items():
        write("sqlite", name + ".sql", script)
        write("sqlite", name + ".sqlite", image(script))
        for what, s in damaged(script):
            write("sqlite", "%s_%s.sql" % (name, what), s)
    # Hostile: a view that recurses forever where a table belongs, and a database of no trace.
    write("sqlite", "recursive_view.sql", RPD.replace(
        "CREATE TABLE rocpd_op(", "CREATE VIEW rocpd_op AS WITH RECURSIVE c(id, gpuId, queueId, "
        "start, end, description_id, opType_id) AS (SELECT 1,0,0,0,1,3,2 UNION ALL SELECT id+1,0,0,"
        "start+1,end+1,3,2 FROM c) SELECT * FROM c;\nCREATE TABLE unused_op(").replace(
        "INSERT INTO rocpd_op", "INSERT INTO unused_op"))
    write("sqlite", "other.sql", "CREATE TABLE t(a); INSERT INTO t VALUES(1);")


# ---- rocprofv3 JSON -------------------------------------------------------------------------

def rocprofv3_seeds():
    ts = lambda s, e: {"start_timestamp": s, "end_timestamp": e}
    tool = {
        "metadata": {"pid": 4242},
        "agents": [{"id": {"handle": 1}, "type": 1, "name": "cpu"},
                   {"id": {"handle": 2}, "type": 2, "gpu_index": 0, "name": "gfx942",
                    "product_name": "AMD Instinct MI300X", "cu_count": 304, "wave_front_size": 64,
                    "workgroup_max_size": 1024, "max_waves_per_cu": 32, "lds_size_in_kb": 64}],
        "kernel_symbols": [{"kernel_id": 1, "formatted_kernel_name": "gemm"},
                           {"kernel_id": 2, "kernel_name": "_Z3addv"}],
        "strings": {"buffer_records": [
            {"kind": "HIP_RUNTIME_API", "operations": ["hipLaunchKernel", "hipMemcpyAsync"]},
            {"kind": "MEMORY_COPY", "operations": ["NONE", "MEMORY_COPY_HOST_TO_DEVICE",
                                                   "MEMORY_COPY_DEVICE_TO_HOST"]},
            {"kind": "MARKER", "operations": ["roctxRangePush"]}]},
        "buffer_records": {
            "hip_api": [dict(ts(100, 200), kind=0, operation=0, thread_id=7,
                             correlation_id={"internal": 1}),
                        dict(ts(300, 400), kind=0, operation=1, thread_id=7,
                             correlation_id={"internal": 2})],
            "marker_api": [dict(ts(50, 900), kind=2, operation=0, thread_id=7,
                                correlation_id={"internal": 3})],
            "kernel_dispatch": [dict(ts(250, 350), correlation_id={"internal": 1}, stream_id={"handle": 0},
                                     dispatch_info={"agent_id": {"handle": 2}, "queue_id": {"handle": 5},
                                                    "kernel_id": 1, "grid_size": {"x": 1024, "y": 1, "z": 1},
                                                    "workgroup_size": {"x": 256, "y": 1, "z": 1},
                                                    "group_segment_size": 0, "private_segment_size": 16}),
                                dict(ts(360, 380), correlation_id={"internal": 9},
                                     dispatch_info={"agent_id": {"handle": 7}, "kernel_id": 3})],
            "memory_copy": [dict(ts(410, 500), kind=1, operation=1, correlation_id={"internal": 2},
                                 dst_agent_id={"handle": 2}, src_agent_id={"handle": 1}, bytes=65536)],
        },
    }
    doc = {"rocprofiler-sdk-tool": [tool]}
    write("rocprofv3", "all.json", json.dumps(doc))
    write("rocprofv3", "kernels_only.json", json.dumps(
        {"rocprofiler-sdk-tool": [dict(tool, buffer_records={
            "kernel_dispatch": tool["buffer_records"]["kernel_dispatch"]})]}))
    write("rocprofv3", "empty.json", '{"rocprofiler-sdk-tool": [{}]}')
    write("rocprofv3", "bad_types.json", json.dumps(doc).replace("250", '"x"').replace("1024", "1e400"))
    write("rocprofv3", "cut.json", json.dumps(doc)[:300])


# ---- protobuf wire encoding -----------------------------------------------------------------

def varint(n):
    n &= (1 << 64) - 1
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def fv(num, n):  # varint field
    return varint(num << 3) + varint(n)


def fb(num, data):  # length-delimited field
    if isinstance(data, str):
        data = data.encode()
    return varint(num << 3 | 2) + varint(len(data)) + data


def fd(num, x):  # double field
    return varint(num << 3 | 1) + struct.pack("<d", x)


# ---- XSpace (xplane.proto) ------------------------------------------------------------------

def xstat(mid, kind, value):
    if kind == 2:
        return fv(1, mid) + fd(2, value)
    if kind in (5, 6):
        return fv(1, mid) + fb(kind, value)
    return fv(1, mid) + fv(kind, value)


def xplane(pid, name, lines, events_md, stats_md, stats=b""):
    p = fv(1, pid) + fb(2, name)
    for line in lines:
        p += fb(3, line)
    for i, n in events_md.items():
        p += fb(4, fv(1, i) + fb(2, fv(1, i) + fb(2, n)))
    for i, n in stats_md.items():
        p += fb(5, fv(1, i) + fb(2, fv(1, i) + fb(2, n)))
    return fb(1, p + stats)


def xline(lid, name, ts_ns, events):
    return fv(1, lid) + fb(2, name) + fv(3, ts_ns) + b"".join(fb(4, e) for e in events)


def xevent(mid, off_ps, dur_ps, stats=()):
    return fv(1, mid) + fv(2, off_ps) + fv(3, dur_ps) + b"".join(fb(4, s) for s in stats)


def xspace_seeds():
    smd = {1: "correlation_id", 2: "kernel_details", 3: "memcpy_details", 4: "step_num",
           5: "hlo_op", 6: "device_vendor", 7: "core_count", 8: "allocation_bytes", 9: "addr",
           10: "flops"}
    host = xplane(1, "/host:CPU", [
        xline(1, "python", 1000, [
            xevent(1, 0, 5_000_000, [xstat(4, 3, 1)]),
            xevent(2, 1_000_000, 200_000, [xstat(1, 3, 7)]),
            xevent(3, 2_000_000, 0, [xstat(8, 3, 4096), xstat(9, 3, 0x7f00)])])],
        {1: "train_step", 2: "cudaLaunchKernel", 3: "MemoryAllocation"}, smd)
    dev = xplane(2, "/device:GPU:0", [
        xline(1, "Stream #7(Compute)", 1000, [
            xevent(1, 1_500_000, 800_000, [xstat(1, 3, 7), xstat(2, 5, "grid:4,1,1 block:128,1,1"),
                                           xstat(5, 7, 11), xstat(10, 2, 1.5e9)]),
            xevent(2, 2_500_000, 100_000, [xstat(3, 5, "kind:HtoD size:4096")])])],
        {1: "gemm", 2: "MemcpyH2D", 11: "dot.1"}, smd,
        stats=fb(6, xstat(6, 5, "NVIDIA")) + fb(6, xstat(7, 4, 132)))
    env = xplane(3, "Task Environment", [], {}, {1: "profile_start_time"},
                 stats=fb(6, xstat(1, 3, 1700000000)))
    write("xspace", "space.xplane.pb", host + dev + env + fb(2, "an error") + fb(4, "host0"))
    write("xspace", "device_only.xplane.pb", dev)
    write("xspace", "cut.xplane.pb", (host + dev)[:150])
    write("xspace", "bad_metadata.xplane.pb", xplane(4, "/device:GPU:1", [
        xline(1, "Stream #1", 5, [xevent(99, 1, 2), xevent(1, 2**63, 2**64 - 1)])], {1: "k"},
        {1: "x"}))


# ---- Perfetto (trace_packet.proto, track_event.proto, track_descriptor.proto, ...) ------------

def packet(body, seq=1):
    return fb(1, body + fv(10, seq))


def track(uuid, name=None, parent=None, process=None, thread=None, counter=False,
          description=None):
    t = fv(1, uuid)
    if name is not None:
        t += fb(2, name)
    if parent is not None:
        t += fv(5, parent)
    if process is not None:
        t += fb(3, fv(1, process[0]) + fb(6, process[1]))
    if thread is not None:
        t += fb(4, fv(1, thread[0]) + fv(2, thread[1]) + fb(5, thread[2]))
    if counter:
        t += fb(8, b"")
    if description is not None:
        t += fb(14, description)
    return packet(fb(60, t))


def event(ts, etype, uuid, name=None, name_iid=None, cat=None, extra=b"", seq=1):
    e = fv(9, etype) + fv(11, uuid)
    if name is not None:
        e += fb(23, name)
    if name_iid is not None:
        e += fv(10, name_iid)
    if cat is not None:
        e += fb(22, cat)
    return packet(fv(8, ts) + fb(11, e + extra), seq)


def perfetto_seeds():
    overlap = "mlprof: overlapping slices of the parent track"
    stream = "mlprof: a GPU stream (pid = device, tid = stream)"
    interned = packet(fv(13, 1) + fb(12, fb(2, fv(1, 1) + fb(2, "interned_op")) +
                                      fb(1, fv(1, 1) + fb(2, "cpu_op")) +
                                      fb(3, fv(1, 1) + fb(2, "dbg")) +
                                      fb(29, fv(1, 1) + fb(2, "dbg value"))))
    ann = (fb(4, fb(10, "n") + fv(4, 3)) + fb(4, fv(1, 1) + fv(17, 1)) +
           fb(4, fb(10, "d") + fd(5, 2.5)) + fb(4, fb(10, "b") + fv(2, 1)) +
           fb(4, fb(10, "s") + fb(6, "text")) + fb(4, fb(10, "j") + fb(9, '{"a":1}')) +
           fb(4, fb(10, "nest") + fb(11, fb(10, "k") + fv(3, 1)) + fb(12, fv(4, 2))))
    body = b"".join([
        track(1, process=(100, "python")),
        track(2, parent=1, thread=(100, 101, "main")),
        track(3, name="stream 7", thread=(0, 7, "stream 7"), description=stream),
        track(4, parent=3, description=overlap),
        track(5, name="memory", parent=1, counter=True),
        track(6, name="async lane", parent=1),
        interned,
        event(1000, 1, 2, name="outer", cat="cpu_op", extra=ann),
        event(1100, 1, 2, name_iid=1, extra=fv(47, 55)),
        event(1200, 2, 2),
        event(1300, 3, 2, name="instant"),
        event(1900, 2, 2),
        event(1500, 1, 3, name="kernel", cat="kernel", extra=fv(48, 55)),
        event(1600, 1, 4, name="overlapping kernel", cat="kernel"),
        event(1700, 2, 3),
        event(1800, 2, 4),
        event(1400, 4, 5, extra=fv(30, 4096)),
        event(1450, 4, 5, extra=fd(44, 8192.5)),
        event(1000, 1, 6, name="async", extra=fv(36, 9)),
        event(1100, 2, 6, extra=fv(42, 9)),
        event(2000, 1, 99, name="no descriptor"),
        packet(fb(2, b"\x0a\x00")),  # a process tree: skipped and counted
        packet(fb(59, fb(11, fv(11, 2))), seq=2),  # defaults: track 2
        event(2100, 3, 0, name="on the default track", seq=2),
    ])
    write("perfetto", "trace.pftrace", body)
    write("perfetto", "cut.pftrace", body[:len(body) // 2])
    deep = fb(10, "x")
    for _ in range(80):  # the reader refuses over 64
        deep = fb(11, deep)
    write("perfetto", "deep.pftrace", track(2, thread=(1, 1, "t")) +
          event(1, 3, 2, name="deep", extra=fb(4, fb(10, "top") + deep)))
    write("perfetto", "self_parent.pftrace", track(8, parent=8, description=overlap) +
          event(5, 3, 8, name="loop"))


def main():
    sqlite_seeds()
    rocprofv3_seeds()
    xspace_seeds()
    perfetto_seeds()


main()
