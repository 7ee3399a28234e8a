#!/usr/bin/env python3
"""Writes the fuzzers' seed corpora: small inputs (a few hundred bytes to a few KiB) that between
them reach every event kind and every branch of the importer a real trace reaches, written here
by hand (nothing copied from real traces, so the corpus can be committed in spirit and rebuilt).

  make_seeds.py OUT_DIR

OUT_DIR/import:  Chrome/Kineto JSON (object and bare array, plain and gzip): X, B/E, b/e/n async
                 with id and id2, instants of every scope, R/O/N/P/... kept as instants, C
                 counters (numbers, numeric strings, several keys), flows v1 (s/t/f, bp) and v2
                 (bind_id, flow_in/out), M metadata (names, sort indexes, labels, a bad ts),
                 [memory]/[OutOfMemory] on CPU/CUDA/HIP, GPU kernels (args.device/stream, "stream
                 7" labels), thread time (tts/tdur), string and numeric pids/tids, every
                 top-level key Kineto writes, escapes, non-ASCII, exponents, big integers, nested
                 args; and damaged forms: cut mid-file, trailing commas, raw newlines, {}, a
                 missing ',', data after the document, an X without dur, bad field types.
OUT_DIR/native:  the same traces as input for the .mlprof fuzzer's JSON mode (its first byte
                 selects the mode; run_fuzz.sh turns them into .mlprof payload seeds).
OUT_DIR/serve:   raw HTTP requests for the serve fuzzer (every endpoint, Host forms, bodies,
                 encoded paths, traversal attempts).
OUT_DIR/pickle:  CUDA memory snapshots as pickles (protocols 2 and 4: memo, MARK forms, every
                 plain-data opcode, a trace entry of each action, segments with blocks, frames
                 lists shared through the memo) and as JSON; hostile ones: nested 2,000 deep
                 (compact: "]" x N, "a" x N-1), cycles through the memo, a 2 GB string and a
                 huge memo index announced, times beyond the 64-bit span bound.
OUT_DIR/compile_log: torch.compile structured logs (every entry kind the reader uses, payloads,
                 CRLF, blank lines, bad md5, corrupt JSON), NUL-separated rank logs that differ,
                 an envelope nested 2,000 deep, and many compile ids in few bytes.
"""
import struct
import gzip
import json
import os
import pickle
import sys

OUT = sys.argv[1] if len(sys.argv) > 1 else "corpus"


def ev(ph, name="op", pid=1, tid=1, ts=1.0, **kw):
    e = {"ph": ph, "name": name, "pid": pid, "tid": tid, "ts": ts}
    e.update(kw)
    return e


def kineto(events, **top):
    doc = {"schemaVersion": 1,
           "deviceProperties": [{"id": 0, "name": "GPU", "totalGlobalMem": 85000000000,
                                 "computeMajor": 9, "computeMinor": 0, "numSms": 132,
                                 "maxThreadsPerBlock": 1024, "maxThreadsPerMultiprocessor": 2048,
                                 "regsPerBlock": 65536, "regsPerMultiprocessor": 65536,
                                 "warpSize": 32, "sharedMemPerBlock": 49152,
                                 "sharedMemPerMultiprocessor": 233472}],
           "distributedInfo": {"backend": "nccl", "rank": 0, "world_size": 2},
           "baseTimeNanoseconds": 1700000000000000000,
           "displayTimeUnit": "ms",
           "traceName": "seed"}
    doc.update(top)
    doc["traceEvents"] = events
    return json.dumps(doc, separators=(",", ":"))


