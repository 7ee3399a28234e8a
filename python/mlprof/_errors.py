"""mlprof's exceptions. Every error mlprof raises is an mlprof.Error; messages are the CLI's
one line ("PATH: what is wrong")."""

from ._core import AnalysisError, Error, LoadError, SessionError


class TraceNotFoundError(LoadError, FileNotFoundError):
    """The path given to mlprof.load() does not exist."""


__all__ = ["Error", "LoadError", "TraceNotFoundError", "SessionError", "AnalysisError"]
