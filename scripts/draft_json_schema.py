#!/usr/bin/env python3
"""Drafts schemas/NAME.schema.json from examples of an output (docs/json.md, "A new output").

    scripts/draft_json_schema.py NAME 'what it is' EXAMPLE.json [EXAMPLE.json ...] > schemas/NAME.schema.json

A key is required where every example has it; a number may be null (NaN is written as null);
units come from the key's suffix (_ns, _bytes, _pct, ...). Read and edit the draft before
committing it: the examples decide what is required, so give it varied inputs."""
import json
import sys

UNITS = [("_ns", "nanoseconds"), ("_us", "microseconds"), ("_ms", "milliseconds"),
         ("_bytes", "bytes"), ("_pct", "percent (0-100 of its basis)"), ("_gbps", "GB/s"),
         ("_gb_s", "GB/s"), ("_tflops", "TFLOP/s"), ("_flops", "floating-point operations"),
         ("_per_step", "per step"), ("_per_s", "per second"), ("_count", "count")]


def unit_of(key):
    for suffix, unit in UNITS:
        if key.endswith(suffix):
            return unit
    if key in ("count", "calls", "steps", "events"):
        return "count"
    return None


def kind(v):
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, (int, float)):
        return "number"
    if isinstance(v, str):
        return "string"
    if isinstance(v, list):
        return "array"
    return "object"


def infer(values, key=None):
    kinds = {kind(v) for v in values}
    if "number" in kinds:
        kinds.add("null")  # NaN and infinities are written as null
    s = {}
    types = sorted(kinds)
    s["type"] = types[0] if len(types) == 1 else types
    unit = unit_of(key) if key else None
    if unit and "number" in kinds:
        s["description"] = unit
    objs = [v for v in values if isinstance(v, dict)]
    if objs:
        keys = []
        for o in objs:
            for k in o:
                if k not in keys:
                    keys.append(k)
        s["properties"] = {k: infer([o[k] for o in objs if k in o], k) for k in keys}
        req = [k for k in keys if all(k in o for o in objs)]
        if req:
            s["required"] = req
    arrs = [v for v in values if isinstance(v, list)]
    if arrs:
        items = [x for a in arrs for x in a[:300]]
        if items:
            s["items"] = infer(items, key)
            s["items"].pop("description", None) if not unit else None
    return s


def draft(name, title, docs):
    ok = [d for d in docs if "unavailable" not in d]
    body = infer(ok) if ok else {"type": "object"}
    props = body.get("properties", {})
    props.pop("schema", None)
    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": f"{name}.schema.json",
        "title": f"mlprof.{name}/1",
        "description": title,
        "type": "object",
        "required": ["schema"],
        "properties": {"schema": {"const": f"mlprof.{name}/1"},
                       "unavailable": {"type": "string",
                                       "description": "why the input has no data for it"}},
    }
    schema["properties"].update(props)
    schema["if"] = {"required": ["unavailable"]}
    schema["then"] = {}
    schema["else"] = {"required": [k for k in body.get("required", []) if k != "schema"]}
    return schema


if __name__ == "__main__":
    name, title, files = sys.argv[1], sys.argv[2], sys.argv[3:]
    docs = [json.load(open(f)) for f in files]
    print(json.dumps(draft(name, title, docs), indent=2))