CPU = [
    ev("M", "process_name", pid=1, tid=0, args={"name": "python"}),
    ev("M", "thread_name", pid=1, tid=1, args={"name": "main"}),
    ev("M", "process_sort_index", pid=1, tid=0, args={"sort_index": -1}),
    ev("M", "thread_sort_index", pid=1, tid=1, args={"sort_index": 3}),
    ev("M", "process_labels", pid=1, tid=0, args={"labels": "train"}),
    ev("M", "process_uptime_seconds", pid=1, tid=0, ts="bad", args={"uptime": 5}),
    ev("X", "ProfilerStep#1", ts=10, dur=900, cat="user_annotation"),
    ev("X", "aten::linear", ts=20, dur=300, cat="cpu_op", tts=18, tdur=250,
       args={"External id": 7, "Input Dims": [[64, 128], [256, 128]],
             "Input type": ["float", "float"], "Sequence number": 12, "Fwd thread id": 0}),
    ev("X", "aten::addmm", ts=30, dur=200, cat="cpu_op", args={"External id": 8}),
    ev("X", "cudaLaunchKernel", ts=40, dur=10, cat="cuda_runtime",
       args={"correlation": 99, "External id": 8}),
    ev("B", "dataloader", ts=400, tts=390, args={"worker": 0}),
    ev("X", "inner", ts=410, dur=20),
    ev("E", "dataloader", ts=500, tts=470, args={"items": 64}),
    ev("i", "[memory]", ts=50, cat="cpu_instant_event", s="t",
       args={"Device Type": 0, "Device Id": -1, "Addr": 140000, "Bytes": 4096,
             "Total Allocated": 4096, "Total Reserved": 8192}),
    ev("i", "[memory]", ts=60, cat="cpu_instant_event", s="t",
       args={"Device Type": 1, "Device Id": 0, "Addr": 94000000, "Bytes": -4096,
             "Total Allocated": 0, "Total Reserved": 2097152}),
    ev("i", "[OutOfMemory]", ts=70, cat="cpu_instant_event", s="p",
       args={"Device Type": 6, "Device Id": 1, "Bytes": 1 << 40}),
    ev("I", "mark", ts=80, s="g"),
    ev("R", "mark_r", ts=81),
    ev("O", "snapshot", ts=82, id="0x10", args={"snapshot": {"k": [1, 2]}}),
    ev("P", "sample", ts=83),
    ev("C", "loss", ts=90, args={"value": 0.31}),
    ev("C", "mem", ts=91, args={"rss": "1024", "heap": ".75", "bad": "x1"}),
    ev("b", "async", ts=100, cat="rpc", id=5, tts=99),
    ev("n", "async_step", ts=110, cat="rpc", id=5),
    ev("e", "async", ts=120, cat="rpc", id=5),
    ev("b", "async2", ts=130, cat="rpc", id2={"local": "0xa"}),
    ev("e", "async2", ts=140, cat="rpc", id2={"local": "0xa"}),
    ev("s", "flow", ts=21, cat="fwdbwd", id=1),
    ev("t", "flow", tid=2, ts=600, cat="fwdbwd", id=1),
    ev("f", "flow", tid=3, ts=700, cat="fwdbwd", id=1),
    ev("f", "flow", tid=3, ts=710, cat="fwdbwd", id=2, bp="e"),
    ev("s", "flow", ts=705, cat="fwdbwd", id=2),
    ev("X", "bwd", tid=2, ts=600, dur=50),
    ev("X", "bwd2", tid=3, ts=700, dur=50, bind_id="0x3", flow_in=True),
    ev("X", "send", tid=3, ts=650, dur=5, bind_id="0x3", flow_out=True),
    ev("X", "pid only", ts=800, dur=1, tid=None),
]
CPU[-1].pop("tid")

GPU = [
    ev("M", "process_name", pid=0, tid=0, args={"name": "GPU 0"}),
    ev("X", "cudaLaunchKernel", pid=1, tid=1, ts=40, dur=10, cat="cuda_runtime",
       args={"correlation": 99}),
    ev("X", "ampere_sgemm_128x64_tn", pid=0, tid=7, ts=60, dur=120, cat="kernel",
       args={"device": 0, "stream": 7, "correlation": 99, "registers per thread": 128,
             "shared memory": 16384, "blocks per SM": 2.5, "warps per SM": 8.0,
             "grid": [128, 1, 1], "block": [256, 1, 1], "est. achieved occupancy %": 25}),
    ev("X", "Memcpy HtoD (Pageable -> Device)", pid=0, tid=7, ts=200, dur=30, cat="gpu_memcpy",
       args={"device": 0, "stream": 7, "bytes": 1048576, "memory bandwidth (GB/s)": 12.5}),
    ev("X", "Memset (Device)", pid=0, tid="stream 8", ts=240, dur=3, cat="Memset"),
    ev("X", "ProfilerStep#1", pid=0, tid=7, ts=10, dur=500, cat="gpu_user_annotation"),
    ev("s", "ac2g", pid=1, tid=1, ts=40, cat="ac2g", id=99),
    ev("f", "ac2g", pid=0, tid=7, ts=60, cat="ac2g", id=99, bp="e"),
]

