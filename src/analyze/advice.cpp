#include "analyze/advice.h"

#include <array>
#include <cstdio>

#include "analyze/name_rules.h"
#include "mlprof/analyze/kernel_class.h"
#include "trace/units.h"

namespace mlprof::advice {

namespace {

bool contains(std::string_view s, std::string_view p) {
  return s.find(p) != std::string_view::npos;
}

std::string dur(int64_t ns) { return format_duration_ns(static_cast<double>(ns)); }

bool amd(const DeviceCaps& d) { return d.vendor == DeviceVendor::kAmd; }
bool mtia(const DeviceCaps& d) { return d.vendor == DeviceVendor::kMtia; }

// "CUDA graphs" in the vendor's words.
std::string graphs(const DeviceCaps& d) {
  return amd(d) ? "HIP graphs (torch.cuda.graphs / torch.compile(mode=\"reduce-overhead\") use "
                  "them on ROCm)"
                : "CUDA graphs (torch.cuda.graphs / torch.compile(mode=\"reduce-overhead\"))";
}

}  // namespace

bool is_compiled_region_name(std::string_view n) {
  // "CompiledFunction", "CompiledFunctionBackward", "autograd::engine::evaluate_function:
  // CompiledFunctionBackward", "Torch-Compiled Region: 0/1", "## Call CompiledFxGraph f... ##".
  return contains(n, "CompiledFunction") || n.starts_with("Torch-Compiled Region") ||
         n.starts_with("## Call CompiledFxGraph");
}

OpKind op_kind(std::string_view n) {
  if (is_compiled_region_name(n)) return OpKind::kCompiledRegion;
  // Synchronous copy APIs: the host thread blocks until the copy is done.
  if (analyze_detail::is_blocking_copy_call_name(n)) return OpKind::kBlockingCopy;
  if (analyze_detail::is_host_sync_call_name(n) || analyze_detail::is_device_read_op_name(n) ||
      n == "cudaStreamWaitEvent")
    return OpKind::kSync;
  if (is_graph_launch_call_name(n)) return OpKind::kGraphLaunch;
  if (is_launch_call_name(n)) return OpKind::kLaunch;
  if (n == "aten::copy_" || n == "aten::to" || n == "aten::_to_copy" || n == "aten::_copy_from" ||
      n == "aten::_copy_from_and_resize") {
    return OpKind::kCopyOp;
  }
  if (n.starts_with("nccl:") || n.starts_with("c10d::") || n == "record_param_comms" ||
      n.starts_with("gloo:")) {
    return OpKind::kCollective;
  }
  return OpKind::kOther;
}

std::string device_text(const DeviceCaps& d) {
  if (d.vendor == DeviceVendor::kUnknown) return "an unidentified device";
  std::string out = d.name.empty() ? std::string(device_vendor_name(d.vendor)) : d.name;
  out += " (" + (d.arch.empty() ? std::string("architecture unknown") : d.arch);
  if (!d.family.empty() && d.family != d.arch) out += ", " + d.family;
  if (!d.matrix_unit.empty())
    out += ": " + d.matrix_unit + " run " + matrix_dtypes_text(d.matrix_dtypes);
  else if (!d.arch.empty())
    out += ": no tensor/matrix cores";
  out += ")";
  return out;
}

Advice hotspot(std::string_view op, int64_t self_ns, uint64_t calls, double share_pct,
               double compiled_share, const DeviceCaps& d) {
  Advice a;
  std::string o(op);
  a.why = o + " has " + dur(self_ns) + " of self time over " + std::to_string(calls) + " calls (" +
          format_percent(share_pct / 100) + " of the time)";
  switch (op_kind(op)) {
    case OpKind::kCompiledRegion:
      a.text =
          "It is already a torch.compile region: look inside it instead of compiling again: "
          "`mlprof compile` lists its graph breaks, recompilations and kernels; try "
          "mode=\"max-autotune\" for its GEMMs, or mode=\"reduce-overhead\" when its time is "
          "launch overhead.";
      a.why += "; " + o + " is the host-side span of a compiled graph";
      return a;
    case OpKind::kBlockingCopy:
      a.text =
          "Pin and make it async: this is a blocking copy the host waits for. Copy from pinned "
          "host memory (tensor.pin_memory(), DataLoader(pin_memory=True)) with "
          "tensor.to(device, non_blocking=True), and read results back only when needed.";
      a.why += "; " + o + " is a synchronous copy API: the host thread blocks until it ends";
      return a;
    case OpKind::kSync:
      a.text =
          "It waits for the GPU rather than doing work: its time is the GPU's queue draining. "
          "Remove the wait (see the synchronization finding) or speed up the GPU work before it.";
      a.why += "; " + o + " blocks the host until the device catches up";
      return a;
    case OpKind::kGraphLaunch:
      // Fusing or compiling does not apply: the work is already captured, one launch per replay.
      a.text =
          "It already replays a captured graph, one launch for all its kernels: look at the "
          "replayed kernels instead (`mlprof graphs --capture DIR`, the CUDA graphs tab), and "
          "replay fewer, larger graphs (fewer piecewise splits, larger captured batch sizes).";
      a.why += "; " + o + " launches a captured CUDA/HIP graph";
      return a;
    case OpKind::kLaunch:
      a.text = mtia(d) ? "Launch fewer, larger jobs: batch small operations so that each "
                         "submission does more work."
                       : "Cut launch cost: capture the step in " + graphs(d) +
                             ", or launch fewer, larger kernels.";
      a.why += "; " + o + " is the host's cost of submitting GPU work";
      return a;
    case OpKind::kCopyOp:
      a.text =
          "Look for copies and casts in the loop: keep tensors on the device in the dtype they "
          "are used in; for host<->device copies use pinned memory and non_blocking=True.";
      a.why += "; " + o + " is a tensor copy or dtype/device conversion";
      return a;
    case OpKind::kCollective:
      a.text =
          "Communication on the host thread: overlap it with compute (DDP bucketing, FSDP "
          "prefetch) and send fewer, larger messages.";
      a.why += "; " + o + " is a collective";
      return a;
    case OpKind::kOther:
      break;
  }
  if (compiled_share >= 0.5) {
    a.text =
        "Optimize or avoid this op first: check its input shapes, or move it off the critical "
        "path. It already runs inside torch.compile regions, so look at those regions' kernels "
        "(`mlprof compile`) rather than compiling again.";
    a.why += "; " + format_percent(compiled_share) +
             " of its self time is inside torch.compile "
             "regions";
    return a;
  }
  a.text = std::string(
               "Optimize or avoid this op first: check its input shapes, fuse it with "
               "neighbours") +
           (mtia(d) ? "" : " (torch.compile)") + ", or move it off the critical path.";
  return a;
}

Advice tensor_cores(const DeviceCaps& d, const TensorCoreFacts& f) {
  Advice a;
  std::string unit = d.matrix_unit.empty() ? std::string("tensor cores") : d.matrix_unit;
  a.why = device_text(d) + "; " + format_percent(f.share) + " of compute kernel time is on " +
          unit + "; " + dur(f.non_matrix_gemm_ns) + " of GEMM/conv kernels are not";
  if (!f.top_kernel.empty()) {
    std::string k = f.top_kernel.size() <= 60 ? f.top_kernel : f.top_kernel.substr(0, 57) + "...";
    a.why += " (largest: " + k + (f.top_family.empty() ? "" : ", " + f.top_family) + ")";
  }
  if (!f.op_dtype.empty()) a.why += "; the matmul/conv ops' inputs are " + f.op_dtype;
  bool bf16 = d.has(kMatBf16), tf32 = d.has(kMatTf32), fp8 = d.has(kMatFp8);
  if (amd(d)) {
    a.text = "Use the " + unit +
             ": torch.autocast(device_type=\"cuda\", dtype=torch.bfloat16) (ROCm keeps the "
             "\"cuda\" device name) so rocBLAS/hipBLASLt pick MFMA kernels; fp32 GEMMs run on "
             "the vector units.";
    if (fp8) a.text += " On this GPU fp8 GEMMs (hipBLASLt; torchao float8) also run on them.";
    return a;
  }
  if (!bf16) {
    // Volta/Turing: fp16 only. bf16 and TF32 need sm_80.
    a.text =
        "Use fp16 mixed precision (this GPU's tensor cores run fp16, not bf16 or TF32, which "
        "need sm_80): torch.autocast(device_type=\"cuda\", dtype=torch.float16) with "
        "torch.amp.GradScaler(\"cuda\") for training; keep matmul dimensions multiples of 8.";
    return a;
  }
  a.text =
      "Use tensor cores: torch.autocast(device_type=\"cuda\", dtype=torch.bfloat16) for mixed "
      "precision";
  if (tf32)
    a.text +=
        ", or allow TF32 for fp32 matmuls (torch.backends.cuda.matmul.allow_tf32 = True, "
        "torch.backends.cudnn.allow_tf32 = True)";
  a.text += ".";
  if (fp8) {
    a.text +=
        " This GPU also runs fp8 GEMMs (Transformer Engine, torchao float8) for large "
        "matmuls.";
  }
  return a;
}

Advice roofline(const DeviceCaps& d, bool compiled, const RooflineFacts& f) {
  Advice a;
  char ai[32];
  std::snprintf(ai, sizeof ai, "%.1f", f.intensity);
  a.why = std::to_string(f.kernels) + " " + f.family + " kernels" +
          (f.dtype.empty() ? "" : " (" + f.dtype + ")") + " take " + dur(f.kernel_ns) + "; at " +
          device_text(d) + "'s roofline they would take " + dur(f.roofline_ns) + " (" +
          format_percent(f.roofline_pct) + " of roofline achieved, arithmetic intensity " + ai +
          " FLOP/B, " + (f.compute_bound ? "compute" : "memory") + "-bound)" +
          (f.top_op.empty() ? "" : "; most of it launched by " + f.top_op);
  bool matrix = f.family == "gemm" || f.family == "attention" || f.family == "conv";
  std::string unit = d.matrix_unit.empty() ? std::string("tensor cores") : d.matrix_unit;
  if (matrix && !f.compute_bound) {
    a.text = "These " + f.family +
             " calls move more bytes than they compute on (low arithmetic intensity): batch them "
             "(larger M: more tokens or samples per call), fuse the small ones (grouped GEMM, "
             "torch.compile), or keep weights in a narrower dtype.";
  } else if (matrix) {
    // The library that picks these kernels, and how to make it search for faster ones.
    std::string tune;
    if (f.family == "conv")
      tune = amd(d) ? "MIOpen's search (torch.backends.cudnn.benchmark = True; MIOPEN_FIND_MODE)"
                    : "cuDNN's search (torch.backends.cudnn.benchmark = True)";
    else if (f.family == "attention")
      tune = amd(d) ? "the CK / AOTriton flash-attention backends of scaled_dot_product_attention"
                    : "the flash / cuDNN backends of scaled_dot_product_attention";
    else
      tune = amd(d) ? "TunableOp (PYTORCH_TUNABLEOP_ENABLED=1) over hipBLASLt"
                    : "torch.compile(mode=\"max-autotune\") over cuBLASLt";
    a.text =
        "These " + f.family + " calls are compute-bound yet below the peak of the " + unit +
        ": check they run on them" +
        (d.has(kMatBf16) ? " in bf16/fp16 (or TF32 for fp32)" : " in fp16") +
        ", with dimensions that are multiples of 8 (16 for fp8), and try tuned kernels: " + tune +
        ".";
  } else if (f.family == "copy") {
    a.text =
        "Avoid the copies: they only move bytes (.contiguous(), .to(dtype), layout changes). "
        "Keep tensors in the layout and dtype the next op wants, or let torch.compile fuse the "
        "copy into its consumer.";
  } else {
    a.text = std::string("Fuse these memory-bound ") + f.family +
             " kernels with their neighbours so each tensor is read once" +
             (compiled ? " (they already run compiled: check the graph breaks that split them)"
                       : " (torch.compile fuses pointwise, norm and reduction chains)") +
             ".";
  }
  char tp[16];
  std::snprintf(tp, sizeof tp, "%.0f%%", 100 * f.target_pct);
  a.why += std::string("; priced as these kernels reaching ") + tp + " of their roofline";
  return a;
}

Advice gpu_idle(const DeviceCaps& d, bool launch_bound, bool compiled, double idle_pct,
                double host_wait_share, double tiny_share, double graph_share) {
  Advice a;
  a.why = "the GPU is idle " + format_percent(idle_pct / 100) + " of its span; " +
          format_percent(host_wait_share) + " of the idle time is waiting on the host (HTA's " +
          "host wait); " + format_percent(tiny_share) + " of kernels run under 10 us";
  if (!launch_bound) {
    a.text =
        "Feed the GPU more work: larger batches, overlap data loading and host work with GPU "
        "execution, check for host-side stalls before kernels.";
    return a;
  }
  if (mtia(d)) {
    a.text =
        "Cut launch overhead: fewer, larger jobs per submission (batch small operators), or "
        "raise the batch size so each does more.";
    return a;
  }
  if (graph_share >= 0.5) {
    // Recommending graphs to a step that replays them was the H100 run's reduce-overhead trace.
    a.text =
        "Cut the host time between graph replays: the step already replays " +
        std::string(amd(d) ? "HIP" : "CUDA") + " graphs" +
        " for most of its kernels; what still launches one kernel at a time (the optimizer step, "
        "the loss) keeps the GPU waiting: capture that too (torch.compile the optimizer step, "
        "or the whole step under mode=\"reduce-overhead\"), or raise the batch size so each "
        "replay does more.";
    a.why += "; " + format_percent(graph_share) + " of kernels come from graph replays";
    return a;
  }
  if (compiled) {
    a.text = "Cut launch overhead: the step already uses torch.compile; capture it in " +
             graphs(d) + " or raise the batch size so each kernel does more.";
    a.why += "; the trace has torch.compile regions";
    return a;
  }
  a.text = "Cut launch overhead: capture the step in " + graphs(d) +
           ", fuse small kernels (torch.compile), or raise the batch size so each kernel does "
           "more.";
  return a;
}

Advice sync_stall(const DeviceCaps& d, std::string_view top_op, int64_t sync_ns, uint64_t calls) {
  Advice a;
  a.why = "the host spends " + dur(sync_ns) + " in " + std::to_string(calls) +
          " synchronizing calls" + (top_op.empty() ? "" : ", most in " + std::string(top_op));
  a.text =
      "Remove per-step host syncs: avoid .item()/.cpu()/print of device tensors inside the loop "
      "(accumulate on the device, read every N steps), use non_blocking copies and events "
      "instead of device-wide synchronize.";
  if (op_kind(top_op) == OpKind::kBlockingCopy) {
    a.text += " " + std::string(top_op) +
              " is a blocking copy: pin the host buffer and make it async (non_blocking=True).";
  }
  if (amd(d)) a.why += " (HIP)";
  return a;
}

Advice pageable_copies(const DeviceCaps& d, int64_t count, int64_t ns) {
  Advice a;
  a.why = std::to_string(count) + " host<->device copies read or write pageable memory (" +
          dur(ns) + "); the driver stages them through a pinned buffer";
  a.text =
      "Pin host buffers (DataLoader(pin_memory=True), tensor.pin_memory()) and copy with "
      "tensor.to(device, non_blocking=True) so copies run at full bandwidth and overlap compute.";
  if (amd(d)) a.text += " (ROCm: the same calls pin through hipHostMalloc.)";
  return a;
}

Advice communication(const DeviceCaps& d, double comm_pct, double overlap_pct) {
  Advice a;
  std::string lib = amd(d) ? "RCCL" : "NCCL";
  a.why = "collective kernels (" + lib + " or custom all-reduce) take " +
          format_percent(comm_pct / 100) + " of the GPU span and " +
          format_percent(overlap_pct / 100) + " of their time overlaps compute";
  a.text =
      "Overlap communication with compute: DDP gradient bucketing (bucket_cap_mb), FSDP "
      "backward/forward prefetch, gradient accumulation with no_sync(), fewer and larger "
      "collectives; consider gradient compression.";
  return a;
}

Advice data_loading(double share_pct) {
  Advice a;
  a.why = "data loading is " + format_percent(share_pct / 100) + " of step time";
  a.text =
      "Load data in background workers so it overlaps compute: DataLoader(num_workers=N, "
      "pin_memory=True, persistent_workers=True, prefetch_factor=2+); move decoding and "
      "augmentation out of the training loop.";
  return a;
}

namespace {
std::string graphs_word(const DeviceCaps& d) {
  return d.vendor == DeviceVendor::kAmd ? "HIP graphs" : "CUDA graphs";
}
}  // namespace

Advice serving_host_bound_decode(const DeviceCaps& device, std::string_view engine,
                                 bool graphs_replayed, std::string_view top_host_op) {
  Advice a;
  a.text =
      "Overlap the host's part of each decode iteration (scheduling, input preparation, "
      "sampling) with the GPU's: ";
  if (engine == "vllm")
    a.text +=
        "vLLM's async scheduling (--async-scheduling) prepares the next batch while the GPU "
        "runs this one";
  else if (engine == "sglang")
    a.text +=
        "SGLang's overlap scheduler (on by default; check --disable-overlap-schedule is not "
        "set)";
  else
    a.text += "prepare the next batch while the GPU runs this one";
  a.text += graphs_replayed ? "; the model already replays " + graphs_word(device) +
                                  ", so what is left is the engine's own Python"
                            : "; replay the decode forward pass as " + graphs_word(device) +
                                  " (vLLM: do not pass --enforce-eager; SGLang: keep "
                                  "--disable-cuda-graph off) to cut its launches";
  a.text +=
      ". Larger decode batches (more concurrent requests) spread the same host time over "
      "more tokens.";
  if (!top_host_op.empty())
    a.why = "the largest host cost inside the decode iterations is " + std::string(top_host_op);
  return a;
}

Advice serving_graph_coverage(const DeviceCaps& device, std::string_view engine,
                              double coverage_pct) {
  Advice a;
  a.text = "Run more of the iteration inside " + graphs_word(device) + ": ";
  if (engine == "vllm")
    a.text +=
        "vLLM captures full graphs for decode-only batches and piecewise graphs (attention "
        "eager) otherwise (compilation_config cudagraph_mode=FULL_AND_PIECEWISE); check "
        "the batch sizes you serve are in cudagraph_capture_sizes";
  else if (engine == "sglang")
    a.text +=
        "raise --cuda-graph-max-bs to cover the batch sizes you serve, and keep "
        "--disable-cuda-graph off";
  else
    a.text +=
        "torch.compile(mode=\"reduce-overhead\") or torch.cuda.graphs around the "
        "eager part";
  a.text += ".";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.1f%%", coverage_pct);
  a.why = std::string(buf) +
          " of the GPU time runs inside graph replays; the rest is launched "
          "one kernel at a time";
  return a;
}

Advice serving_batch_missed_graph(const DeviceCaps& device, std::string_view engine) {
  Advice a;
  a.text = "Capture " + graphs_word(device) + " for the batch sizes that ran eagerly: ";
  if (engine == "vllm")
    a.text +=
        "add them to compilation_config cudagraph_capture_sizes (or raise "
        "max_cudagraph_capture_size); vLLM pads a batch up to the next captured size";
  else if (engine == "sglang")
    a.text +=
        "raise --cuda-graph-max-bs (or list them in --cuda-graph-bs); SGLang pads a batch "
        "up to the next captured size";
  else
    a.text += "capture one graph per batch size you serve, or pad batches to a captured size";
  a.text += ".";
  return a;
}

Advice serving_prefill_imbalance(std::string_view engine) {
  Advice a;
  a.text = "Split long prefills so they do not stall the running decodes: ";
  if (engine == "vllm")
    a.text +=
        "chunked prefill (--enable-chunked-prefill with a smaller "
        "--max-num-batched-tokens) mixes prefill chunks into decode batches";
  else if (engine == "sglang")
    a.text += "a smaller --chunked-prefill-size, or mixed chunks (--enable-mixed-chunk)";
  else
    a.text += "chunk the prompts so each iteration mixes a prefill chunk with the decodes";
  a.text +=
      "; with many such requests, disaggregated prefill puts them on other GPUs. This "
      "moves time between requests (time to first token vs time per output token): the "
      "replay cannot price it, so no saving is claimed.";
  return a;
}

}  // namespace mlprof::advice
