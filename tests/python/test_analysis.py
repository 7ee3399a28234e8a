"""mlprof.load + analyses from Python: the same JSON as the CLI's --json (the one analysis stage),
HTA-named views, numpy tables checked against an independent read of the file, outputs, and
the error paths (mlprof.Error subclasses with the CLI's one-line message, no crash)."""
import gzip
import json
import os
import subprocess
import threading

import numpy as np
import pytest

import mlprof
from conftest import cli_json, data_path, mlprof_bin, shared_path

LOCAL = ["a_mlp_b32_w64.kineto.json.gz", "c_leaky.kineto.json.gz", "mlp_bs64.json.gz",
         "tiny_linear.json"]
GPU = "traces/kineto-gpu/critical_path/alexnet/benchmark_result_2869224_1695835535_trace.json.gz"


def same_as_cli(path, t, names):
    for name in names:
        assert json.loads(t.analysis_json(name)) == cli_json(name, path), f"{path}: {name}"


@pytest.mark.parametrize("name", LOCAL)
def test_every_analysis_equals_the_cli_json(name):
    path = data_path(name)
    t = mlprof.load(path)
    names = [n for n in mlprof.Trace.analysis_names() if t.unavailable(n) is None]
    assert {"summary", "ops", "steps", "memory", "leaks", "flops", "bottlenecks"} <= set(names)
    same_as_cli(path, t, names)
    assert t.unavailable("gpu") and t.unavailable("ranks")
    # Results and DataFrames carry the same numbers as the JSON, under the CLI's names.
    ops = t.ops()
    assert list(ops["name"]) == [r["name"] for r in cli_json("ops", path)["ops"]]
    assert t.summary().span_ns == cli_json("summary", path)["span_ns"]
    assert t.ops(top=3, sort="count")["count"].tolist() == \
        [r["count"] for r in cli_json("ops", path, "--top", "3", "--sort", "count")["ops"]]


def test_leaky_trace_leak_verdict_matches_the_readme():
    t = mlprof.load(data_path("c_leaky.kineto.json.gz"))
    leaks = t.leaks()
    assert leaks.leak
    # README: Total Allocated grows ~262,780 B per step.
    assert leaks.devices[0]["slope_bytes_per_step"] == pytest.approx(262780, rel=0.05)
    kinds = [f["kind"] for f in t.bottlenecks().findings]
    assert "memory_leak" in kinds


