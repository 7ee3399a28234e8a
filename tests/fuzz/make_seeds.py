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
"""
import gzip
import json
import os
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


main()
