"""Turning the engine's JSON into Python results: pandas DataFrames when pandas is installed,
plain lists of dicts otherwise, and Result objects (attribute access + .to_dict()) for the
nested ones."""

import json


def have_pandas():
    try:
        import pandas  # noqa: F401
    except ImportError:
        return False
    return True


def table(rows, columns=None):
    """A DataFrame of `rows` (a list of dicts) with the CLI's column names, or the list itself
    without pandas."""
    if not have_pandas():
        return list(rows)
    import pandas as pd

    if not rows and columns:
        return pd.DataFrame(columns=columns)
    return pd.DataFrame.from_records(rows, columns=columns)


def columns_frame(columns):
    """A DataFrame of equal-length numpy columns (no row-by-row copy), or the dict itself."""
    if not have_pandas():
        return columns
    import pandas as pd

    return pd.DataFrame(columns, copy=False)


class Result:
    """One analysis' result: the CLI's JSON object, readable as attributes (r.span_ns) or keys
    (r["span_ns"]); .to_dict() gives the plain dict (what `mlprof NAME --json` prints)."""

    def __init__(self, name, data, text=None):
        self._name = name
        self._data = data
        self._text = text

    def to_dict(self):
        return self._data

    def to_json(self, indent=2):
        return json.dumps(self._data, indent=indent)

    def table(self, key):
        """A list field of the result (e.g. steps().table("steps")) as a DataFrame."""
        return table(self._data[key] or [])

    def __getitem__(self, key):
        return self._data[key]

    def __contains__(self, key):
        return key in self._data

    def get(self, key, default=None):
        return self._data.get(key, default)

    def keys(self):
        return self._data.keys()

    def __getattr__(self, key):
        if key.startswith("_"):
            raise AttributeError(key)
        try:
            return self._data[key]
        except KeyError:
            raise AttributeError(f"{self._name} result has no field '{key}'") from None

    def __dir__(self):
        return list(self._data.keys()) + ["to_dict", "to_json"]

    def __repr__(self):
        keys = ", ".join(list(self._data.keys())[:8])
        return f"<mlprof {self._name} result: {keys}{', ...' if len(self._data) > 8 else ''}>"

    def __str__(self):
        return str(self._text) if self._text is not None else self.to_json()