def independent_events(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        doc = json.load(f)
    return doc["traceEvents"] if isinstance(doc, dict) else doc


def test_numpy_tables_match_an_independent_read():
    path = data_path("a_mlp_b32_w64.kineto.json.gz")
    events = independent_events(path)
    t = mlprof.load(path)
    sl = t.slice_arrays()
    assert isinstance(sl["ts"], np.ndarray) and not sl["ts"].flags.writeable
    xs = [e for e in events if e.get("ph") == "X"]
    assert len(sl["ts"]) == len(xs)
    assert int(sl["dur"].sum()) == pytest.approx(sum(round(e["dur"] * 1000) for e in xs), abs=len(xs))
    mem = [e for e in events if e.get("ph") == "i" and e.get("name") == "[memory]"]
    m = t.memory_events()
    assert len(m) == len(mem)
    assert int(m["bytes"].sum()) == sum(e["args"]["Bytes"] for e in mem)
    df = t.slices()
    names = {e["name"] for e in xs}
    assert set(df["name"].astype(str)) == names
    # The arrays view the trace's memory: they outlive the Python Trace object.
    dur = t.slice_arrays()["dur"]
    total = int(dur.sum())
    del t, sl, df
    assert int(dur.sum()) == total


def test_gpu_trace_matches_cli_and_hta_names():
    path = shared_path(GPU)
    t = mlprof.load(path)
    same_as_cli(path, t, ["gpu", "kernels", "summary", "ops"])
    gpu = cli_json("gpu", path)
    tb = t.temporal_breakdown()
    assert tb.iloc[0]["idle_ns"] == gpu["devices"][0]["temporal_breakdown"]["idle_ns"]
    idle = t.idle_time_breakdown()
    assert idle.iloc[0]["host_wait_ns"] == gpu["idle_time_breakdown"][0]["host_wait"]["time_ns"]
    q = t.queue_length_summary()
    assert q.iloc[0]["max"] == gpu["queue_length"][0]["hta_summary"]["max"]
    types, kernels = t.kernel_breakdown()
    k = cli_json("kernels", path)
    assert list(kernels["name"]) == [r["name"] for r in k["kernel_breakdown"]]
    assert list(types["kernel_type"]) == [r["kernel_type"] for r in k["kernel_type_breakdown"]]
    assert t.cuda_kernel_launch_stats().rows == gpu["launch_stats"]["rows"]
    assert len(t.memory_bw_summary()) == len(gpu["memory_bandwidth"])
    assert "comp_comm_overlap_pctg" in t.comm_comp_overlap().columns
    kt = t.kernels_table()
    assert len(kt) == k["kernel_count"]
    assert int(kt["dur"].sum()) == k["total_gpu_ns"]


@pytest.mark.parametrize("rel", [GPU, "traces/modules/mi300_resnet_act_checkpoint.json.gz"])
def test_analyze_default_is_everything_mlprof_analyze_shows(rel):
    """Trace.analyze() with no names: the analyses of `mlprof analyze --json` that this trace
    has data for, in its order, with its JSON (modules, critical_path, compile and
    memory_snapshot were once left out)."""
    path = shared_path(rel)
    t = mlprof.load(path)
    cli = cli_json("analyze", path)
    want = [n for n, v in cli.items()
            if n not in ("schema", "source", "format")
            and not (isinstance(v, dict) and "unavailable" in v)]
    got = t.analyze()
    assert list(got) == want
    assert {n: r.to_dict() for n, r in got.items()} == {n: cli[n] for n in want}
    if rel.startswith("traces/modules/"):  # two of the four that were once left out
        assert {"modules", "critical_path"} <= set(got)
    for n in ("modules", "critical_path", "compile", "memory_snapshot"):
        assert n in mlprof.Trace.analyze.__doc__


def test_torch_trace_directory_loads_as_mlprof_analyze_opens_it(tmp_path):
    """A TORCH_TRACE directory (one log per rank) is one input, as `mlprof analyze DIR` opens it
    (open_input); mlprof.load() once refused it ("no trace files")."""
    logs = shared_path("traces/compile/tlparse/comp_failure.log")
    d = tmp_path / "torch_trace"
    d.mkdir()
    for rank in (0, 1):
        (d / f"dedicated_log_torch_trace_rank_{rank}.log").write_bytes(open(logs, "rb").read())
    got = mlprof.load(d).analyze(["compile"])["compile"].to_dict()
    assert got == cli_json("analyze", str(d))["compile"]
    assert len(got["ranks"]) == 2


def test_rank_directory_is_analyzed_like_the_cli():
    d = os.path.dirname(shared_path("traces/kineto-gpu/trace_filter/sampled_rank-0.json.gz"))
    t = mlprof.load(d)
    same_as_cli(d, t, ["ranks", "summary", "bottlenecks"])
    assert len(t.ranks().ranks) >= 2


def test_options_reach_the_analysis_stage():
    path = data_path("a_mlp_b32_w64.kineto.json.gz")
    t = mlprof.load(path)
    assert json.loads(t.analysis_json("flops", peak_tflops=10)) == \
        cli_json("flops", path, "--peak-tflops", "10")
    with pytest.raises(mlprof.AnalysisError, match="unknown option 'colour'"):
        t.analysis_json("ops", colour="red")
    with pytest.raises(mlprof.AnalysisError, match="unknown analysis 'nope'"):
        t.analysis("nope")
    with pytest.raises(mlprof.AnalysisError):
        t.ops(sort="fastest")
    with pytest.raises(mlprof.AnalysisError):
        t.temporal_breakdown()  # no GPU streams


def test_outputs(tmp_path):
    t = mlprof.load(data_path("a_mlp_b32_w64.kineto.json.gz"))
    assert open(t.report(tmp_path / "r.html")).read().startswith("<!")
    assert "<html" in open(t.flame(tmp_path / "f.html")).read().lower()
    collapsed = t.flame(format="collapsed")
    assert collapsed.count("\n") > 10 and ";" in collapsed
    assert json.loads(t.flame(format="speedscope"))["$schema"].startswith("https://www.speedscope")
    assert "<html" in open(t.timeline(tmp_path / "t.html")).read().lower()
    assert json.loads(t.timeline(format="json"))["lanes"]
    t.export(tmp_path / "x.json")
    t.export(tmp_path / "x.mlprof")
    for p in ("x.json", "x.mlprof"):
        back = mlprof.load(tmp_path / p)
        assert back.ops()["count"].sum() == t.ops()["count"].sum()
    everything = t.analyze()
    assert everything["steps"].to_dict() == cli_json("steps", data_path("a_mlp_b32_w64.kineto.json.gz"))
    assert "Steps" in str(t.steps()) or "step" in str(t.steps()).lower()


def test_flows_dst_next(tmp_path):
    """flows() has dst_next: 1 for a v1 flow end without "bp": "e" (bound to the next slice on
    its thread, dst_ts moved to that slice's start), 0 for one with it (the enclosing slice); the
    same after a .mlprof round trip."""
    events = [{"ph": "X", "name": "src", "pid": 1, "tid": 1, "ts": 0, "dur": 10},
              {"ph": "X", "name": "encl", "pid": 1, "tid": 2, "ts": 0, "dur": 10},
              {"ph": "X", "name": "next", "pid": 1, "tid": 2, "ts": 12, "dur": 4},
              {"ph": "s", "id": 1, "cat": "c", "pid": 1, "tid": 1, "ts": 1},
              {"ph": "f", "id": 1, "cat": "c", "pid": 1, "tid": 2, "ts": 5},
              {"ph": "s", "id": 2, "cat": "c", "pid": 1, "tid": 1, "ts": 2},
              {"ph": "f", "id": 2, "cat": "c", "pid": 1, "tid": 2, "ts": 6, "bp": "e"}]
    path = tmp_path / "flows.json"
    path.write_text(json.dumps(events))
    t = mlprof.load(path)
    t.export(tmp_path / "flows.mlprof")
    for trace in (t, mlprof.load(tmp_path / "flows.mlprof")):
        f = trace.flows()
        assert f["dst_next"].dtype == np.uint8
        sl = trace.slice_arrays()
        names = [trace.strings[i] for i in sl["name"]]
        got = sorted((int(a), int(b), int(n), names[d]) for a, b, n, d in
                     zip(f["src_ts"], f["dst_ts"], f["dst_next"], f["dst_slice"]))
        assert got == [(1000, 12000, 1, "next"), (2000, 6000, 0, "encl")]


def cli_error(path):
    out = subprocess.run([mlprof_bin(), "summary", str(path)], capture_output=True, text=True)
    assert out.returncode == 2
    line = out.stderr.strip().splitlines()[0]
    assert line.startswith("mlprof: ")
    return line[len("mlprof: "):]


def test_errors_carry_the_cli_message(tmp_path):
    missing = tmp_path / "missing.json"
    with pytest.raises(mlprof.TraceNotFoundError) as e:
        mlprof.load(missing)
    assert isinstance(e.value, mlprof.LoadError) and isinstance(e.value, FileNotFoundError)
    assert str(e.value) == cli_error(missing)

    cases = {
        "truncated.json": b'{"traceEvents": [ {"ph": "X", "name": ',
        "garbage.json": b"\x00\x01not json at all",
        "bad.json.gz": b"\x1f\x8b\x08\x00garbage",
        "empty.json": b"",
        "fake.mlprof": b"MLPROF\x01\nxxxx",
    }
    for name, data in cases.items():
        p = tmp_path / name
        p.write_bytes(data)
        with pytest.raises(mlprof.LoadError) as e:
            mlprof.load(p)
        assert str(e.value) == cli_error(p), name
        assert "\n" not in str(e.value)

    empty_dir = tmp_path / "no_traces"
    empty_dir.mkdir()
    with pytest.raises(mlprof.LoadError, match="no trace files"):
        mlprof.load(empty_dir)
    with pytest.raises(TypeError):
        mlprof.load(12)
    with pytest.raises(mlprof.Error):
        mlprof.load(data_path("tiny_linear.json")).save(tmp_path / "nodir" / "x.mlprof")


def test_load_releases_the_gil():
    path = data_path("c_leaky.kineto.json.gz")
    results = []
    threads = [threading.Thread(target=lambda: results.append(mlprof.load(path).ops()))
               for _ in range(3)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert len(results) == 3 and all(len(r) == len(results[0]) for r in results)


def test_without_pandas_results_are_lists(monkeypatch):
    import mlprof._results as res

    monkeypatch.setattr(res, "have_pandas", lambda: False)
    t = mlprof.load(data_path("tiny_linear.json"))
    ops = t.ops()
    assert isinstance(ops, list) and ops[0]["name"]
    assert isinstance(t.memory_events(), dict)


def test_roofline_tables_equal_the_cli_and_their_own_formulas():
    """t.roofline(table) is `mlprof roofline --json`'s table row for row, and each row obeys the
    roofline's definitions recomputed here: intensity = FLOPs / bytes, roofline time =
    max(FLOPs / peak, bytes / bandwidth), wasted = kernel time - roofline time."""
    path = shared_path("traces", "roofline", "example_profile_h100.json")
    t = mlprof.load(path)
    cli = cli_json("roofline", path, "--top", "0")
    assert cli["peaks_known"]
    bw = cli["peaks"]["mem_gbs"]  # GB/s = bytes per ns
    for table_name in ("shapes", "ops", "families", "kernels"):
        df = t.roofline(table_name)
        rows = cli[table_name]
        assert len(df) == len(rows), table_name
        assert list(df["name"]) == [r["name"] for r in rows], table_name
        assert df["wasted_ns"].tolist() == [r["wasted_ns"] for r in rows], table_name
    for r in cli["shapes"]:
        if r["bytes"] > 0:
            assert r["intensity"] == pytest.approx(r["flops"] / r["bytes"], rel=1e-9)
        if r["above_compute_peak"] or r["above_bandwidth"] or not r["peak_tflops"]:
            continue
        compute_ns = r["flops"] / (r["peak_tflops"] * 1e3)
        memory_ns = r["bytes"] / bw if bw else 0
        assert r["roofline_ns"] == pytest.approx(max(compute_ns, memory_ns), rel=1e-3, abs=2)
        assert r["wasted_ns"] == pytest.approx(max(0, r["kernel_ns"] - r["roofline_ns"]), abs=2)
