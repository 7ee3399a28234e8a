"""`mlprof steps --json` against an independent Python computation (analyze_reference.steps)."""
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(__file__))
import analyze_reference as ar  # noqa: E402
import shared_data  # noqa: E402
import trace_reference as ref  # noqa: E402
from checks import check, finish  # noqa: E402

MLPROF, DATA = sys.argv[1], sys.argv[2]
FILES = ["mlp_bs64.json.gz", "mlp_bs256.json.gz", "a_mlp_b32_w64.kineto.json.gz",
         "c_leaky.kineto.json.gz", "b_cnn.kineto.json.gz", "tiny_linear.json"]


# df_index_resolver (shared data): torch.compile'd model under DDP; forward is the compiled
# region "CompiledFunction" on the step's thread, backward ("CompiledFunctionBackward" and the
# allreduces inside it) runs on autograd's engine thread.
SHARED = ["traces/kineto-gpu/df_index_resolver/df_index_resolver.json.gz"]
paths = [os.path.join(DATA, n) for n in FILES] + [p for p in map(shared_data.shared_path, SHARED) if p]
for path in paths:
    name = os.path.basename(path)
    _, events = ref.load(path)
    expected = ar.steps(ref.slices(events))
    got = ar.run_json(MLPROF, "steps", path)
    check(got["count"] == len(expected), f"{name}: {got['count']} steps, expected {len(expected)}")
    for g, (sname, ts, dur, phases) in zip(got["steps"], expected):
        check(g["name"] == sname and g["dur_ns"] == dur, f"{name} {sname}: dur {g['dur_ns']} vs {dur}")
        for ph in ar.PHASES:
            check(g["phase_ns"][ph] == phases[ph],
                  f"{name} {sname} {ph}: {g['phase_ns'][ph]} vs {phases[ph]}")
        check(sum(g["phase_ns"].values()) == g["dur_ns"], f"{name} {sname}: phases sum to dur")
    if len(expected) >= 2:
        durs = [d for _, _, d, _ in expected]
        check(abs(got["mean_ns"] - statistics.mean(durs)) < 1e-6, f"{name}: mean")
        check(abs(got["std_ns"] - statistics.stdev(durs)) < 1e-3, f"{name}: std")
        med = statistics.median(durs)
        mad = statistics.median(abs(d - med) for d in durs)
        outliers = [int(s[0].split("#")[1]) for s in expected
                    if len(durs) >= 3 and mad > 0 and abs(s[2] - med) > 3 * 1.4826 * mad]
        check(got["outlier_steps"] == outliers, f"{name}: outliers {got['outlier_steps']} vs {outliers}")

# mlp_bs64 has a slow host-side loader: data loading is over the 5% bottleneck threshold
# (8.8% measured; the traces README's "dominates" overstates it).
got = ar.run_json(MLPROF, "steps", os.path.join(DATA, "mlp_bs64.json.gz"))
total = got["total_ns"]
check(got["phase_total_ns"]["data_loading"] > 0.05 * total, "mlp_bs64: data loading > 5%")
compiled = shared_data.shared_path(SHARED[0])
if compiled:
    got = ar.run_json(MLPROF, "steps", compiled)["phase_total_ns"]
    check(got["forward"] > 0 and got["backward"] > got["forward"] and got["communication"] > 0,
          f"df_index_resolver: compiled forward/backward and DDP allreduce recognised: {got}")
finish()
