"""PyTorch integration (torch is imported lazily, on first use):

- LayerProfiler: per-module forward/backward time, calls, statistics, parameters, activation
  memory and FLOPs (the formulas of `mlprof flops`, from the C++ op_flops) via module hooks; CUDA
  events for GPU time when the model is on a GPU; every layer call is also a recorded mlprof
  scope, so a running Session sees the layers. Hooks are removed on exit.
- MemoryTracker: mlprof.MemoryTracker (host RSS + torch.cuda allocated/reserved samples).
- on_trace_ready(): a torch.profiler handler that writes each trace and loads it with mlprof.
"""

import math
import os
import sys
import time

from . import _core
from ._memory import MemoryTracker  # noqa: F401  (re-exported: mlprof.torch.MemoryTracker)
from ._results import table


def _torch():
    import torch

    return torch


def _shape(t):
    return list(t.shape) if hasattr(t, "shape") else []


def _tensors(x):
    torch = _torch()
    if isinstance(x, torch.Tensor):
        yield x
    elif isinstance(x, (list, tuple)):
        for v in x:
            yield from _tensors(v)
    elif isinstance(x, dict):
        for v in x.values():
            yield from _tensors(v)


def module_flops(module, inputs, output):
    """FLOPs of one forward call of a module, from the shapes of this call; None when mlprof
    does not count this module type. Linear, ConvNd, RNN/GRU/LSTM (their gate matmuls) and
    MultiheadAttention (projections + attention), each through the C++ formulas of
    `mlprof flops` (op_flops), so the numbers agree with trace analysis."""
    torch = _torch()
    nn = torch.nn
    x = inputs[0] if inputs else None
    if isinstance(module, nn.Linear) and x is not None:
        return _core.op_flops("linear", [_shape(x), _shape(module.weight)])
    if isinstance(module, (nn.Conv1d, nn.Conv2d, nn.Conv3d)) and x is not None:
        out = output if isinstance(output, torch.Tensor) else None
        if out is None:
            return None
        # convolution_backward's formula takes the exact output size; the forward is half of it.
        f = _core.op_flops("convolution_backward", [_shape(out), _shape(x), _shape(module.weight)])
        return None if f is None else f / 2
    if isinstance(module, nn.RNNBase) and x is not None:
        return _rnn_flops(module, x)
    if isinstance(module, nn.MultiheadAttention) and len(inputs) >= 3:
        return _mha_flops(module, *inputs[:3])
    return None


def _rnn_flops(m, x):
    torch = _torch()
    if isinstance(x, torch.nn.utils.rnn.PackedSequence):
        rows = int(x.data.shape[0])
    else:
        shape = _shape(x)
        rows = shape[0] * shape[1] if len(shape) == 3 else shape[0]
    gates = {"LSTM": 4, "GRU": 3}.get(m.mode, 1)
    dirs = 2 if m.bidirectional else 1
    h = m.hidden_size
    total = 0.0
    for layer in range(m.num_layers):
        in_size = m.input_size if layer == 0 else h * dirs
        for _ in range(dirs):
            total += _core.op_flops("mm", [[rows, in_size], [in_size, gates * h]])
            total += _core.op_flops("mm", [[rows, h], [h, gates * h]])
    return total


def _mha_flops(m, q, k, v):
    qs, ks = _shape(q), _shape(k)
    if len(qs) != 3:
        return None
    if m.batch_first:
        b, l, e = qs
        s = ks[1]
    else:
        l, b, e = qs
        s = ks[0]
    heads = m.num_heads
    hd = e // heads
    proj = _core.op_flops("linear", [[b * l, e], [e, e]]) + 2 * _core.op_flops(
        "linear", [[b * s, m.kdim], [e, m.kdim]])
    attn = _core.op_flops("scaled_dot_product_attention",
                          [[b, heads, l, hd], [b, heads, s, hd], [b, heads, s, hd]])
    out = _core.op_flops("linear", [[b * l, e], [e, e]])
    return proj + attn + out


class _Stats:
    __slots__ = ("times",)

    def __init__(self):
        self.times = []

    def row(self, prefix):
        t = self.times
        n = len(t)
        if not n:
            return {f"{prefix}_calls": 0, f"{prefix}_total_ns": 0, f"{prefix}_mean_ns": math.nan,
                    f"{prefix}_std_ns": math.nan, f"{prefix}_min_ns": math.nan,
                    f"{prefix}_max_ns": math.nan}
        mean = sum(t) / n
        std = math.sqrt(sum((v - mean) ** 2 for v in t) / (n - 1)) if n > 1 else 0.0
        return {f"{prefix}_calls": n, f"{prefix}_total_ns": sum(t), f"{prefix}_mean_ns": mean,
                f"{prefix}_std_ns": std, f"{prefix}_min_ns": min(t), f"{prefix}_max_ns": max(t)}


