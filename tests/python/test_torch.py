"""mlprof.torch: a small conv + GRU + linear model profiled layer by layer (calls, times, FLOPs
computed independently here), hooks removed on exit, layer scopes in a session, torch.profiler
glue, CUDA paths skipped without a GPU."""
import os

import pytest

torch = pytest.importorskip("torch")
import mlprof  # noqa: E402
import mlprof.torch as mt  # noqa: E402

B, CIN, L, C, H, OUT = 2, 4, 16, 8, 12, 5


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv1d(CIN, C, kernel_size=3, padding=1)
        self.act = torch.nn.ReLU()
        self.gru = torch.nn.GRU(C, H, batch_first=True)
        self.head = torch.nn.Linear(H, OUT)

    def forward(self, x):
        y = self.act(self.conv(x))  # [B, C, L]
        y, _ = self.gru(y.transpose(1, 2))  # [B, L, H]
        return self.head(y)


# Independent FLOP counts (multiply-add = 2 FLOPs), straight from the layer definitions.
CONV_FLOPS = 2 * B * C * L * CIN * 3
GRU_FLOPS = 2 * (B * L) * C * (3 * H) + 2 * (B * L) * H * (3 * H)
HEAD_FLOPS = 2 * (B * L) * H * OUT


def run(model, steps, backward=True):
    x = torch.randn(B, CIN, L)
    for _ in range(steps):
        out = model(x)
        if backward:
            out.sum().backward()


def test_layer_profile_calls_times_flops():
    torch.manual_seed(0)
    model = Net()
    with mt.LayerProfiler(model) as prof:
        run(model, 4)
    rows = {r["module"]: r for r in prof.layers().to_dict("records")}
    assert set(rows) == {"(root)", "conv", "act", "gru", "head"}
    for name in ["(root)", "conv", "act", "gru", "head"]:
        assert rows[name]["forward_calls"] == 4, name
        assert rows[name]["forward_total_ns"] > 0
        assert rows[name]["forward_min_ns"] <= rows[name]["forward_mean_ns"] <= rows[name]["forward_max_ns"]
    for name in ["conv", "gru", "head"]:
        assert rows[name]["backward_calls"] == 4, name
        assert rows[name]["backward_total_ns"] > 0
    assert rows["act"]["backward_calls"] == 4
    assert rows["conv"]["flops"] == CONV_FLOPS
    assert rows["gru"]["flops"] == GRU_FLOPS
    assert rows["head"]["flops"] == HEAD_FLOPS
    assert rows["head"]["total_flops"] == 4 * HEAD_FLOPS
    assert prof.total_flops == 4 * (CONV_FLOPS + GRU_FLOPS + HEAD_FLOPS)
    assert rows["head"]["achieved_tflops_per_s"] > 0
    assert rows["conv"]["params"] == C * CIN * 3 + C
    assert rows["head"]["params"] == H * OUT + OUT
    assert rows["(root)"]["params"] == sum(p.numel() for p in model.parameters())
    assert rows["head"]["activation_bytes"] == B * L * OUT * 4
    assert rows["(root)"]["forward_total_ns"] >= rows["gru"]["forward_total_ns"]
    slow = prof.slowest(2)
    assert len(slow) == 2 and "(root)" not in list(slow["module"])
    assert len(prof.most_variable(3)) == 3
    assert "gru" in str(prof)


def test_hooks_removed_on_exit():
    model = Net()
    with mt.LayerProfiler(model) as prof:
        run(model, 1)
    run(model, 2)
    rows = {r["module"]: r for r in prof.layers().to_dict("records")}
    assert rows["conv"]["forward_calls"] == 1
    for m in model.modules():
        assert not m._forward_hooks and not m._forward_pre_hooks and not m._backward_hooks


def test_layers_appear_as_scopes_in_a_session():
    model = Net()
    with mlprof.Session() as s, mt.LayerProfiler(model, backward=False):
        with torch.no_grad():
            run(model, 3, backward=False)
    ops = {r["name"]: r for r in s.ops().to_dict("records")}
    assert ops["gru"]["count"] == 3 and ops["gru"]["category"] == "module"
    sl = s.trace.slices()
    gru = sl[sl["name"] == "gru"]
    assert (gru["depth"] == 1).all()  # inside the root module's scope


def test_module_flops_for_attention_and_conv2d():
    mha = torch.nn.MultiheadAttention(16, 4, batch_first=True)
    q = torch.randn(2, 10, 16)
    bl, e, s, hd = 2 * 10, 16, 10, 4
    expected = 2 * bl * e * e * 3 + 2 * bl * e * e  # q/k/v projections + output projection
    expected += 2 * (2 * 2 * 4 * 10 * s * hd)  # Q K^T and softmax(.) V: 2*B*H*L*S*E each
    assert mt.module_flops(mha, (q, q, q), None) == expected
    conv = torch.nn.Conv2d(3, 6, kernel_size=3, stride=2, padding=1)
    x = torch.randn(1, 3, 8, 8)
    out = conv(x)
    assert mt.module_flops(conv, (x,), out) == 2 * 1 * 6 * (4 * 4) * 3 * 9


def test_torch_profiler_glue(tmp_path):
    model = Net()
    x = torch.randn(B, CIN, L)
    seen = []
    handler = mt.on_trace_ready(str(tmp_path), callback=seen.append)
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU],
                                schedule=torch.profiler.schedule(wait=0, warmup=1, active=2),
                                on_trace_ready=handler, record_shapes=True) as p:
        for _ in range(3):
            model(x).sum().backward()
            p.step()
    assert len(handler.traces) == 1 and len(seen) == 1
    assert os.path.exists(handler.paths[0])
    ops = handler.traces[0].ops()
    assert "aten::linear" in set(ops["name"])

    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as p2:
        model(x)
    t = mlprof.load(p2)
    assert "aten::gru" in set(t.ops()["name"])


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")
def test_layer_profile_on_gpu_uses_cuda_events():
    model = Net().cuda()
    x = torch.randn(B, CIN, L, device="cuda")
    with mt.LayerProfiler(model) as prof:
        for _ in range(3):
            model(x).sum().backward()
    rows = {r["module"]: r for r in prof.layers().to_dict("records")}
    assert rows["gru"]["forward_calls"] == 3 and rows["gru"]["forward_total_ns"] > 0
    with mlprof.MemoryTracker(interval_ms=1) as mem:
        model(x)
    assert any(k.startswith("cuda:") for k in mem.series_names())
