"""mlprof from Python: record on the C++ recorder, benchmark functions, profile PyTorch models
layer by layer, and analyze traces at the CLI's speed. See docs/python.md.

    import mlprof
    with mlprof.Session() as s:
        with mlprof.profile("forward"):
            ...
    print(s)
    t = mlprof.load("trace.json.gz"); t.ops()
"""

from . import _core
from ._core import profile
from ._errors import AnalysisError, Error, LoadError, SessionError, TraceNotFoundError
from ._record import (Session, counter, disable, enable, global_session, instant, is_enabled,
                      set_thread_name, start, step, step_scope, stop)
from ._bench import BenchmarkResult, benchmark, compare
from ._memory import MemoryTracker, host_rss_bytes
from ._results import Result
from ._trace import Trace, load
from . import torch  # noqa: E402  (imports torch itself only when used)

__version__ = "0.1.0"

__all__ = [
    "profile", "Session", "global_session", "start", "stop", "enable", "disable", "is_enabled",
    "step", "step_scope", "counter", "instant", "set_thread_name", "load", "Trace", "Result", "Error",
    "LoadError", "TraceNotFoundError", "SessionError", "AnalysisError", "benchmark", "compare",
    "BenchmarkResult", "MemoryTracker", "host_rss_bytes",
]
