"""What the test scripts here share: counted checks, mlprof's --json output, ctest's exit codes.

    from checks import check, finish, mlprof_json
    check(value == expected, "what was compared")
    finish()   # prints "N/M checks passed"; exit 1 on a failure, 77 when shared data was absent
"""
import json
import subprocess
import sys

from shared_data import exit_code

_failures = 0
_checked = 0


def check(cond, what):
    global _failures, _checked
    _checked += 1
    if not cond:
        _failures += 1
        print("FAIL", what, flush=True)
    return cond


def mlprof_json(mlprof, *args):
    """`mlprof ARGS --json`, parsed; a non-zero exit raises."""
    return json.loads(subprocess.run([mlprof, *args, "--json"], check=True, capture_output=True,
                                     text=True).stdout)


def finish():
    print(f"{_checked - _failures}/{_checked} checks passed")
    sys.exit(exit_code(_failures))
