"""Test data from other projects' repositories lives in the shared data folder, not in the
repository. ONE setting: env MLPROF_SHARED_DIR, default <repository root>/../shared.

A script asks `shared_path(rel)` for each file; a missing file is reported once (SKIP ...) and
gives None, so the script can go on with the rest. At the end `exit_code(failures)` is 1 on a
failure, 77 (ctest's SKIP_RETURN_CODE) when some shared data was absent, else 0.
"""
import os
import sys

SKIP = 77
_missing = []


def shared_dir():
    env = os.environ.get("MLPROF_SHARED_DIR")
    if env:
        return env
    repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    return os.path.join(os.path.dirname(repo), "shared")


def shared_path(rel):
    path = os.path.join(shared_dir(), rel)
    if os.path.exists(path):
        return path
    if path not in _missing:
        _missing.append(path)
        print(f"SKIP: shared test data {path} is absent (set MLPROF_SHARED_DIR to the shared data "
              "folder; default <repository root>/../shared)")
    return None


def require(rel):
    """The path, or exit 77 at once: for a script that has nothing to check without it."""
    path = shared_path(rel)
    if path is None:
        sys.exit(SKIP)
    return path


def exit_code(failures):
    if failures:
        return 1
    return SKIP if _missing else 0
