"""A small rocprofv3 rocpd database (rocprofiler-sdk's rocpd schema version 3:
source/share/rocprofiler-sdk-rocpd/rocpd_tables.sql and rocpd_views.sql), written here from the
documented table and column names: each table is NAME + a uuid suffix with a view NAME over it,
as rocprofv3 writes them. Only the columns mlprof reads and the ones that tie them together are
filled; the rows are made up (two GPUs, HIP and HSA calls, roctx markers, kernels, copies,
allocations).

  build(path, uuid)   writes the database
  small_script()      the same as one SQL script (the fuzzer's seed)
  ROWS                the rows, for expected values computed without mlprof
"""
import sqlite3

UUID = "_0123abcd_4567"

# name -> columns ("id" first: INTEGER PRIMARY KEY).
TABLES = {
    "rocpd_metadata": ["tag", "value"],
    "rocpd_string": ["guid", "string"],
    "rocpd_info_node": ["guid", "hash", "machine_id", "hostname"],
    "rocpd_info_process": ["guid", "nid", "ppid", "pid", "command"],
    "rocpd_info_thread": ["guid", "nid", "ppid", "pid", "tid", "name"],
    "rocpd_info_agent": ["guid", "nid", "pid", "type", "absolute_index", "logical_index",
                         "type_index", "uuid", "name", "model_name", "vendor_name",
                         "product_name", "extdata"],
    "rocpd_info_queue": ["guid", "nid", "pid", "name"],
    "rocpd_info_stream": ["guid", "nid", "pid", "name"],
    "rocpd_info_code_object": ["guid", "nid", "pid", "agent_id", "uri"],
    "rocpd_info_kernel_symbol": ["guid", "nid", "pid", "code_object_id", "kernel_name",
                                 "display_name", "group_segment_size", "private_segment_size"],
    "rocpd_event": ["guid", "category_id", "stack_id", "parent_stack_id", "correlation_id"],
    "rocpd_region": ["guid", "nid", "pid", "tid", "start", "end", "name_id", "event_id"],
    "rocpd_kernel_dispatch": ["guid", "nid", "pid", "tid", "agent_id", "kernel_id", "dispatch_id",
                              "queue_id", "stream_id", "start", "end", "private_segment_size",
                              "group_segment_size", "workgroup_size_x", "workgroup_size_y",
                              "workgroup_size_z", "grid_size_x", "grid_size_y", "grid_size_z",
                              "region_name_id", "event_id"],
    "rocpd_memory_copy": ["guid", "nid", "pid", "tid", "start", "end", "name_id", "dst_agent_id",
                          "dst_address", "src_agent_id", "src_address", "size", "queue_id",
                          "stream_id", "region_name_id", "event_id"],
    "rocpd_memory_allocate": ["guid", "nid", "pid", "tid", "agent_id", "type", "level", "start",
                              "end", "address", "size", "queue_id", "stream_id", "event_id"],
}

G = "guid-1"
STRINGS = ["HIP_RUNTIME_API", "HSA_CORE_API", "MARKER_CORE_API", "KERNEL_DISPATCH",
           "MEMORY_COPY", "hipLaunchKernel", "hsa_queue_store_write_index", "hipMemcpyAsync",
           "train step", "aten::mm", "MEMORY_COPY_HOST_TO_DEVICE", "MEMORY_COPY_DEVICE_TO_HOST",
           "MEMORY_ALLOCATION", "hipMalloc"]
S = {s: i + 1 for i, s in enumerate(STRINGS)}


