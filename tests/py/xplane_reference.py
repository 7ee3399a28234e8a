"""A small protobuf wire decoder (no protobuf package) for XSpace files (XLA's xplane.proto,
field numbers only) and the expected numbers mlprof's xplane importer must give: per device plane
and line, event counts and time; per-name kernel counts and time on GPU stream lines."""
import collections
import struct


class WireError(Exception):
    pass


def varint(buf, i):
    shift = result = 0
    while True:
        if i >= len(buf):
            raise WireError("truncated varint")
        b = buf[i]
        i += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result, i
        shift += 7
        if shift > 63:
            raise WireError("varint too long")


def fields(buf):
    """(field number, wire type, value) for each field of one message; value is an int for
    varint/fixed fields, a memoryview for length-delimited ones."""
    i, n = 0, len(buf)
    while i < n:
        key, i = varint(buf, i)
        num, wt = key >> 3, key & 7
        if num == 0:
            raise WireError("field number 0")
        if wt == 0:
            v, i = varint(buf, i)
        elif wt == 1:
            if i + 8 > n:
                raise WireError("truncated fixed64")
            v = struct.unpack_from("<Q", buf, i)[0]
            i += 8
        elif wt == 2:
            ln, i = varint(buf, i)
            if i + ln > n:
                raise WireError("length past the end")
            v = buf[i:i + ln]
            i += ln
        elif wt == 5:
            if i + 4 > n:
                raise WireError("truncated fixed32")
            v = struct.unpack_from("<I", buf, i)[0]
            i += 4
        else:
            raise WireError(f"wire type {wt}")
        yield num, wt, v


def signed(v):
    return v - (1 << 64) if v >= 1 << 63 else v


def parse_stat(buf):
    st = {"metadata_id": 0, "value": None}
    for num, wt, v in fields(buf):
        if num == 1:
            st["metadata_id"] = signed(v)
        elif num == 2:
            st["value"] = struct.unpack("<d", struct.pack("<Q", v))[0]
        elif num in (3, 7):
            st["value"] = v
            st["ref"] = num == 7
        elif num == 4:
            st["value"] = signed(v)
        elif num in (5, 6):
            st["value"] = bytes(v)
    return st


def parse_plane(buf):
    plane = {"id": 0, "name": "", "lines": [], "event_metadata": {}, "stat_metadata": {}, "stats": []}
    for num, wt, v in fields(buf):
        if num == 1:
            plane["id"] = signed(v)
        elif num == 2:
            plane["name"] = bytes(v).decode("utf-8", "replace")
        elif num == 3:
            line = {"id": 0, "name": "", "display_name": "", "timestamp_ns": 0, "events": []}
            for n2, w2, v2 in fields(v):
                if n2 == 1:
                    line["id"] = signed(v2)
                elif n2 == 2:
                    line["name"] = bytes(v2).decode("utf-8", "replace")
                elif n2 == 11:
                    line["display_name"] = bytes(v2).decode("utf-8", "replace")
                elif n2 == 3:
                    line["timestamp_ns"] = signed(v2)
                elif n2 == 4:
                    ev = {"metadata_id": 0, "offset_ps": 0, "duration_ps": 0, "stats": []}
                    for n3, w3, v3 in fields(v2):
                        if n3 == 1:
                            ev["metadata_id"] = signed(v3)
                        elif n3 == 2:
                            ev["offset_ps"] = signed(v3)
                        elif n3 == 3:
                            ev["duration_ps"] = signed(v3)
                        elif n3 == 4:
                            ev["stats"].append(parse_stat(v3))
                    line["events"].append(ev)
            plane["lines"].append(line)
        elif num in (4, 5):  # map entries: key = 1, value = 2
            key, val = 0, None
            for n2, w2, v2 in fields(v):
                if n2 == 1:
                    key = signed(v2)
                elif n2 == 2:
                    val = v2
            md = {"id": key, "name": "", "display_name": "", "stats": []}
            if val is not None:
                for n3, w3, v3 in fields(val):
                    if n3 == 2:
                        md["name"] = bytes(v3).decode("utf-8", "replace")
                    elif n3 == 4 and num == 4:
                        md["display_name"] = bytes(v3).decode("utf-8", "replace")
                    elif n3 == 5 and num == 4:
                        md["stats"].append(parse_stat(v3))
            plane["event_metadata" if num == 4 else "stat_metadata"][key] = md
        elif num == 6:
            plane["stats"].append(parse_stat(v))
    return plane


def parse_xspace(data):
    space = {"planes": [], "hostnames": []}
    for num, wt, v in fields(memoryview(data)):
        if num == 1:
            space["planes"].append(parse_plane(v))
        elif num == 4:
            space["hostnames"].append(bytes(v).decode("utf-8", "replace"))
    return space


def xplane_reference(path):
    with open(path, "rb") as f:
        space = parse_xspace(f.read())
    out = {"planes": {}, "events": 0}
    for p in space["planes"]:
        per_line = {}
        for line in p["lines"]:
            total = sum(e["duration_ps"] for e in line["events"])
            per_line[line["name"]] = (len(line["events"]), total)
            out["events"] += len(line["events"])
        out["planes"][p["name"]] = per_line
    out["space"] = space
    return out


def stat_name(plane, st):
    return plane["stat_metadata"].get(st["metadata_id"], {}).get("name", "")


def device_reference(path):
    """Per device plane: kernels (count, and count and time per name), memcpys, their bytes, the
    union of device time; host launch events (those with a correlation_id)."""
    sp = parse_xspace(open(path, "rb").read())
    out = {"kernels": collections.Counter(), "by_name": {}, "busy_ns": {}, "memcpys": 0,
           "memcpy_bytes": 0, "launches": 0, "host_events": 0, "memory_events": 0}
    for p in sp["planes"]:
        name = p["name"]
        if name.startswith("/host:CPU"):
            for line in p["lines"]:
                for e in line["events"]:
                    names = {stat_name(p, s) for s in e["stats"]}
                    ename = p["event_metadata"].get(e["metadata_id"], {}).get("name", "")
                    if ename in ("MemoryAllocation", "MemoryDeallocation") and "allocation_bytes" in names:
                        out["memory_events"] += 1
                        continue
                    out["host_events"] += 1
                    out["launches"] += "correlation_id" in names
            continue
        if not name.startswith("/device:GPU:"):
            continue
        dev = int(name.rsplit(":", 1)[1])
        iv = []
        for line in p["lines"]:
            for e in line["events"]:
                md = p["event_metadata"].get(e["metadata_id"], {})
                ename = md.get("name") or md.get("display_name", "")
                ts = line["timestamp_ns"] + e["offset_ps"] // 1000
                dur = e["duration_ps"] // 1000
                iv.append((ts, ts + dur))
                stats = {stat_name(p, s): s for s in e["stats"]}
                if "memcpy_details" in stats or ename.startswith(("Memcpy", "Copy")):
                    out["memcpys"] += 1
                    s = stats.get("memcpy_details")
                    if s:
                        text = p["stat_metadata"].get(s["value"], {}).get("name", "") if s.get("ref") else s["value"].decode()
                        for part in text.split():
                            if part.startswith("size:"):
                                out["memcpy_bytes"] += int(part[5:])
                    continue
                out["kernels"][dev] += 1
                c, t = out["by_name"].get(ename, (0, 0))
                out["by_name"][ename] = (c + 1, t + dur)
        if iv:
            from nsys_reference import union_ns
            out["busy_ns"][dev] = union_ns(iv)
    return out
