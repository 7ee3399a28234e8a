"""Errors reach Python as the class the one mapping gives their code (include/mlprof/status.h,
issue 24 item 5): not found / too large / bad input are LoadError (not found its subclass
TraceNotFoundError), an output that cannot be written is mlprof.Error (not LoadError: the trace
was fine), a second session is SessionError; the message is the CLI's line for the same
failure."""
import os
import subprocess

import pytest

import mlprof
from conftest import TEST_DATA, mlprof_bin


def cli_stderr(*args, env=None):
    out = subprocess.run([mlprof_bin(), *args], capture_output=True, text=True, env=env)
    return out.returncode, out.stderr.strip()


def test_missing_file_is_not_found_with_the_cli_message(tmp_path):
    missing = tmp_path / "missing.json"
    with pytest.raises(mlprof.TraceNotFoundError) as e:
        mlprof.load(missing)
    assert isinstance(e.value, mlprof.LoadError)
    rc, err = cli_stderr("summary", str(missing))
    assert rc == 2 and err == f"mlprof: {e.value}"
    assert str(e.value) == f"{missing}: cannot open: No such file or directory"


def test_the_class_follows_the_code_of_the_load_itself(tmp_path):
    # The path exists (Python's own check passes) but holds no trace: the C++ load says not
    # found, so the class is TraceNotFoundError, not a bare LoadError (python/src/errors.cpp).
    empty = tmp_path / "no_traces"
    empty.mkdir()
    with pytest.raises(mlprof.TraceNotFoundError) as e:
        mlprof.load(empty)
    assert isinstance(e.value, mlprof.LoadError) and isinstance(e.value, FileNotFoundError)
    rc, err = cli_stderr("summary", str(empty))
    assert rc == 2 and err == f"mlprof: {e.value}"
    # A damaged trace stays a LoadError, not the not-found subclass.
    bad = tmp_path / "truncated.json"
    bad.write_text('{"traceEvents": [ {"ph": "X", ')
    with pytest.raises(mlprof.LoadError) as e:
        mlprof.load(bad)
    assert not isinstance(e.value, mlprof.TraceNotFoundError)


def test_input_past_the_limit_is_a_load_error(tmp_path, monkeypatch):
    big = tmp_path / "big.json"
    big.write_text("[" + ",".join(
        f'{{"ph":"X","name":"op","ts":{i},"dur":1,"pid":1,"tid":1}}' for i in range(30000)) + "]")
    monkeypatch.setenv("MLPROF_MAX_INPUT_MB", "1")
    with pytest.raises(mlprof.LoadError, match="exceeds the input limit of 1 MiB"):
        mlprof.load(big)
    rc, err = cli_stderr("summary", str(big), env=dict(os.environ))
    assert rc == 2 and "exceeds the input limit of 1 MiB" in err


def test_unwritable_output_is_an_error_not_a_load_error(tmp_path):
    t = mlprof.load(os.path.join(TEST_DATA, "tiny_linear.json"))
    out = tmp_path / "no_such_dir" / "t.mlprof"
    with pytest.raises(mlprof.Error) as e:
        t.save(out)
    assert not isinstance(e.value, mlprof.LoadError)
    assert str(e.value) == f"{out}: cannot write: directory {out.parent} does not exist"
    rc, err = cli_stderr("export", os.path.join(TEST_DATA, "tiny_linear.json"), "-o", str(out))
    assert rc == 1 and err == f"mlprof export: {e.value}"
    assert not out.parent.exists()


def test_a_second_session_is_a_session_error():
    first = mlprof.Session()
    try:
        first.start()
    except mlprof.SessionError:
        pytest.skip("another session records in this process")
    try:
        with pytest.raises(mlprof.SessionError, match="another mlprof session is recording"):
            mlprof.Session().start()
    finally:
        first.stop()
