"""Shared fixtures of the Python module's tests: the mlprof binary, test data, shared data."""
import json
import os
import subprocess
import sys

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TEST_DATA = os.environ.get("MLPROF_TEST_DATA", os.path.join(REPO, "tests", "data"))
# Real traces from other projects: one setting, MLPROF_SHARED_DIR, default ../shared.
SHARED = os.environ.get("MLPROF_SHARED_DIR", os.path.join(REPO, "..", "shared"))

if "MLPROF_BIN" not in os.environ and os.path.isdir(os.path.join(REPO, "build", "python")):
    sys.path.insert(0, os.path.join(REPO, "build", "python"))


def mlprof_bin():
    return os.environ.get("MLPROF_BIN", os.path.join(REPO, "build", "mlprof"))


def cli_json(*args):
    """`mlprof ARGS --json` parsed: what the CLI says, for comparing with the module. An
    analysis name with "_" is the subcommand with "-" (critical_path -> critical-path)."""
    args = (args[0].replace("_", "-"), *args[1:]) if args else args
    out = subprocess.run([mlprof_bin(), *args, "--json"], check=True, capture_output=True, text=True)
    return json.loads(out.stdout)


def shared_path(*parts):
    path = os.path.join(SHARED, *parts)
    if not os.path.exists(path):
        pytest.skip(f"shared data not found: {path} (set MLPROF_SHARED_DIR)")
    return path


def data_path(name):
    return os.path.join(TEST_DATA, name)
