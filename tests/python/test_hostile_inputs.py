"""Issue 32 items 2 and 13 from Python: a pickle nested 200,000 deep is an mlprof.LoadError
(reading it killed the interpreter with a stack overflow), and the row methods of a trace whose
analysis is unavailable (ops() of a torch.compile log) raise mlprof.Error, not a bare KeyError."""
import os
import subprocess
import sys

import pytest

import mlprof


def test_nested_pickle_is_a_load_error_in_a_live_interpreter(tmp_path):
    path = tmp_path / "d.pickle"
    path.write_bytes(b"\x80\x04" + b"]" * 200000 + b"a" * 199999 + b".")
    # In a child first: before the fix the interpreter died (SIGSEGV), which would take pytest
    # with it.
    code = ("import mlprof, sys\n"
            "try:\n"
            "    mlprof.load(sys.argv[1])\n"
            "except mlprof.LoadError as e:\n"
            "    print(e)\n")
    p = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True,
                       env=dict(os.environ), timeout=120)
    assert p.returncode == 0, p.stderr[-500:]
    assert "nested deeper than 256 levels" in p.stdout
    with pytest.raises(mlprof.LoadError, match="nested deeper"):
        mlprof.load(str(path))


def compile_log(path):
    line = "V1206 15:24:45.403000 1 u.py:1] "
    path.write_text(
        line + '{"dynamo_start": {"stack": []}, "frame_id": 0, "frame_compile_id": 0}\n' +
        line + '{"compilation_metrics": {"co_name": "fn", "co_filename": "/a/t.py", '
               '"co_firstlineno": 3, "entire_frame_compile_time_s": 0.5}, "frame_id": 0, '
               '"frame_compile_id": 0}\n')
    return str(path)


def test_rows_of_an_unavailable_analysis_raise_mlprof_error(tmp_path):
    t = mlprof.load(compile_log(tmp_path / "torch_trace.log"))
    assert t.analysis("compile").to_dict()["compiles"][0]["status"] == "ok"
    for call in (t.ops, lambda: t.op_stats("x"), lambda: t.top(3)):
        with pytest.raises(mlprof.Error) as e:
            call()
        assert not isinstance(e.value, KeyError)
        assert "torch_trace.log" in str(e.value) and "ops" in str(e.value)
