"""An independent check of a .pftrace against Perfetto's own schema: the .proto text in the
shared formats directory (read at test time, never copied here) is parsed for its messages,
fields, types and enums, and the file is decoded by *name* with those field numbers: every field
must exist in its message, with the wire type its declared type needs, recursively; enum values
must be declared. What the decoder sees (track events by type name, descriptors, annotations)
is returned for the test to compare with mlprof's tables.

  schema = load_schema(path_to_perfetto_trace.proto)
  problems, seen = validate(schema, open(f, "rb").read())
"""
import collections
import re

SCALAR_WIRE = {"int32": 0, "int64": 0, "uint32": 0, "uint64": 0, "sint32": 0, "sint64": 0,
               "bool": 0, "fixed64": 1, "sfixed64": 1, "double": 1, "fixed32": 5,
               "sfixed32": 5, "float": 5, "string": 2, "bytes": 2}


def load_schema(path):
    text = open(path, encoding="utf-8").read()
    # One pass, earliest first: a "/*" inside a // comment is text ("/usr/*/llvm").
    text = re.sub(r'"[^"\n]*"|//[^\n]*|/\*.*?\*/',
                  lambda m: m.group(0) if m.group(0).startswith('"') else " ", text, flags=re.S)
    tokens = re.findall(r'"[^"]*"|[A-Za-z_][\w.]*|-?\d+|[{}\[\];=<>,()]', text)
    messages, enums = {}, {}
    scope = []  # (kind, full name)
    i = 0

    def skip_options(j):  # [default = X, deprecated = true]
        if tokens[j] == "[":
            while tokens[j] != "]":
                j += 1
            j += 1
        return j

    while i < len(tokens):
        t = tokens[i]
        if t in ("message", "enum") and i + 2 < len(tokens) and tokens[i + 2] == "{":
            name = ".".join([s[1] for s in scope if s[0] in ("message", "enum")] + [tokens[i + 1]])
            scope.append((t, name))
            (messages if t == "message" else enums)[name] = {}
            i += 3
        elif t in ("oneof", "extend") and tokens[i + 2] == "{":
            scope.append((t, tokens[i + 1]))
            i += 3
        elif t == "}":
            scope.pop()
            i += 1
        elif t == ";":  # "};"
            i += 1
        elif t in ("syntax", "package", "import", "option", "reserved", "extensions"):
            while tokens[i] != ";":
                i += 1
            i += 1
        elif scope and scope[-1][0] == "enum" and tokens[i + 1] == "=":
            enums[scope[-1][1]][int(tokens[i + 2])] = t
            i = skip_options(i + 3) + 1
        elif scope and scope[-1][0] in ("message", "oneof", "extend"):
            label = None
            if t in ("optional", "repeated", "required"):
                label, i = t, i + 1
            if tokens[i] == "map":  # map<K, V> name = N
                ftype, i = "map", i + 6
            else:
                ftype, i = tokens[i], i + 1
            fname, num = tokens[i], int(tokens[i + 2])
            i = skip_options(i + 3) + 1
            owner = [s for s in scope if s[0] == "message"][-1][1]
            if scope[-1][0] != "extend":
                messages[owner][num] = (fname, ftype, label)
        else:
            i += 1
    return {"messages": messages, "enums": enums}


def resolve(schema, scope, name):
    name = name.lstrip(".")
    if name.startswith("perfetto.protos."):
        name = name[len("perfetto.protos."):]
    parts = scope.split(".")
    for k in range(len(parts), -1, -1):
        cand = ".".join(parts[:k] + [name])
        if cand in schema["messages"] or cand in schema["enums"]:
            return cand
    return None


