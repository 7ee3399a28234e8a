"""The mlprof command lines of docs/pytorch-diagnostics.md, docs/traces.md and docs/ranks.md run
as written: each ```sh block's lines that start with `mlprof`, `./build/mlprof` or `G=` (a
variable the next lines use) are run in a scratch copy of the layout the docs assume (the
repository root with build/, tests/ and bench/, the shared data folder beside it as ../shared),
and must exit 0 with output. Found: pytorch-diagnostics.md's examples called a bare `mlprof`,
which is not on the PATH after `make` (exit 127). Left out: serve (a server), curl, mpirun,
benchmarks, placeholders (DIR, RANK_DIR, /shared/job123) and files other lines generate.
Skips (exit 77) without the shared data."""
import os
import re
import subprocess
import sys
import tempfile

MLPROF = os.path.abspath(sys.argv[1])
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from shared_data import require, shared_dir  # noqa: E402
from checks import check, finish  # noqa: E402

require("traces/compile/kineto/xdit_sd_3.5_profile_trace_rank_0.json.gz")
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DOCS = ["pytorch-diagnostics.md", "traces.md", "ranks.md", "roofline.md"]
SKIP = re.compile(r"mlprof serve|curl |mpirun|BASELINE|/tmp/|RANK_DIR|\bDIR\b|/shared/job|bench/")


def commands(doc):
    text = open(os.path.join(REPO, "docs", doc)).read()
    for block in re.findall(r"```sh\n(.*?)```", text, re.S):
        line = ""
        for raw in block.split("\n"):
            if raw.endswith("\\"):
                line += raw[:-1]
                continue
            line, cmd = "", line + raw
            cmd = re.sub(r"\s+#.*$", "", cmd).strip()
            if re.match(r"(\./build/)?mlprof |[A-Z_]+=\S+$|python3 -c ", cmd) and not SKIP.search(cmd):
                yield cmd


with tempfile.TemporaryDirectory() as tmp:
    root = os.path.join(tmp, "repo")
    os.makedirs(os.path.join(root, "build"))
    os.symlink(MLPROF, os.path.join(root, "build", "mlprof"))
    for d in ("tests", "bench"):
        os.symlink(os.path.join(REPO, d), os.path.join(root, d))
    os.symlink(shared_dir(), os.path.join(tmp, "shared"))
    env = {k: v for k, v in os.environ.items() if k != "MLPROF_SHARED_DIR"}
    for doc in DOCS:
        setup = []
        for cmd in commands(doc):
            if re.match(r"[A-Z_]+=\S+$", cmd):
                setup.append(cmd)
                continue
            if cmd.startswith("python3 -c "):  # writes an input the next lines read, once
                p = subprocess.run(["bash", "-c", cmd], cwd=root, env=env, capture_output=True, text=True, timeout=240)
                check(p.returncode == 0, f"{doc}: `{cmd[:60]}...`: exit {p.returncode}, {p.stderr.strip()[-200:]}")
                continue
            script = "\n".join(setup + [cmd])
            p = subprocess.run(["bash", "-c", "set -o pipefail\n" + script], cwd=root, env=env,
                               capture_output=True, text=True, timeout=240)
            wrote = re.search(r"-o (\S+)|> (\S+)$", cmd)
            out = p.stdout.strip() or (wrote and os.path.exists(os.path.join(root, wrote.group(1) or wrote.group(2))))
            check(p.returncode == 0 and out, f"{doc}: `{cmd}`: exit {p.returncode}, {p.stderr.strip()[:200]}")
finish()
