"""`python -m mlprof ARGS` and the `mlprof` command pip installs: run the mlprof binary.

The wheel carries the binary and the capture libraries `mlprof run` injects in mlprof/_bin/
(setup.py); the binary finds those next to itself. In a build tree (PYTHONPATH=build/python) the
binary is build/mlprof. MLPROF_BIN names another one.
"""
import os
import sys


def binary_path():
    """The mlprof binary this package runs, or None."""
    here = os.path.dirname(os.path.abspath(__file__))
    candidates = [os.environ.get("MLPROF_BIN", ""), os.path.join(here, "_bin", "mlprof"),
                  os.path.join(here, "..", "..", "mlprof")]  # <build>/python/mlprof -> <build>
    for path in candidates:
        if path and os.path.isfile(path) and os.access(path, os.X_OK):
            return os.path.abspath(path)
    return None


def main(argv=None):
    args = sys.argv[1:] if argv is None else list(argv)
    path = binary_path()
    if path is None:
        sys.stderr.write("mlprof: the mlprof binary is not in this Python package "
                         "(reinstall with `pip install .`, or set MLPROF_BIN)\n")
        return 1
    sys.stdout.flush()
    sys.stderr.flush()
    # argv[0] "mlprof": the binary's usage lines name the command the user typed.
    os.execv(path, ["mlprof", *args])


if __name__ == "__main__":
    sys.exit(main())