class _Layer:
    def __init__(self, name, module):
        self.name = name
        self.type = type(module).__name__
        self.params = sum(p.numel() for p in module.parameters())
        self.forward = _Stats()
        self.backward = _Stats()
        self.flops = []  # per forward call (None when not counted)
        self.activation_bytes = []  # output bytes per forward call
        self.stack = []  # open forward calls: (t0 or cuda event)
        self.bw_start = []  # open backward calls: (start, inputless)
        self.grad_params = 0
        self.params_left = 0
        self.scope = _core.profile(name or self.type, category="module")
        self.bw_scope = _core.profile((name or self.type) + ".backward", category="module")


class LayerProfiler:
    """Layer-by-layer profile of an nn.Module tree.

        with mlprof.torch.LayerProfiler(model) as prof:
            for x, y in batches:
                loss = loss_fn(model(x), y)
                loss.backward()
        prof.layers()          # DataFrame: module, type, forward_*/backward_* stats, params,
                               # activation_bytes, flops, achieved_tflops_per_s
        prof.slowest(5); prof.most_variable(5); prof.total_flops
        print(prof)

    Times are host wall times (perf_counter_ns) of each module's forward call, and for backward
    from the gradient of its output arriving to its full backward hook; with the model on a GPU,
    CUDA events measure the GPU time instead. `backward=False` leaves the backward hooks out
    (modules that modify their input in place cannot take full backward hooks)."""

    def __init__(self, model, backward=True, cuda_events=None, leaves_only=False):
        self.model = model
        self.backward = backward
        self.leaves_only = leaves_only
        self._cuda = cuda_events
        self._handles = []
        self._layers = {}
        self._pending = []  # (layer, start_event, end_event, kind)

    def _use_cuda(self):
        if self._cuda is not None:
            return self._cuda
        try:
            p = next(self.model.parameters())
            return p.is_cuda
        except StopIteration:
            return False

    def start(self):
        torch = _torch()
        cuda = self._use_cuda()
        self._cuda_on = cuda
        perf = time.perf_counter_ns
        for name, module in self.model.named_modules():
            if self.leaves_only and any(True for _ in module.children()):
                continue
            layer = self._layers.get(name)
            if layer is None:
                layer = self._layers[name] = _Layer(name, module)

            def pre(mod, inputs, layer=layer):
                layer.scope.__enter__()
                if cuda:
                    ev = torch.cuda.Event(enable_timing=True)
                    ev.record()
                    layer.stack.append(ev)
                else:
                    layer.stack.append(perf())

            def post(mod, inputs, output, layer=layer):
                if cuda:
                    end = torch.cuda.Event(enable_timing=True)
                    end.record()
                    self._pending.append((layer.forward, layer.stack.pop(), end))
                else:
                    layer.forward.times.append(perf() - layer.stack.pop())
                layer.scope.__exit__(None, None, None)
                layer.activation_bytes.append(
                    sum(t.numel() * t.element_size() for t in _tensors(output)))
                try:
                    layer.flops.append(module_flops(mod, inputs, output))
                except Exception:
                    layer.flops.append(None)
                if self.backward and torch.is_grad_enabled():
                    outs = [t for t in _tensors(output) if t.requires_grad]
                    if outs:
                        # Without an input that needs a gradient, the full backward hook fires
                        # as soon as the output's gradient arrives: the backward then ends
                        # when every parameter of the module has its gradient.
                        inputless = not any(t.requires_grad for t in _tensors(inputs))
                        fired = [False]

                        def grad_arrived(grad, layer=layer, fired=fired, inputless=inputless):
                            if not fired[0]:  # several outputs: the first gradient starts it
                                fired[0] = True
                                layer.bw_scope.__enter__()
                                layer.bw_start.append((self._now(), inputless))
                                if inputless:
                                    layer.params_left = layer.grad_params
                                    if not layer.grad_params:
                                        self._end_backward(layer)
                        for t in outs:
                            t.register_hook(grad_arrived)

            self._handles.append(module.register_forward_pre_hook(pre))
            self._handles.append(module.register_forward_hook(post))
            if self.backward and not getattr(module, "inplace", False):

                def bw_done(mod, grad_in, grad_out, layer=layer):
                    if layer.bw_start and not layer.bw_start[-1][1]:
                        self._end_backward(layer)

                self._handles.append(module.register_full_backward_hook(bw_done))
            if self.backward:
                params = [p for p in module.parameters() if p.requires_grad]
                layer.grad_params = len(params)

                def param_grad(grad, layer=layer):
                    if layer.bw_start and layer.bw_start[-1][1] and layer.params_left > 0:
                        layer.params_left -= 1
                        if layer.params_left == 0:
                            self._end_backward(layer)

                for p in params:
                    self._handles.append(p.register_hook(param_grad))
        return self

    def _now(self):
        if self._cuda_on:
            ev = _torch().cuda.Event(enable_timing=True)
            ev.record()
            return ev
        return time.perf_counter_ns()

    def _end_backward(self, layer):
        start, _ = layer.bw_start.pop()
        if self._cuda_on:
            self._pending.append((layer.backward, start, self._now()))
        else:
            layer.backward.times.append(time.perf_counter_ns() - start)
        layer.bw_scope.__exit__(None, None, None)

    def _resolve(self):
        if self._pending:
            _torch().cuda.synchronize()
            for stats, a, b in self._pending:
                stats.times.append(int(a.elapsed_time(b) * 1e6))
            self._pending = []

    def stop(self):
        for h in self._handles:
            h.remove()
        self._handles = []
        self._resolve()
        return self

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()
        return False

    # ---- results -----------------------------------------------------------------------
    def _rows(self):
        self._resolve()
        rows = []
        for name, layer in self._layers.items():
            r = {"module": name or "(root)", "type": layer.type}
            r.update(layer.forward.row("forward"))
            r.update(layer.backward.row("backward"))
            r["params"] = layer.params
            acts = layer.activation_bytes
            r["activation_bytes"] = sum(acts) / len(acts) if acts else math.nan
            counted = [f for f in layer.flops if f is not None]
            r["flops"] = counted[-1] if counted else math.nan  # per call (last call's shapes)
            r["total_flops"] = sum(counted) if counted else math.nan
            fwd_ns = layer.forward.row("f")["f_total_ns"]
            r["achieved_tflops_per_s"] = (sum(counted) / fwd_ns / 1e3) if counted and fwd_ns else math.nan
            rows.append(r)
        return rows

    def layers(self):
        """One row per module (qualified name as in model.named_modules(); "(root)" is the
        model itself). Times in ns; flops per forward call; achieved_tflops_per_s = FLOPs over
        forward time."""
        return table(self._rows())

    def slowest(self, n=5, by="forward_total_ns"):
        rows = [r for r in self._rows() if r["forward_calls"] and r["module"] != "(root)"]
        rows.sort(key=lambda r: -(r[by] if not math.isnan(r[by]) else -1))
        return table(rows[:n])

    def most_variable(self, n=5):
        """Layers by coefficient of variation of forward time (std / mean)."""
        rows = [r for r in self._rows() if r["forward_calls"] > 1 and r["module"] != "(root)"]
        for r in rows:
            r["forward_cv"] = r["forward_std_ns"] / r["forward_mean_ns"] if r["forward_mean_ns"] else 0.0
        rows.sort(key=lambda r: -r["forward_cv"])
        return table(rows[:n])

    @property
    def total_flops(self):
        """FLOPs of all counted leaf computations (modules whose children are not counted
        themselves, so nothing is counted twice)."""
        total = 0.0
        for name, layer in self._layers.items():
            counted = [f for f in layer.flops if f is not None]
            if counted and not self._has_counted_ancestor(name):
                total += sum(counted)
        return total

    def _has_counted_ancestor(self, name):
        parts = name.split(".") if name else []
        for k in range(len(parts)):
            anc = ".".join(parts[:k])
            a = self._layers.get(anc)
            if a is not None and any(f is not None for f in a.flops):
                return True
        return False

    def __str__(self):
        rows = [r for r in self._rows() if r["forward_calls"]]
        out = [f"{'module':32s} {'type':18s} {'calls':>6s} {'fwd mean':>10s} {'bwd mean':>10s} "
               f"{'params':>10s} {'GFLOP/call':>10s}"]
        for r in rows:
            fm = r["forward_mean_ns"] / 1e3
            bm = r["backward_mean_ns"] / 1e3 if r["backward_calls"] else float("nan")
            gf = r["flops"] / 1e9
            out.append(f"{r['module'][:32]:32s} {r['type'][:18]:18s} {r['forward_calls']:6d} "
                       f"{fm:8.1f}us {bm:8.1f}us {r['params']:10d} {gf:10.4f}")
        return "\n".join(out)


def on_trace_ready(dir_name, callback=None, worker_name=None):
    """A torch.profiler `on_trace_ready` handler: writes each trace as
    DIR/<worker>.<step>.pt.trace.json, loads it with mlprof and calls callback(trace) (e.g.
    `lambda t: print(t.summary())`). The handler keeps .traces (mlprof Traces) and .paths."""
    os.makedirs(dir_name, exist_ok=True)
    worker = worker_name or f"{os.uname().nodename}_{os.getpid()}"

    def handler(prof):
        from ._trace import load

        path = os.path.join(dir_name, f"{worker}.{prof.step_num}.pt.trace.json")
        prof.export_chrome_trace(path)
        t = load(path)
        handler.paths.append(path)
        handler.traces.append(t)
        if callback is not None:
            callback(t)

    handler.paths = []
    handler.traces = []
    return handler


def cuda_available():
    torch = sys.modules.get("torch") or _torch()
    return bool(torch.cuda.is_available())
