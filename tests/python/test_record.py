"""Recording from Python: the profile context manager and decorators, steps, counters, instants,
thread names, explicit and global sessions, pause/resume, sampling, saving, the summary."""
import os
import subprocess
import sys
import threading

import pytest

import mlprof
from conftest import REPO


def names(trace):
    s = trace.slice_arrays()
    strings = trace.strings
    return [strings[i] for i in s["name"]]


def test_context_manager_nests_and_times():
    with mlprof.Session() as s:
        with mlprof.profile("outer"):
            with mlprof.profile("inner", category="op"):
                sum(range(1000))
    ops = {r["name"]: r for r in s.ops().to_dict("records")}
    assert ops["outer"]["count"] == 1 and ops["inner"]["count"] == 1
    assert ops["inner"]["category"] == "op"
    assert ops["outer"]["total_ns"] >= ops["inner"]["total_ns"] > 0
    sl = s.trace.slices()
    inner = sl[sl["name"] == "inner"].iloc[0]
    assert inner["depth"] == 1 and sl.iloc[inner["parent"]]["name"] == "outer"


def test_exception_inside_scope_propagates_and_closes_it():
    with mlprof.Session() as s:
        with pytest.raises(ValueError):
            with mlprof.profile("boom"):
                raise ValueError("x")
        with mlprof.profile("after"):
            pass
    sl = s.trace.slices()
    assert list(sl["name"]) == ["boom", "after"]
    assert (sl["depth"] == 0).all()


def test_decorators_bare_and_named():
    @mlprof.profile
    def plain(x):
        """doc"""
        return x + 1

    @mlprof.profile("renamed")
    def other(x):
        return x * 2

    @mlprof.profile()
    def empty_parens():
        return 3

    assert plain.__name__ == "plain" and plain.__doc__ == "doc"
    with mlprof.Session() as s:
        assert [plain(1) for _ in range(3)] == [2, 2, 2]
        assert other(4) == 8
        assert empty_parens() == 3
    ops = {r["name"]: r for r in s.ops().to_dict("records")}
    qual = plain.__qualname__
    assert ops[qual]["count"] == 3 and ops[qual]["category"] == "function"
    assert ops["renamed"]["count"] == 1
    assert ops[empty_parens.__qualname__]["count"] == 1


def test_profile_rejects_bad_arguments():
    with pytest.raises(TypeError):
        mlprof.profile(3)
    with pytest.raises(TypeError):
        mlprof.profile("a", "b")
    with pytest.raises(TypeError):
        mlprof.profile("a", colour="red")
    with pytest.raises(TypeError):
        mlprof.profile("a")(1)


def test_scopes_without_session_record_nothing_and_cost_nothing():
    with mlprof.profile("nobody listening"):
        pass
    with mlprof.Session() as s:
        pass
    assert "nobody listening" not in names(s.trace)


def test_steps_counters_instants_thread_names():
    def worker():
        mlprof.set_thread_name("loader")
        with mlprof.profile("load"):
            pass

    with mlprof.Session() as s:
        for i in range(4):
            mlprof.step("train")
            mlprof.counter("loss", 1.0 / (i + 1))
            with mlprof.profile("forward"):
                pass
        mlprof.instant("checkpoint")
        th = threading.Thread(target=worker)
        th.start()
        th.join()
    t = s.trace
    steps = [n for n in names(t) if n.startswith("ProfilerStep#")]
    assert len(steps) == 4
    c = t.counters()
    assert list(c[c["name"] == "loss"]["value"]) == pytest.approx([1.0, 0.5, 1 / 3, 0.25])
    inst = t.instants()
    assert "checkpoint" in list(inst["name"])
    tracks = t.tracks()
    assert "loader" in list(tracks["name"])
    assert t.summary().steps == 4


def test_step_scope():
    with mlprof.Session() as s:
        for _ in range(3):
            with mlprof.step_scope("eval"):
                with mlprof.profile("f"):
                    pass
    sl = s.trace.slices()
    steps = sl[sl["cat"] == "eval"]
    assert len(steps) == 3
    assert (sl[sl["name"] == "f"]["depth"] == 1).all()


def test_sampling_records_one_step_in_n():
    with mlprof.Session(sample=3) as s:
        for _ in range(9):
            mlprof.step()
            with mlprof.profile("work"):
                pass
    ops = {r["name"]: r for r in s.ops().to_dict("records")}
    assert ops["work"]["count"] == 3


def test_disable_enable_pause_recording():
    with mlprof.Session() as s:
        with mlprof.profile("a"):
            pass
        mlprof.disable()
        assert not mlprof.is_enabled()
        with mlprof.profile("hidden"):
            pass
        mlprof.enable()
        with mlprof.profile("b"):
            pass
    n = names(s.trace)
    assert "a" in n and "b" in n and "hidden" not in n


def test_global_session_start_stop_and_output(tmp_path):
    out = tmp_path / "g.json"
    mlprof.start(output=str(out))
    with pytest.raises(mlprof.SessionError):
        mlprof.Session().start()  # one session at a time
    with mlprof.profile("global work"):
        pass
    t = mlprof.stop()
    assert "global work" in names(t)
    back = mlprof.load(out)
    assert "global work" in names(back)
    assert back.format == "chrome"


def test_results_in_process_and_saved(tmp_path):
    with mlprof.Session() as s:
        for i in range(10):
            with mlprof.profile("op"):
                sum(range(100 * (i + 1)))
    st = s.op_stats("op")
    assert st["count"] == 10
    assert st["min_ns"] <= st["p50_ns"] <= st["p90_ns"] <= st["p99_ns"] <= st["max_ns"]
    assert st["total_ns"] == pytest.approx(st["mean_ns"] * 10, rel=1e-9)
    assert st["std_ns"] >= 0
    top = s.top(1)
    assert len(top) == 1
    text = str(s)
    assert "op" in text and "operation" in text
    s.save(tmp_path / "s.mlprof")
    back = mlprof.load(tmp_path / "s.mlprof")
    assert back.op_stats("op")["total_ns"] == st["total_ns"]


def test_env_output_written_at_exit(tmp_path):
    out = tmp_path / "env.mlprof"
    code = "import mlprof\nwith mlprof.profile('from env'): pass\n"
    env = dict(os.environ, MLPROF_OUTPUT=str(out), PYTHONPATH=os.pathsep.join(sys.path))
    subprocess.run([sys.executable, "-c", code], check=True, env=env, capture_output=True)
    assert "from env" in names(mlprof.load(out))


def test_env_kill_switch(tmp_path):
    code = ("import mlprof\ntry:\n    mlprof.Session().start()\nexcept mlprof.SessionError as e:\n"
            "    print('refused:', e)\n")
    env = dict(os.environ, MLPROF_ENABLED="0", PYTHONPATH=os.pathsep.join(sys.path))
    out = subprocess.run([sys.executable, "-c", code], check=True, env=env, capture_output=True,
                         text=True).stdout
    assert "refused: recording is disabled by MLPROF_ENABLED=0" in out


def test_env_sample_setting(tmp_path):
    code = "import mlprof\nprint(mlprof.Session().options['sample'])\n"
    env = dict(os.environ, MLPROF_SAMPLE="4", PYTHONPATH=os.pathsep.join(sys.path))
    out = subprocess.run([sys.executable, "-c", code], check=True, env=env, capture_output=True,
                         text=True).stdout
    assert out.strip() == "4"
