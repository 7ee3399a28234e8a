"""`mlprof flops --json` against FLOPs computed by hand in Python from the Input Dims of each
outermost matmul/linear/conv op (formulas in docs/roofline.md: flops is a view over the
roofline's performance models, which also count norms and pointwise ops)."""
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
import analyze_reference as ar  # noqa: E402
import trace_reference as ref  # noqa: E402
from checks import check, finish  # noqa: E402

MLPROF, DATA = sys.argv[1], sys.argv[2]


for name in ["a_mlp_b32_w64.kineto.json.gz", "b_cnn.kineto.json.gz"]:
    path = os.path.join(DATA, name)
    _, events = ref.load(path)
    total, per_op = ar.flops_total(events)
    got = ar.run_json(MLPROF, "flops", path, "--top", "1000")
    check(total > 0, f"{name}: python found FLOPs")
    got_ops = {o["name"]: o["flops"] for o in got["ops"]}
    rows = sum(got_ops.values())
    check(abs(got["total_flops"] - rows) <= 1e-9 * rows, f"{name}: total = the rows' sum")
    check(got["total_flops"] >= total, f"{name}: total {got['total_flops']} >= matrix ops' {total}")
    for op, f in per_op.items():
        check(abs(got_ops.get(op, -1) - f) <= 1e-9 * f, f"{name} {op}: {got_ops.get(op)} vs {f}")
    check(got["calls_without_shapes"] == 0, f"{name}: every counted call has shapes")
    check(got["device"] == "" and got["mfu"] is None, f"{name}: CPU trace, no MFU")

# One shape by hand: a_mlp's first addmm is [[64], [32, 32], [32, 64]] -> 2*32*32*64 + 32*64
# (the bias add) = 133,120.
check(ar.flop_count("aten::addmm", [[64], [32, 32], [32, 64], [], []]) == 133120, "addmm by hand")
# b_cnn's conv2d [[8,3,32,32],[8,3,3,3],[8]], no Concrete Inputs (same size out):
# 2*8*8*(32*32)*3*(3*3) + 8*8*32*32 (bias) = 3,604,480.
check(ar.flop_count("aten::conv2d", [[8, 3, 32, 32], [8, 3, 3, 3], [8]]) == 3604480, "conv2d by hand")
finish()
