"""Expected numbers for an rpd_tracer database (plain or gzip), read with the standard sqlite3
module only: kernels per GPU and per name, the union of GPU op time per GPU, copy bytes, API
calls and roctx markers."""
import collections
import gzip
import os
import sqlite3
import tempfile

from nsys_reference import union_ns

KERNEL_TYPES = ("KernelExecution", "Task")


def rpd_reference(path):
    with open(path, "rb") as f:
        gz = f.read(2) == b"\x1f\x8b"
    tmp = None
    if gz:
        tmp = tempfile.NamedTemporaryFile(suffix=".rpd", delete=False)
        with gzip.open(path) as src:
            tmp.write(src.read())
        tmp.close()
        path = tmp.name
    try:
        db = sqlite3.connect(f"file:{path}?immutable=1", uri=True)
        s = dict(db.execute("select id, string from rocpd_string"))
        out = {"kernels": collections.Counter(), "by_name": {}, "busy_ns": {}, "copies": 0,
               "copy_bytes": 0, "fills": 0}
        iv = collections.defaultdict(list)
        bytes_by_op = dict(db.execute(
            "select a.op_id, c.size from rocpd_api_ops a join rocpd_copyapi c on c.api_ptr_id = a.api_id"))
        for oid, gpu, start, end, desc, typ in db.execute(
                "select id, gpuId, start, end, description_id, opType_id from rocpd_op"):
            t = s[typ]
            if t in KERNEL_TYPES:
                out["kernels"][gpu] += 1
                name = s[desc] or t
                c, tot = out["by_name"].get(name, (0, 0))
                out["by_name"][name] = (c + 1, tot + end - start)
            elif t.startswith("Copy"):
                out["copies"] += 1
                size = bytes_by_op.get(oid, 0)
                out["copy_bytes"] += size if isinstance(size, int) else 0
            elif t == "FillBuffer":
                out["fills"] += 1
            else:
                continue
            iv[gpu].append((start, end))
        out["busy_ns"] = {g: union_ns(v) for g, v in iv.items()}
        names = [s[r[0]] for r in db.execute("select apiName_id from rocpd_api")]
        out["markers"] = sum(1 for n in names if n == "UserMarker")
        out["api_calls"] = len(names) - out["markers"]
        return out
    finally:
        if tmp:
            os.unlink(tmp.name)
