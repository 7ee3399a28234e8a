#!/usr/bin/env python3
"""Writes one synthetic rank trace with many collective calls, a source for gen_ranks.py when the
cross-rank analysis (every call of every rank matched by group and sequence) is what is measured:
the real rank traces in the shared folder have 10-21 calls each.

One ProfilerStep, then N all-reduces on NCCL stream 7 (1 ms apart, 200 us each, message sizes
cycling through 4 KiB..8 MiB of floats, process group "0" of ranks [0, 1]) and a gemm on stream 8
after each. Usage: make_collective_rank.py OUT.json [-n N]   (N = 5000)
"""
import argparse
import json

ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
ap.add_argument("out")
ap.add_argument("-n", type=int, default=5000)
a = ap.parse_args()
ev = [{"ph": "X", "pid": 1, "tid": 1, "name": "ProfilerStep#1", "cat": "user_annotation",
       "ts": 0, "dur": 1000 * a.n + 1000}]
for k in range(a.n):
    ev.append({"ph": "X", "pid": 0, "tid": 7, "name": "ncclKernel_AllReduce_RING_LL_Sum_float(x)",
               "cat": "kernel", "ts": 100 + 1000 * k, "dur": 200,
               "args": {"stream": 7, "device": 0, "Collective name": "allreduce",
                        "In msg nelems": 1 << (10 + k % 12), "dtype": "Float", "Group size": 2,
                        "Process Group Name": "0", "Process Group Ranks": "[0, 1]"}})
    ev.append({"ph": "X", "pid": 0, "tid": 8, "name": "gemm", "cat": "kernel",
               "ts": 400 + 1000 * k, "dur": 300, "args": {"stream": 8, "device": 0}})
with open(a.out, "w") as f:
    json.dump({"distributedInfo": {"rank": 0, "world_size": 2},
               "baseTimeNanoseconds": 1700000000000000000, "traceEvents": ev}, f)
