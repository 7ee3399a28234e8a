#!/usr/bin/env bash
# Ingestion speed of the non-JSON importers (issue 34): `mlprof summary` on each shared file,
# best wall time of 3, MB/s of the file, peak RSS and RSS / file size; baseline in the same run:
# Python reading the same rows (sqlite3 for nsys: tests/py/nsys_reference.py), its time and RSS.
#   usage: bench/formats_bench.sh [MLPROF]
set -euo pipefail
cd "$(dirname "$0")/.."
MLPROF=${1:-./build/mlprof}
S=${MLPROF_SHARED_DIR:-../shared}/traces
python3 - "$MLPROF" "$S" <<'PY'
import os, resource, subprocess, sys, time
mlprof, S = sys.argv[1:]
def run(cmd):  # (best wall s of 3, peak RSS MB of one run, in a fresh child each time)
    best, rss = 1e9, 0
    for _ in range(3):
        pid_rss = subprocess.run(["/usr/bin/env", "python3", "-c",
            "import resource,subprocess,sys,time;t=time.perf_counter();"
            "subprocess.run(sys.argv[1:],check=True,stdout=subprocess.DEVNULL,stderr=subprocess.DEVNULL);"
            "print(time.perf_counter()-t, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)", *cmd],
            check=True, capture_output=True, text=True).stdout.split()
        best = min(best, float(pid_rss[0]))
        rss = max(rss, int(pid_rss[1]) / 1024)
    return best, rss
ref = os.path.join(os.getcwd(), "tests/py")
# Larger inputs made from the real ones (generation not timed): an nsys export whose event
# tables hold 40 time-shifted copies of their rows, and an XSpace file repeated 200 times
# (concatenated protobuf messages are one message with the repeated fields appended).
import shutil, sqlite3, tempfile
tmp = tempfile.mkdtemp()
big_nsys = os.path.join(tmp, "mfu_2gpu_before_x40.sqlite")
src = os.path.join(S, "nsys/mfu_2gpu_before.sqlite")
if os.path.exists(src):
    shutil.copy(src, big_nsys)
    db = sqlite3.connect(big_nsys)
    span = 400_000_000
    for t in ["CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET",
              "CUPTI_ACTIVITY_KIND_RUNTIME", "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION", "NVTX_EVENTS"]:
        cols = [r[1] for r in db.execute(f"PRAGMA table_info({t})")]
        sel = ", ".join(f"{c} + :k * {span}" if c in ("start", "end") else
                        (f"correlationId + :k * 10000000" if c == "correlationId" else c) for c in cols)
        for k in range(1, 40):
            db.execute(f"INSERT INTO {t} ({', '.join(cols)}) SELECT {sel} FROM {t} WHERE start < {span} + (SELECT MIN(start) FROM {t})", {"k": k})
    db.commit()
    db.close()
big_x = os.path.join(tmp, "te_fused_attn_x200.xplane.pb")
src = os.path.join(S, "jax/te_fused_attn.xplane.pb")
if os.path.exists(src):
    open(big_x, "wb").write(open(src, "rb").read() * 200)
files = [("nsys", "nsys/" + n) for n in ["mfu_2gpu_before.sqlite", "h100_2gpu_1s.sqlite"]]
files += [("xplane", "jax/" + n) for n in ["jax_conv_minimal_legacy/chi-mi300x-013.ord.vultr.cpe.ice.amd.com.xplane.pb", "te_fused_attn.xplane.pb"]]
print("| file | format | MB | mlprof summary s | MB/s | RSS MB | RSS / file | baseline | baseline s | baseline RSS MB |")
print("| --- | --- | ---: | ---: | ---: | ---: | ---: | --- | ---: | ---: |")
files += [("nsys", big_nsys), ("xplane", big_x)]
for fmt, rel in files:
    path = os.path.join(S, rel)  # an absolute rel stays as it is
    if not os.path.exists(path):
        print(f"SKIP: {path} absent", file=sys.stderr); continue
    mb = os.path.getsize(path) / 1e6
    r = subprocess.run([mlprof, "summary", path], capture_output=True)
    if r.returncode != 0:
        print(f"SKIP: {rel}: mlprof cannot read it yet", file=sys.stderr); continue
    t, rss = run([mlprof, "summary", path])
    if fmt == "nsys":
        base = ["python3", "-c", f"import sys; sys.path.insert(0, {ref!r}); import nsys_reference as r; r.nsys_reference({path!r})"]
        bname = "python sqlite3 reference"
    else:
        base = ["python3", "-c", f"import sys; sys.path.insert(0, {ref!r}); import xplane_reference as r; r.xplane_reference({path!r})"]
        bname = "python wire decoder reference"
    bt, brss = run(base)
    print(f"| {os.path.basename(rel)} | {fmt} | {mb:.2f} | {t:.3f} | {mb / t:.1f} | {rss:.0f} | {rss / mb:.1f} | {bname} | {bt:.3f} | {brss:.0f} |")
shutil.rmtree(tmp)
PY