LEGACY = [  # the old autograd profiler: string pids, no categories, a bare array
    {"name": "aten::mm", "ph": "X", "ts": 1.5, "dur": 3.25, "tid": "7", "pid": "CPU functions",
     "args": {}},
    {"name": "aten::add", "ph": "X", "ts": 5, "dur": 1, "tid": 7, "pid": "CPU functions"},
    {"name": "[memory]", "ph": "i", "ts": 5.5, "tid": 7, "pid": "CPU functions", "s": "t",
     "args": {"Bytes": 64, "Addr": 1, "Device Type": 0}},
]

ODD = [  # values at the edges of what the readers take
    ev("X", "esc\\aped \"name\" \u00e9\u4e2d", ts="1.5", dur="2", cat="c\tat"),
    ev("X", "exp", ts=1e3, dur=2.5e1, args={"big": 18446744073709551615, "bigger":
                                            123456789012345678901234567890, "neg": -0.0,
                                            "f": 1.7976931348623157e308, "t": True, "n": None}),
    ev("X", "float ts", ts=1700000000000000.123, dur=0.001),
    ev("X", "string ids", pid="12", tid="-3", ts=3, dur=1, id="0x1f"),
    ev("X", "nested", ts=4, dur=1, args={"a": {"b": {"c": [1, {"d": "e"}]}}}),
    ev("X", "unknown keys", ts=5, dur=1, sf=3, esf=4, extra={"x": 1}),
    ev("X", "neg dur", ts=6, dur=-1),
    ev("X", "bad tts", ts=7, dur=1, tts="x", tdur=-2),
    ev("B", "unfinished", ts=8),
    ev("E", "orphan end", tid=9, ts=9),
]


def write(dirname, name, data):
    d = os.path.join(OUT, dirname)
    os.makedirs(d, exist_ok=True)
    mode = "wb" if isinstance(data, bytes) else "w"
    with open(os.path.join(d, name), mode) as f:
        f.write(data)