def fields(buf):
    """(number, wire type, value) of a message's fields; raises ValueError when cut."""
    i = 0
    while i < len(buf):
        key, i = varint(buf, i)
        num, wt = key >> 3, key & 7
        if wt == 0:
            v, i = varint(buf, i)
        elif wt == 1:
            v, i = int.from_bytes(buf[i:i + 8], "little"), i + 8
        elif wt == 5:
            v, i = int.from_bytes(buf[i:i + 4], "little"), i + 4
        elif wt == 2:
            n, i = varint(buf, i)
            v, i = buf[i:i + n], i + n
        else:
            raise ValueError(f"wire type {wt}")
        if i > len(buf):
            raise ValueError("field past the end")
        yield num, wt, v


def varint(buf, i):
    shift = v = 0
    while True:
        if i >= len(buf):
            raise ValueError("varint past the end")
        b = buf[i]
        v |= (b & 0x7F) << shift
        i += 1
        if not b & 0x80:
            return v, i
        shift += 7


def validate(schema, data):
    """Problems found, and what was seen: {"events": Counter(type name), "tracks": {uuid: kind},
    "event_tracks": [uuids], "annotations": Counter(name), ...}."""
    problems, seen = [], collections.defaultdict(collections.Counter)
    msgs, enums = schema["messages"], schema["enums"]

    def walk(buf, mname, path, out):
        try:
            for num, wt, v in fields(buf):
                f = msgs[mname].get(num)
                if f is None:
                    problems.append(f"{path}: field {num} is not in {mname}")
                    continue
                fname, ftype, label = f
                out.setdefault(fname, []).append(v)
                t = resolve(schema, mname, ftype) if ftype not in SCALAR_WIRE else None
                if ftype in SCALAR_WIRE:
                    need = SCALAR_WIRE[ftype]
                    if wt != need and not (label == "repeated" and wt == 2 and need != 2):
                        problems.append(f"{path}.{fname}: wire type {wt}, {ftype} needs {need}")
                    if ftype == "string" and wt == 2:
                        try:
                            bytes(v).decode("utf-8")
                        except UnicodeDecodeError:
                            problems.append(f"{path}.{fname}: not UTF-8")
                elif t in enums:
                    if wt != 0:
                        problems.append(f"{path}.{fname}: enum with wire type {wt}")
                    elif v not in enums[t]:
                        problems.append(f"{path}.{fname}: {v} is not a value of {t}")
                    else:
                        out.setdefault(fname + ":enum", []).append(enums[t][v])
                elif t in msgs:
                    if wt != 2:
                        problems.append(f"{path}.{fname}: message with wire type {wt}")
                    else:
                        sub = {}
                        walk(v, t, f"{path}.{fname}", sub)
                        out.setdefault(fname + ":msg", []).append(sub)
                elif ftype != "map":
                    problems.append(f"{path}.{fname}: type {ftype} not in the schema")
        except ValueError as e:
            problems.append(f"{path}: {e}")

    top = {}
    walk(memoryview(data), "Trace", "Trace", top)
    tracks, event_tracks = {}, []
    for pkt in top.get("packet:msg", []):
        for td in pkt.get("track_descriptor:msg", []):
            uuid = td.get("uuid", [None])[0]
            kind = ("process" if "process" in td else "thread" if "thread" in td else
                    "counter" if "counter" in td else "track")
            tracks[uuid] = kind
            seen["descriptors"][kind] += 1
            for c in td.get("counter:msg", []):
                for u in c.get("unit:enum", []):
                    seen["counter units"][u] += 1
        for te in pkt.get("track_event:msg", []):
            typ = te.get("type:enum", ["TYPE_UNSPECIFIED"])[0]
            seen["events"][typ] += 1
            event_tracks.append(te.get("track_uuid", [None])[0])
            seen["flow ids"]["out"] += len(te.get("flow_ids", []))
            seen["flow ids"]["terminating"] += len(te.get("terminating_flow_ids", []))
            for d in te.get("debug_annotations:msg", []):
                for n in d.get("name", []):
                    seen["annotations"][bytes(n).decode()] += 1
            for n in te.get("name", []):
                seen["inline names"][bytes(n).decode()] += 1
    missing = {u for u in event_tracks if u not in tracks}
    if missing:
        problems.append(f"events on {len(missing)} tracks without a descriptor")
    return problems, seen
