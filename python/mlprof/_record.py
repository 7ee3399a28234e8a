"""Recording from Python: decorators, explicit sessions and the global session, all on the C++
recorder (mlprof._core). The context manager itself, mlprof.profile, is a C-level type."""

import functools
import os

from . import _core
from ._trace import Trace


def _decorate(fn, name, category):
    """The wrapper @mlprof.profile puts around a function: one recorded scope per call."""
    if name is None:
        name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or repr(fn)
    scope = _core.profile(name, category=category)

    @functools.wraps(fn)
    def profiled(*args, **kwargs):
        with scope:
            return fn(*args, **kwargs)

    profiled.__mlprof_scope__ = scope
    return profiled


_core._set_decorator(_decorate)


def _save_by_extension(trace, path):
    trace.save(os.fspath(path))


class Session:
    """A recording session on the C++ recorder.

        with mlprof.Session() as s:
            train()
        print(s)              # the readable summary
        s.ops()               # per-op statistics (DataFrame)
        s.save("run.mlprof")  # or "run.json" (Chrome trace JSON)

    Options default to the MLPROF_* environment (MLPROF_BUFFER_MB, MLPROF_SAMPLE,
    MLPROF_RSS_INTERVAL_MS). sample=N records one step in N (mlprof.step()). `output`: written
    when the session stops. One session records at a time per process.
    """

    def __init__(self, sample=None, buffer_mb=None, rss_interval_ms=None, output=None, _core_session=None):
        env = _core.options_from_env()
        opts = dict(
            buffer_mb=env["buffer_mb"] if buffer_mb is None else int(buffer_mb),
            sample=env["sample"] if sample is None else max(1, int(sample)),
            rss_interval_ms=env["rss_interval_ms"] if rss_interval_ms is None else int(rss_interval_ms),
        )
        if _core_session is None:
            self._session = _core.Session(**opts)
        else:
            self._session = _core_session
            if not _core_session.running and (sample, buffer_mb, rss_interval_ms) != (None, None, None):
                _core_session.set_options(**opts)
        self.output = output
        self.trace = None

    @property
    def running(self):
        return self._session.running

    @property
    def options(self):
        return self._session.options

    def start(self):
        self.trace = None
        self._session.start()
        return self

    def stop(self):
        """Stops recording; returns the recorded Trace (also kept as .trace) and writes `output`."""
        self.trace = Trace(self._session.stop())
        if self.output:
            _save_by_extension(self.trace, self.output)
        return self.trace

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        if self.running:
            self.stop()
        return False

    def _recorded(self):
        if self.trace is None:
            from ._errors import SessionError

            raise SessionError("the session has no results yet: stop() it first")
        return self.trace

    # The recorded trace's results, reachable from the session directly.
    def summary(self, top=20):
        return self._recorded().summary(top=top)

    def ops(self, **kwargs):
        return self._recorded().ops(**kwargs)

    def op_stats(self, name):
        return self._recorded().op_stats(name)

    def top(self, n=10, by="total"):
        return self._recorded().top(n, by=by)

    def bottlenecks(self, **kwargs):
        return self._recorded().bottlenecks(**kwargs)

    def save(self, path):
        _save_by_extension(self._recorded(), path)

    def __str__(self):
        if self.trace is None:
            return f"<mlprof.Session {'recording' if self.running else 'not started'}>"
        return self.trace.summary_text()

    def __repr__(self):
        state = "recording" if self.running else ("stopped" if self.trace is not None else "idle")
        return f"<mlprof.Session {state} {self.options}>"


_global = None


def global_session():
    """The process-wide session (what MLPROF_ENABLED=1 / MLPROF_OUTPUT=path start at import and
    write at exit). mlprof.start()/stop() drive it."""
    global _global
    if _global is None:
        _global = Session(_core_session=_core.global_session(), output=None)
    return _global


def start(output=None, sample=None, buffer_mb=None, rss_interval_ms=None):
    """Starts the global session; `output` (.mlprof or .json) is written by stop()."""
    s = global_session()
    if not s.running and (sample, buffer_mb, rss_interval_ms) != (None, None, None):
        env = _core.options_from_env()
        s._session.set_options(
            buffer_mb=env["buffer_mb"] if buffer_mb is None else int(buffer_mb),
            sample=env["sample"] if sample is None else max(1, int(sample)),
            rss_interval_ms=env["rss_interval_ms"] if rss_interval_ms is None else int(rss_interval_ms),
        )
    s.output = output
    return s.start()


def stop():
    """Stops the global session and returns its Trace."""
    return global_session().stop()


def enable():
    """Resumes recording of the running session (all threads)."""
    _core.set_enabled(True)


def disable():
    """Pauses recording of the running session (all threads); scopes cost a branch meanwhile."""
    _core.set_enabled(False)


def is_enabled():
    return _core.enabled()


def step(label="step"):
    """Ends the calling thread's current step and begins the next (call at the top of a loop):
    one slice "ProfilerStep#N" per step, which the step, leak and FLOP analyses read."""
    _core.step(label)


def step_scope(label="step"):
    """One step as a context manager: `with mlprof.step_scope("train"): ...`."""
    return _core.StepScope(label)


counter = _core.counter
instant = _core.instant
set_thread_name = _core.set_thread_name