def main():
    whole = {
        "cpu.json": kineto(CPU),
        "gpu.json": kineto(GPU),
        "legacy.json": json.dumps(LEGACY),
        "odd.json": kineto(ODD),
        "mixed_array.json": json.dumps(CPU[6:14] + GPU[1:4]),
        "empty_events.json": kineto([]),
        "bad_top_level.json": kineto(CPU[6:8], schemaVersion="x", deviceProperties={"a": 1},
                                     distributedInfo=[1], baseTimeNanoseconds=-5),
        "events_first.json": '{"traceEvents":' + json.dumps(CPU[6:9]) + ',"schemaVersion":1}',
        "memory_timeline.json": "[[1,2,3,4],[-1,1,5,7]]",
    }
    text = kineto(CPU[:20])
    damaged = {
        "cut_mid_event.json": text[: len(text) * 2 // 3],
        "cut_after_comma.json": text[: text.index("aten::addmm") - 20],
        "trailing_comma.json": '{"traceEvents":[' + json.dumps(CPU[6]) + "," +
                               json.dumps(CPU[7])[:-1] + ',"args2":{"k":1,},}' + ",]}",
        "raw_newline.json": '[{"ph":"X","name":"a\nb","pid":1,"tid":1,"ts":1,"dur":2},'
                            '{"ph":"X","name":"c\td","pid":1,"tid":1,"ts":3,"dur":1}]',
        "empty_event.json": '[{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":2},{}]',
        "missing_comma.json": '[{"ph":"X","name":"a","pid":1,"ts":1,"dur":2}'
                              '{"ph":"X","name":"b","pid":1,"ts":3,"dur":2}]',
        "trailing_data.json": kineto(CPU[6:8]) + '\n{"more":1}',
        "x_without_dur.json": '[{"ph":"X","name":"a","pid":1,"ts":1},'
                              '{"ph":"X","name":"b","pid":1,"ts":2,"dur":1}]',
        "bad_fields.json": '[{"ph":5,"name":"a","ts":1},{"ph":"X","name":1,"ts":1,"dur":1},'
                           '{"ph":"X","name":"c","pid":[1],"ts":1,"dur":1},'
                           '{"ph":"X","name":"d","ts":"1x","dur":1},'
                           '{"ph":"X","name":"e","ts":1,"dur":1,"args":[1]},'
                           '{"ph":"X","name":"f","ts":1,"dur":1,"id":{},"bind_id":[]},'
                           '{"ph":"X","name":"g","ts":1,"dur":1,"flow_in":1,"bp":2},'
                           '{"ph":"X","name":"ok","ts":1,"dur":1}]',
        "invalid_json_event.json": '[{"ph":"X","name":"a","ts":1,"dur":1},'
                                   '{"ph":"X","name":"b","ts":1,"dur":tru},'
                                   '{"ph":"X","name":"c","ts":1,"dur":1}]',
        "cut_in_top_level.json": kineto(CPU[6:8])[:-1] + ',"tail":{"a":[1,2',
    }
    for name, data in {**whole, **damaged}.items():
        write("import", name, data)
        write("native", name, b"\x03" + data.encode())
    # gzip: whole and cut mid-stream.
    gz = gzip.compress(whole["cpu.json"].encode(), 6, mtime=0)
    write("import", "cpu.json.gz", gz)
    write("import", "cut.json.gz", gz[: len(gz) // 2])
    # A larger one (~6 KiB) for the split parse: many small events.
    many = [ev("X", f"op{i % 7}", tid=i % 3, ts=i * 10, dur=5 + i % 4, cat="cpu_op",
               tts=i * 9, tdur=4) for i in range(40)]
    write("import", "many.json", kineto(many))
    write("native", "many.json", b"\x03" + kineto(many).encode())

    requests = {
        "root": "GET / HTTP/1.1\r\nHost: localhost\r\n\r\n",
        "traces": "GET /api/traces HTTP/1.1\r\nHost: 127.0.0.1:6970\r\n\r\n",
        "ops": "GET /api/profiler/ops?trace=a.json HTTP/1.1\r\nHost: [::1]:80\r\n\r\n",
        "summary_head": "HEAD /api/profiler/summary?trace=a.json HTTP/1.0\r\n\r\n",
        "events": "GET /api/profiler/timeline/events?trace=sub%2Fb.json HTTP/1.1\r\n"
                  "Host: localhost.\r\n\r\n",
        "compare": "GET /api/profiler/compare?base=a.json&new=sub/b.json HTTP/1.1\r\n"
                   "Host: x.localhost\r\n\r\n",
        "compare_missing": "GET /api/profiler/compare?base=a.json HTTP/1.1\r\nHost: localhost\r\n\r\n",
        "ranks": "GET /api/profiler/ranks HTTP/1.1\r\nHost: localhost\r\n\r\n",
        "unknown": "GET /api/profiler/nope?trace=a.json HTTP/1.1\r\nHost: localhost\r\n\r\n",
        "traversal": "GET /api/profiler/ops?trace=..%2F..%2Fetc%2Fpasswd HTTP/1.1\r\n"
                     "Host: localhost\r\n\r\n",
        "traversal2": "GET /api/profiler/ops?trace=/etc/passwd&trace=a.json HTTP/1.1\r\n"
                      "Host: localhost\r\n\r\n",
        "hidden": "GET /api/profiler/ops?trace=.hidden.json HTTP/1.1\r\nHost: localhost\r\n\r\n",
        "nul": "GET /api/profiler/ops?trace=a.json%00.x HTTP/1.1\r\nHost: localhost\r\n\r\n",
        "foreign_host": "GET /api/traces HTTP/1.1\r\nHost: evil.example:6970\r\n\r\n",
        "post": "POST /api/traces HTTP/1.1\r\nHost: localhost\r\nContent-Length: 5\r\n\r\nhello",
        "chunked": "GET / HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\n\r\n"
                   "5\r\nhello\r\n0\r\n\r\n",
        "range": "GET / HTTP/1.1\r\nHost: localhost\r\nRange: bytes=0-1,1-2,2-3\r\n\r\n",
        "keepalive": "GET /api/traces HTTP/1.1\r\nHost: localhost\r\n\r\n"
                     "GET /api/profiler/kernels?trace=a.json HTTP/1.1\r\nHost: localhost\r\n\r\n",
        "long_uri": "GET /" + "a" * 300 + " HTTP/1.1\r\nHost: localhost\r\n\r\n",
        "bad_line": "GARBAGE\r\n\r\n",
    }
    for name, data in requests.items():
        write("serve", name, data.encode())
    pickle_seeds()
    compile_log_seeds()


def pickle_seeds():
    frame = {"filename": "/a/model.py", "line": 10, "name": "forward"}
    frames = [frame, {"filename": "/a/train.py", "line": 3, "name": "main"}]
    block = {"address": 1000000, "size": 512, "requested_size": 500, "state": "active_allocated",
             "frames": frames}
    seg = {"device": 0, "address": 1000000, "total_size": 2048, "allocated_size": 512,
           "active_size": 512, "requested_size": 500, "stream": 0, "segment_type": "small",
           "segment_pool_id": (0, 0), "is_expandable": False, "frames": [],
           "blocks": [block, {"address": 1000512, "size": 1536, "state": "inactive",
                              "frames": []}]}
    actions = ["segment_alloc", "alloc", "free_requested", "free_completed", "segment_free",
               "snapshot", "oom", "segment_map", "segment_unmap", "user_defined"]
    entries = [{"action": a, "addr": 1000000 + 512 * (i % 2), "size": 512, "stream": 0,
                "time_us": 1700000000000000 + i, "frames": frames if i % 2 else [],
                "device_free": 1024} for i, a in enumerate(actions)]
    snap = {"segments": [seg], "device_traces": [entries, []],
            "allocator_settings": {"expandable_segments": False, "max_split_size": -1,
                                   "nested": [[1, [2.5, None]], {"k": "v"}]},
            "external_annotations": [{"device": 0, "name": "step", "stage": "START",
                                      "time_us": 1700000000000000},
                                     {"device": 0, "name": "step", "stage": "END",
                                      "time_us": 1700000000000005}]}
    # Written by Python's own pickler (plain data only, as torch.cuda.memory._dump_snapshot):
    # protocol 4 (FRAME, MEMOIZE, SHORT_BINUNICODE), 2 (BINPUT/BINGET, TUPLE2, LONG1).
    write("pickle", "snapshot_p4.pickle", pickle.dumps(snap, protocol=4))
    write("pickle", "snapshot_p2.pickle", pickle.dumps(snap, protocol=2))
    write("pickle", "snapshot.json", json.dumps(snap).encode())
    write("pickle", "proto0.pickle", b"(dp0\nS'x'\np1\nI12\nsF1.5\n0L7L\n0I01\n0.")
    # Hostile: deep nesting (issue 32 item 2: 200,000 levels overflowed the stack; 4 KiB holds
    # 2,000), nested JSON, cycles through the memo, a 2 GB string, a memo index far out.
    write("pickle", "nested_lists.pickle", b"\x80\x04" + b"]" * 2000 + b"a" * 1999 + b".")
    write("pickle", "nested_dicts.pickle",
          b"\x80\x04" + b"}\x8c\x01k" * 600 + b"s" * 599 + b"}s.")
    write("pickle", "nested_tuples.pickle", b"\x80\x04N" + b"\x85" * 3000 + b".")
    write("pickle", "nested_marks.pickle", b"\x80\x04" + b"(" * 2000 + b"l" * 2000 + b".")
    write("pickle", "nested.json", b'{"segments": ' + b"[" * 2000 + b"]" * 2000 + b"}")
    write("pickle", "cycle_self.pickle", b"\x80\x04]\x94h\x00a.")
    write("pickle", "cycle_pair.pickle", b"\x80\x04]\x94]\x94h\x00aa.")
    write("pickle", "cycle_dict.pickle", b"\x80\x04}\x94\x8c\x01kh\x00s.")
    write("pickle", "huge_string.pickle", b"\x80\x04\x8d" + struct.pack("<Q", 2**31) + b"abc")
    write("pickle", "huge_memo.pickle", b"\x80\x04]r\xff\xff\xff\x7fj\xff\xff\xff\x7f.")
    write("pickle", "wide_dup.pickle", b"\x80\x04]" + b"2" * 1000 + b"(" + b"2" * 1000 + b"e.")
    far = dict(snap, device_traces=[[dict(entries[1], time_us=9 * 10**15)]])
    write("pickle", "time_out_of_range.pickle", pickle.dumps(far, protocol=4))


def glog(envelope, payload=None):
    import hashlib
    line = "V1206 15:24:45.403000 1 u.py:1] "
    if payload is None:
        return line + json.dumps(envelope, separators=(",", ":")) + "\n"
    envelope = dict(envelope, has_payload=hashlib.md5(payload.encode()).hexdigest())
    return (line + json.dumps(envelope, separators=(",", ":")) + "\n" +
            "".join("\t" + l + "\n" for l in payload.split("\n")))


def compile_log_seeds():
    def cid(frame, compile_, attempt=0, autograd=None):
        d = {"frame_id": frame, "frame_compile_id": compile_}
        if attempt:
            d["attempt"] = attempt
        if autograd is not None:
            d["compiled_autograd_id"] = autograd
        return d

    def chromium(name, ph, ts, short):
        return glog(dict({"chromium_event": {}}, **cid(0, 0)),
                    json.dumps({"name": name, "ts": ts, "args": {"compile_id": short}, "ph": ph},
                               separators=(",", ":")))

    def metrics(frame, compile_, attempt=0, **kw):
        m = {"co_name": "fn", "co_filename": "/a/t.py", "co_firstlineno": 3,
             "entire_frame_compile_time_s": 0.5, "backend_compile_time_s": 0.25,
             "graph_op_count": 7}
        m.update(kw)
        return glog(dict({"compilation_metrics": m}, **cid(frame, compile_, attempt)))

    entries = [
        glog({"str": ["/a/train.py", 0]}),
        glog({"str": ["/usr/lib/torch/_dynamo/eval_frame.py", 1]}),
        glog(dict({"dynamo_start": {"stack": [{"line": 3, "name": "main", "filename": 0},
                                              {"line": 410, "name": "_fn", "filename": 1}]}},
                  **cid(0, 0))),
        chromium("dynamo", "B", 1000.5, "0/0"),
        chromium("entire_frame_compile", "B", 1001, "0/0"),
        glog(dict({"artifact": {"name": "fx_graph_cache_miss", "encoding": "json"}}, **cid(0, 0)),
             json.dumps({"key": "fabc", "components": []})),
        glog(dict({"artifact": {"name": "dynamo_graph_break_reason", "encoding": "string"}},
                  **cid(0, 0)), "Unsupported: call_function\n  File x.py"),
        glog(dict({"inductor_output_code": {"filename": "/tmp/x.py"}}, **cid(0, 0)),
             "def triton_poi_fused_add_0(): pass\ndef triton_poi_fused_add_0(): pass\n"
             "cpp_fused_mul_1"),
        glog(dict({"artifact": {"name": "inductor_collective_schedule", "encoding": "json"}},
                  **cid(0, 0)), json.dumps(["torch.ops._c10d_functional.all_reduce_.default", {"a": 1}])),
        glog(dict({"artifact": {"name": "inductor_runtime_and_tensor_meta", "encoding": "json"}},
                  **cid(0, 0)), json.dumps({"ops": [{"name": "mm", "outputs": [{"shape": [2, 2]}]}]})),
        chromium("entire_frame_compile", "E", 2001, "0/0"),
        chromium("dynamo", "E", 2002, "0/0"),
        metrics(0, 0, restart_reasons=["graph break"]),
        metrics(0, 0, 1, co_name=""),
        glog(dict({"artifact": {"name": "recompile_reasons", "encoding": "json"}}, **cid(0, 1)),
             json.dumps(["0/1: tensor 'x' size mismatch at index 0. expected 5, actual 6"])),
        metrics(0, 1, fail_type="RuntimeError", fail_reason="boom\nline 2",
                fail_user_frame_filename="/a/train.py", fail_user_frame_lineno=9),
        glog(dict({"compilation_metrics_runtime": {"compile_id": "0/1",
                                                   "runtime_triton_autotune_time_us": 5}},
                  **cid(None, None))),
        chromium("fx_graph_cache_hit", "i", 3000, "0/1"),
        chromium("compile_file", "B", 4000, "None"),
        chromium("compile_file", "E", 4100, "None"),
        glog(dict({"artifact": {"name": "graph_execution", "encoding": "json"}}, **cid(None, None)),
             json.dumps({"graph_execution_order": [{"compile_id": "[0/0]"}, {"compile_id": "[0/1]"}]})),
        glog(dict({"dynamo_start": {"stack": []}}, **cid(1, 0, 0, 2))),
        glog(dict({"describe_tensor": {"id": 0}}, **cid(1, 0, 0, 2))),
    ]
    # Two halves (inputs are capped at 4 KiB): the first compile's entries, then the others.
    write("compile_log", "first_compile.log", "".join(entries[:12]).encode())
    log = "".join(entries[:3] + entries[12:])
    write("compile_log", "log.log", log.encode())
    write("compile_log", "crlf_blank.log", log.replace("\n", "\r\n").replace("\t{", "\n\t{").encode())
    bad = log.replace('"has_payload":"', '"has_payload":"0', 1).replace('"co_name":"fn"', '"co_name":fn', 1)
    write("compile_log", "bad_md5_json.log", bad.encode())
    write("compile_log", "no_newline.log", log.rstrip("\n").encode())
    # Ranks that diverge: another schedule and another compile-id sequence on rank 1.
    small = "".join([
        glog(dict({"artifact": {"name": "inductor_collective_schedule", "encoding": "json"}},
                  **cid(0, 0)), json.dumps(["torch.ops._c10d_functional.all_reduce_.default"])),
        glog(dict({"artifact": {"name": "fx_graph_cache_miss"}}, **cid(0, 0)), '{"key":"k1"}'),
        metrics(0, 0), metrics(0, 1)])
    rank1 = small.replace("all_reduce_", "all_gather_").replace('"frame_compile_id":1',
                                                                 '"frame_compile_id":2')
    write("compile_log", "two_ranks.log", (small + "\0" + rank1 + "\0" + small).encode())
    # Hostile: an envelope nested 2,000 deep (simdjson stops at 1,024), many compile ids in few
    # bytes (the per-id grouping was quadratic: issue 32 item 4), a non-log.
    prefix = "V1206 15:24:45.403000 1 u.py:1] "
    write("compile_log", "nested.log",
          (prefix + '{"dynamo_start": ' + "[" * 2000 + "]" * 2000 + ', "frame_id": 0}\n').encode())
    many = "".join(prefix + '{"compilation_metrics":{},"frame_id":%d,"frame_compile_id":%d,'
                   '"attempt":%d}\n' % (i // 3, i % 3, i % 2) for i in range(34))
    write("compile_log", "many_ids.log", many.encode())
    write("compile_log", "not_a_log.log", b"hello\nworld\n")


main()
