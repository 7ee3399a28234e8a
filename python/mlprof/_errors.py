"""mlprof's exceptions. Every error mlprof raises is an mlprof.Error; messages are the CLI's
one line ("PATH: what is wrong")."""

# TraceNotFoundError (a LoadError and a FileNotFoundError) is made in C++: a load that fails as
# not found raises it there (python/src/errors.cpp).
from ._core import AnalysisError, Error, LoadError, SessionError, TraceNotFoundError

__all__ = ["Error", "LoadError", "TraceNotFoundError", "SessionError", "AnalysisError"]
