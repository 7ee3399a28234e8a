"""docs/traces.md's "Bad input" example says what mlprof prints: its `printf ... > cut.json` is
run in a scratch folder, then each `$ ./build/mlprof ... cut.json ...` line of the example, and
every `mlprof: ...` line the docs show under it must be a line of the real stderr; the byte the
`summary --json` sentence quotes (`"first_byte": N`) must be the real one. The expected offset is
the input's length (the file ends inside an event), counted here, not taken from mlprof. Found:
the docs said byte 62 of a 63-byte file, and `--strict: 1 import problems`.
Usage: test_doc_bad_input.py MLPROF."""
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import check, finish  # noqa: E402

MLPROF = os.path.abspath(sys.argv[1])
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
text = open(os.path.join(REPO, "docs", "traces.md")).read()
section = text.split("## Bad input", 1)[1].split("\n## ", 1)[0]

with tempfile.TemporaryDirectory() as tmp:
    make = re.search(r"^\$ (printf .*> cut\.json)$", section, re.M)
    check(make is not None, "the example's printf line")
    subprocess.run(["bash", "-c", make.group(1)], cwd=tmp, check=True)
    size = os.path.getsize(os.path.join(tmp, "cut.json"))
    data = open(os.path.join(tmp, "cut.json"), "rb").read()
    check(data.count(b"{") == 2 and data.endswith(b'{"ph":"X"'), "cut.json ends inside its 2nd event")

    ran = 0
    for block in re.findall(r"```\n(.*?)```", section, re.S):
        lines = block.split("\n")
        for i, line in enumerate(lines):
            m = re.match(r"\$ \./build/mlprof (.*cut\.json.*)$", line)
            if not m:
                continue
            args = shlex.split(m.group(1))
            p = subprocess.run([MLPROF, *args], cwd=tmp, capture_output=True, text=True)
            err = p.stderr.splitlines()
            ran += 1
            for shown in lines[i + 1:]:
                if shown.startswith("$"):
                    break
                if shown.startswith("mlprof: "):
                    check(shown in err, f"`{line}` prints {shown!r} (real: {err})")
                    if "byte " in shown:
                        check(f"byte {size}:" in shown, f"{shown!r}: the cut is at byte {size}")
            check(p.returncode == (2 if "--strict" in args else 0),
                  f"`{line}`: exit {p.returncode}")
    check(ran == 2, f"the example runs summary and summary --strict ({ran} runs)")

    quoted = re.search(r'"first_byte": (\d+)', section)
    check(quoted is not None, "the summary --json sentence quotes first_byte")
    p = subprocess.run([MLPROF, "summary", "cut.json", "--json"], cwd=tmp, capture_output=True,
                       text=True)
    real = json.loads(p.stdout)["import"]["problems"]["truncated"]["first_byte"]
    check(real == size and int(quoted.group(1)) == real,
          f"first_byte: docs {quoted.group(1)}, mlprof {real}, file size {size}")
finish()
