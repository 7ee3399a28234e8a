#!/usr/bin/env python3
"""Writes a TORCH_TRACE structured log with N compile ids (frame F, recompiles 0-3 of each,
every 5th compile restarted once after a graph break, so half the frames need another record's
code object and every restart its first attempt's caller), each with a dynamo_start stack,
chromium B/E phases (the compile id in the payload), compilation_metrics and an FX graph cache
miss artifact. For bench/compile_scale.sh and the scale/cancel tests.
  usage: gen_compile_log.py N OUT"""
import hashlib
import sys

n, out = int(sys.argv[1]), sys.argv[2]
PREFIX = "V1206 15:24:45.403000 1667746 torch/_dynamo/convert_frame.py:1] "


def entry(f, envelope, payload=None):
    if payload is None:
        f.write(PREFIX + envelope + "}\n")
        return
    md5 = hashlib.md5(payload.encode()).hexdigest()
    f.write(PREFIX + envelope + ', "has_payload": "%s"}\n' % md5)
    for line in payload.split("\n"):
        f.write("\t" + line + "\n")


with open(out, "w") as f:
    entry(f, '{"str": ["/home/u/train.py", 0]')
    entry(f, '{"str": ["/usr/lib/python3/site-packages/torch/_dynamo/eval_frame.py", 1]')
    ids = 0
    i = 0
    while ids < n:
        frame, compile_ = i // 4, i % 4
        i += 1
        attempts = 2 if i % 5 == 0 else 1
        for attempt in range(attempts):
            if ids >= n:
                break
            ids += 1
            idj = '"compiled_autograd_id": null, "frame_id": %d, "frame_compile_id": %d, ' \
                  '"attempt": %d' % (frame, compile_, attempt)
            short = "%d/%d" % (frame, compile_)
            ts = 1733527485402945 + ids * 1000
            if attempt == 0:
                entry(f, '{"dynamo_start": {"stack": [{"line": %d, "name": "step", "filename": 0}, '
                      '{"line": 410, "name": "_fn", "filename": 1}]}, %s' % (10 + frame % 1000, idj))
            entry(f, '{"chromium_event": {}, ' + idj,
                  '{"name": "entire_frame_compile", "ts": %d, "args": {"compile_id": "%s"}, '
                  '"ph": "B", "cat": "dynamo_timed", "tid": 0, "pid": 0}' % (ts, short))
            restart = attempts == 2 and attempt == 0
            metrics = {
                # A restarted attempt has no code object: it takes its frame's other record's.
                "co_name": "" if restart else "fn_%d" % frame,
                "co_filename": "/home/u/train.py", "co_firstlineno": 10 + frame % 1000,
                "entire_frame_compile_time_s": 0.25, "backend_compile_time_s": 0.125,
                "restart_reasons": ["graph break in fn_%d" % frame] if restart else [],
                "recompile_reason": "%s: tensor 'x' size mismatch at index 0. expected %d, actual %d"
                                    % (short, compile_, compile_ + 1) if compile_ else "",
                "fail_type": None, "graph_op_count": 7}
            import json
            entry(f, '{"compilation_metrics": %s, %s' % (json.dumps(metrics), idj))
            entry(f, '{"artifact": {"name": "fx_graph_cache_miss", "encoding": "json"}, ' + idj,
                  '{"key": "f%08x", "components": []}' % ids)
            entry(f, '{"chromium_event": {}, ' + idj,
                  '{"name": "entire_frame_compile", "ts": %d, "args": {"compile_id": "%s"}, '
                  '"ph": "E", "cat": "dynamo_timed", "tid": 0, "pid": 0}' % (ts + 250000, short))