def rows():
    r = {t: [] for t in TABLES}
    r["rocpd_metadata"] = [("schema_version", "3"), ("uuid", UUID)]
    r["rocpd_string"] = [(G, s) for s in STRINGS]
    r["rocpd_info_node"] = [(G, 99, "m0", "host0")]
    r["rocpd_info_process"] = [(G, 1, 1, 31337, "python train.py")]
    r["rocpd_info_thread"] = [(G, 1, 1, 1, 31337, "python"), (G, 1, 1, 1, 31400, "worker")]
    # Agents: a CPU, then two GPUs (type_index 0 and 1).
    r["rocpd_info_agent"] = [
        (G, 1, 1, "CPU", 0, 0, 0, 0, "AMD EPYC", "", "AMD", "AMD EPYC 9654", "{}"),
        (G, 1, 1, "GPU", 1, 1, 0, 1, "gfx942", "aqua_vanjaram", "AMD", "AMD Instinct MI300X", "{}"),
        (G, 1, 1, "GPU", 2, 2, 1, 2, "gfx942", "aqua_vanjaram", "AMD", "AMD Instinct MI300X", "{}")]
    r["rocpd_info_queue"] = [(G, 1, 1, "queue 0"), (G, 1, 1, "queue 1")]
    r["rocpd_info_stream"] = [(G, 1, 1, "stream 0")]
    r["rocpd_info_code_object"] = [(G, 1, 1, 2, "file:///k.co")]
    r["rocpd_info_kernel_symbol"] = [
        (G, 1, 1, 1, "_Z4gemmv.kd", "gemm(float*)", 0, 0),
        (G, 1, 1, 1, "_Z3addv.kd", "add(float*)", 1024, 16),
        (G, 1, 1, 1, "_Z4fillv.kd", None, 0, 0)]
    events, regions, kernels, copies, allocs = [], [], [], [], []

    def event(cat, corr):
        events.append((G, S[cat], 0, 0, corr))
        return len(events)

    # Marker ranges on the main thread.
    regions.append((G, 1, 1, 1, 1000, 90000, S["train step"], event("MARKER_CORE_API", 1)))
    regions.append((G, 1, 1, 1, 1500, 40000, S["aten::mm"], event("MARKER_CORE_API", 2)))
    t = 2000
    corr = 10
    for i in range(12):
        gpu, queue = (2, 1) if i % 3 == 0 else (3, 2)  # agent ids of GPU 0 and GPU 1
        kid = 1 + i % 3
        regions.append((G, 1, 1, 1 + i % 2, t, t + 300, S["hipLaunchKernel"],
                        event("HIP_RUNTIME_API", corr)))
        regions.append((G, 1, 1, 1 + i % 2, t + 100, t + 150, S["hsa_queue_store_write_index"],
                        event("HSA_CORE_API", corr + 1000)))
        # Dispatch 5 has no API call in the file (correlation 9999).
        kcorr = 9999 if i == 5 else corr
        start = t + 500 + (i % 4) * 70
        kernels.append((G, 1, 1, 1, gpu, kid, i + 1, queue, 1, start, start + 1000 + 37 * i, 16,
                        256 * (i % 2), 256, 1, 1, 65536 * (1 + i % 3), 2, 1, None,
                        event("KERNEL_DISPATCH", kcorr)))
        t += 4000
        corr += 1
    for i, (name, dst, src, size) in enumerate([("MEMORY_COPY_HOST_TO_DEVICE", 2, 1, 1 << 20),
                                                ("MEMORY_COPY_DEVICE_TO_HOST", 1, 3, 4096),
                                                ("MEMORY_COPY_HOST_TO_DEVICE", 3, 1, 12345)]):
        regions.append((G, 1, 1, 1, t, t + 200, S["hipMemcpyAsync"], event("HIP_RUNTIME_API", corr)))
        copies.append((G, 1, 1, 1, t + 300, t + 300 + 800 * (i + 1), S[name], dst, 0, src, 0, size,
                       None, 1, None, event("MEMORY_COPY", corr)))
        t += 3000
        corr += 1
    # Allocations: two on GPU 0, one freed; a VIRTUAL reservation (not counted).
    allocs.append((G, 1, 1, 1, 2, "ALLOC", "REAL", 1200, 1210, 0x1000, 1 << 20, None, None,
                   event("MEMORY_ALLOCATION", 500)))
    allocs.append((G, 1, 1, 1, 2, "ALLOC", "REAL", 1300, 1310, 0x900000, 3 << 20, None, None,
                   event("MEMORY_ALLOCATION", 501)))
    allocs.append((G, 1, 1, 1, 2, "FREE", "REAL", 80000, 80010, 0x1000, 0, None, None,
                   event("MEMORY_ALLOCATION", 502)))
    allocs.append((G, 1, 1, 1, 3, "ALLOC", "VIRTUAL", 1400, 1410, 0x7000000, 1 << 30, None, None,
                   event("MEMORY_ALLOCATION", 503)))
    r["rocpd_event"] = events
    r["rocpd_region"] = regions
    r["rocpd_kernel_dispatch"] = kernels
    r["rocpd_memory_copy"] = copies
    r["rocpd_memory_allocate"] = allocs
    return r


ROWS = rows()


def quote(v):
    if v is None:
        return "NULL"
    if isinstance(v, str):
        return "'" + v.replace("'", "''") + "'"
    return str(v)


def script(uuid=UUID, limit=None):
    out = []
    for name, cols in TABLES.items():
        out.append('CREATE TABLE "%s%s" ("id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT, %s);'
                   % (name, uuid, ", ".join('"%s"' % c for c in cols)))
        out.append('CREATE VIEW "%s" AS SELECT * FROM "%s%s";' % (name, name, uuid))
        rs = ROWS[name][:limit] if limit else ROWS[name]
        for row in rs:
            out.append('INSERT INTO "%s%s" (%s) VALUES (%s);'
                       % (name, uuid, ", ".join('"%s"' % c for c in cols),
                          ", ".join(quote(v) for v in row)))
    return "\n".join(out)


def small_script():
    return script(limit=4)


def build(path, uuid=UUID, views=True):
    db = sqlite3.connect(path)
    s = script(uuid)
    if not views:
        s = "\n".join(l for l in s.splitlines() if not l.startswith("CREATE VIEW"))
    db.executescript(s)
    db.commit()
    db.close()
