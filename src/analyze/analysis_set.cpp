#include "mlprof/analysis_set.h"

#include <algorithm>
#include <atomic>
#include <future>
#include <thread>
#include <tuple>
#include <utility>

#include "analyze/op_rows.h"
#include "mlprof/analyze/gpu_events.h"

namespace mlprof {

// ---- the table: what each analysis needs --------------------------------------------------------

const std::array<AnalysisInfo, kAnalysisCount>& analysis_table() {
  using A = AnalysisId;
  static const std::array<AnalysisInfo, kAnalysisCount> table = {{
      {A::kSummary, "summary", {}},
      {A::kOps, "ops", {}},
      {A::kSteps, "steps", {}},
      {A::kKernels, "kernels", {}, /*needs_gpu=*/true},
      {A::kGpu, "gpu", {A::kSteps}, /*needs_gpu=*/true},
      {A::kMemory, "memory", {}},
      {A::kLeaks, "leaks", {A::kSteps}},
      {A::kHeap, "heap", {}},
      // GPU results only when the trace has GPU streams, ranks only for a rank set.
      {A::kBottlenecks,
       "bottlenecks",
       {A::kSteps, A::kMemory, A::kLeaks, A::kGpu, A::kKernels, A::kRanks}},
      {A::kFlops, "flops", {A::kSteps}},
      {A::kFlame, "flame", {}},
      {A::kTimeline, "timeline", {}},
      {A::kModules, "modules", {}, false, false, AnalysisInfo::Content::kModuleEvents},
      {A::kCriticalPath,
       "critical_path",
       {},
       false,
       false,
       AnalysisInfo::Content::kCriticalPathWindow},
      {A::kRanks, "ranks", {}, false, /*needs_ranks=*/true},
      {A::kCompile, "compile", {}, false, false, AnalysisInfo::Content::kCompiledRegions},
      {A::kMemorySnapshot,
       "memory_snapshot",
       {},
       false,
       false,
       AnalysisInfo::Content::kMemorySnapshot},
  }};
  return table;
}

const AnalysisInfo& analysis_info(AnalysisId id) {
  return analysis_table()[static_cast<size_t>(id)];
}

std::optional<AnalysisId> analysis_id(std::string_view name) {
  for (const AnalysisInfo& a : analysis_table())
    if (a.name == name) return a.id;
  return std::nullopt;
}

void AnalysisOptions::set_hta_compatible(bool on) {
  gpu.hta_compatible = on;
  kernels.hta_compatible = on;
  ops.stats.hta_compatible = on;
  ranks.hta_compatible = on;
}

// ---- result slots -------------------------------------------------------------------------------

struct AnalysisSet::Slots {
  std::array<std::once_flag, kAnalysisCount> once;
  std::array<std::atomic<bool>, kAnalysisCount> done{};
  std::tuple<std::optional<SummaryResult>, std::optional<OpsResult>, std::optional<StepsResult>,
             std::optional<KernelsResult>, std::optional<GpuResult>, std::optional<MemoryResult>,
             std::optional<LeakResult>, std::optional<HeapResult>, std::optional<BottleneckResult>,
             std::optional<FlopsResult>, std::optional<FlameGraph>, std::optional<TimelineResult>,
             std::optional<ModulesResult>, std::optional<CriticalPathResult>,
             std::optional<RanksResult>, std::optional<CompileResult>,
             std::optional<SnapshotResult>>
      results;
  // Why an analysis lacks its content (AnalysisInfo::needs_content), looked up once.
  std::array<std::once_flag, kAnalysisCount> content_once;
  std::array<std::optional<std::string>, kAnalysisCount> content_missing;
};

template <typename T, typename F>
const T& AnalysisSet::get(AnalysisId id, F&& compute) {
  std::optional<T>& slot = std::get<std::optional<T>>(slots_->results);
  std::call_once(slots_->once[static_cast<size_t>(id)], [&] {
    slot.emplace(compute());
    slots_->done[static_cast<size_t>(id)] = true;
  });
  return *slot;
}

AnalysisSet::AnalysisSet(const Trace& trace, AnalysisOptions options)
    : options_(std::move(options)) {
  ranks_.push_back(&trace);
  init();
}

AnalysisSet::AnalysisSet(Trace&& trace, AnalysisOptions options) : options_(std::move(options)) {
  owned_.push_back(std::move(trace));
  ranks_.push_back(&owned_.front());
  init();
}

AnalysisSet::AnalysisSet(std::vector<Trace>&& ranks, AnalysisOptions options,
                         std::vector<std::string> errors)
    : options_(std::move(options)), owned_(std::move(ranks)), rank_errors_(std::move(errors)) {
  for (const Trace& t : owned_) ranks_.push_back(&t);
  rank_set_ = true;
  init();
}

AnalysisSet::AnalysisSet(const std::vector<const Trace*>& ranks, AnalysisOptions options,
                         std::vector<std::string> errors)
    : options_(std::move(options)), ranks_(ranks), rank_errors_(std::move(errors)) {
  rank_set_ = true;
  init();
}

AnalysisSet::AnalysisSet(std::vector<RankSummary> summaries, RankLoader load,
                         AnalysisOptions options, std::vector<std::string> errors)
    : options_(std::move(options)),
      summaries_(std::move(summaries)),
      load_focus_(std::move(load)),
      rank_errors_(std::move(errors)) {
  rank_set_ = true;
  init();
}

AnalysisSet::~AnalysisSet() = default;

void AnalysisSet::init() {
  slots_ = std::make_unique<Slots>();
  static const Trace kEmpty;
  if (!rank_set_ || summaries_.empty()) {
    if (ranks_.empty()) ranks_.push_back(&kEmpty);
    focus_ = ranks_.front();
  }
  if (rank_set_) {
    // The rank analyzed in depth: the straggler that costs the job most (in a synchronous job
    // every rank's step lasts as long as the straggler's, so the step time alone cannot tell),
    // else the slowest rank, which sets the job's pace (the first in the ranks' order, by rank
    // then file, when several are as slow).
    std::vector<std::pair<std::string, bool>> gpu_of;  // a summary's source and has_gpu
    for (const RankSummary& s : summaries_) gpu_of.emplace_back(s.stats.source, s.has_gpu);
    const bool summarized = !summaries_.empty();
    const RanksResult& r = ranks();  // takes the summaries: they are not held twice
    const RankStats* pick = nullptr;
    if (const StragglerEvidence* worst = worst_straggler(r)) {
      for (const RankStats& rs : r.ranks)
        if (rs.straggler && rs.rank == worst->rank) {
          pick = &rs;
          break;
        }
      focus_reason_ = "the straggler";
    }
    if (pick == nullptr) {
      for (const RankStats& rs : r.ranks)  // by rank, then file
        if (pick == nullptr || rs.wall_ns > pick->wall_ns) pick = &rs;
      focus_reason_ = "the slowest rank";
    }
    if (pick != nullptr) focus_source_ = pick->source;
    if (summarized) {
      for (const auto& [source, gpu] : gpu_of)
        if (source == focus_source_) has_gpu_ = gpu;
      return;  // the focus trace is loaded on first use
    }
    for (const Trace* t : ranks_)
      if (t->meta.source == focus_source_) {
        focus_ = t;
        break;
      }
  }
  has_gpu_ = ::mlprof::has_gpu(*focus_);
}

const Trace& AnalysisSet::trace() const {
  if (focus_ != nullptr) return *focus_;
  std::call_once(focus_once_, [&] {
    Result<Trace> t =
        load_focus_ ? load_focus_(focus_source_) : Result<Trace>(Status::error("no loader"));
    if (t) {
      focus_loaded_.emplace(std::move(t.value()));
    } else {
      focus_error_ = t.error();
      focus_loaded_.emplace();
    }
    focus_loaded_->meta.source = focus_source_;
  });
  return *focus_loaded_;
}

bool AnalysisSet::computed(AnalysisId id) const { return slots_->done[static_cast<size_t>(id)]; }

std::optional<std::string> AnalysisSet::unavailable(AnalysisId id) const {
  const AnalysisInfo& info = analysis_info(id);
  if (info.needs_gpu && !has_gpu_) return "no GPU streams in this trace (a CPU-only profile)";
  if (info.needs_ranks && !rank_set_)
    return "one trace: rank analysis needs several (a directory with one trace per rank)";
  // trace(): a rank set of summaries loads the rank it analyzes in depth on first use.
  if (trace().compile_logs && id != AnalysisId::kCompile)
    return "a torch.compile structured log: its analysis is compile (mlprof compile PATH)";
  if (info.needs_content == AnalysisInfo::Content::kAny) return std::nullopt;
  size_t k = static_cast<size_t>(id);
  std::call_once(slots_->content_once[k],
                 [&] { slots_->content_missing[k] = content_missing(info.needs_content); });
  return slots_->content_missing[k];
}

std::optional<std::string> AnalysisSet::content_missing(AnalysisInfo::Content content) const {
  using C = AnalysisInfo::Content;
  switch (content) {
    case C::kAny:
      return std::nullopt;
    case C::kMemorySnapshot:
      if (trace().memory_snapshot) return std::nullopt;
      return "not a CUDA memory snapshot (torch.cuda.memory._dump_snapshot .pickle/.json)";
    case C::kModuleEvents:
      return modules_unavailable(trace());
    case C::kCriticalPathWindow:
      return critical_path_unavailable(trace(), options_.critical_path);
    case C::kCompiledRegions:
      break;
  }
  if (trace().compile_logs || has_compiled_regions(trace())) return std::nullopt;
  // Triton kernels without a region: compiled code called directly (vLLM's piecewise
  // graphs); "eager code" alone read wrong there.
  uint64_t triton = triton_kernel_count(trace());
  return "no torch.compile regions in this trace (Torch-Compiled Region, CompiledFxGraph, "
         "CompiledFunction): " +
         (triton ? std::to_string(triton) +
                       " triton kernels ran from compiled graphs called without a Dynamo "
                       "region (vLLM's piecewise graphs, AOTInductor), not attributed"
                 : std::string("eager code, or a profile without the compiled calls"));
}

// ---- the analyses, each reading its inputs from the set -----------------------------------------

const SummaryResult& AnalysisSet::summary() {
  return get<SummaryResult>(AnalysisId::kSummary,
                            [&] { return summarize(trace(), options_.summary); });
}

const OpsResult& AnalysisSet::ops() {
  return get<OpsResult>(AnalysisId::kOps, [&] {
    OpsResult r;
    OpStatsOptions so = options_.ops.stats;
    so.device_time = true;
    // Statistics only for the rows kept (a trace of 1e6 op names, ops.top set).
    r.ops = op_stats_top(trace(), so, options_.ops.sort, options_.ops.top, &r.rows);
    r.device_time = has_gpu_;
    return r;
  });
}

const StepsResult& AnalysisSet::steps() {
  return get<StepsResult>(AnalysisId::kSteps,
                          [&] { return analyze_steps(trace(), options_.steps); });
}

const KernelsResult& AnalysisSet::kernels() {
  return get<KernelsResult>(AnalysisId::kKernels, [&] {
    return has_gpu_ ? analyze_kernels(trace(), options_.kernels) : KernelsResult{};
  });
}

const GpuResult& AnalysisSet::gpu() {
  return get<GpuResult>(AnalysisId::kGpu, [&] {
    return has_gpu_ ? analyze_gpu(trace(), options_.gpu, &steps()) : GpuResult{};
  });
}

const MemoryResult& AnalysisSet::memory() {
  return get<MemoryResult>(AnalysisId::kMemory,
                           [&] { return analyze_memory(trace(), options_.memory); });
}

const LeakResult& AnalysisSet::leaks() {
  return get<LeakResult>(AnalysisId::kLeaks,
                         [&] { return analyze_leaks(trace(), steps(), options_.leaks); });
}

const HeapResult& AnalysisSet::heap() {
  return get<HeapResult>(AnalysisId::kHeap, [&] { return analyze_heap(trace(), options_.heap); });
}

void AnalysisSet::provide_heap(HeapResult heap) {
  get<HeapResult>(AnalysisId::kHeap, [&] { return std::move(heap); });
}

const BottleneckResult& AnalysisSet::bottlenecks() {
  return get<BottleneckResult>(AnalysisId::kBottlenecks, [&] {
    BottleneckInputs in;
    in.steps = &steps();
    in.memory = &memory();
    in.leaks = &leaks();
    if (has_gpu_) {
      in.gpu = &gpu();
      in.kernels = &kernels();
    }
    if (!unavailable(AnalysisId::kRanks)) in.ranks = &ranks();
    return find_bottlenecks(trace(), in);
  });
}

const FlopsResult& AnalysisSet::flops() {
  return get<FlopsResult>(AnalysisId::kFlops,
                          [&] { return analyze_flops(trace(), steps(), options_.flops); });
}

const FlameGraph& AnalysisSet::flame() {
  return get<FlameGraph>(AnalysisId::kFlame,
                         [&] { return build_flame_graph(trace(), options_.flame); });
}

const TimelineResult& AnalysisSet::timeline() {
  return get<TimelineResult>(AnalysisId::kTimeline,
                             [&] { return analyze_timeline(trace(), options_.timeline); });
}

const ModulesResult& AnalysisSet::modules() {
  return get<ModulesResult>(AnalysisId::kModules,
                            [&] { return analyze_modules(trace(), options_.modules); });
}

const CriticalPathResult& AnalysisSet::critical_path() {
  return get<CriticalPathResult>(AnalysisId::kCriticalPath, [&] {
    return analyze_critical_path(trace(), options_.critical_path);
  });
}

CriticalPathResult AnalysisSet::critical_path_for(const CriticalPathOptions& options) const {
  return analyze_critical_path(trace(), options);
}

const RanksResult& AnalysisSet::ranks() {
  return get<RanksResult>(AnalysisId::kRanks, [&] {
    RanksResult r = summaries_.empty()
                        ? analyze_ranks(ranks_, options_.ranks)
                        : analyze_rank_summaries(std::exchange(summaries_, {}), options_.ranks);
    r.errors = rank_errors_;
    return r;
  });
}

const CompileResult& AnalysisSet::compile() {
  return get<CompileResult>(AnalysisId::kCompile, [&] {
    if (unavailable(AnalysisId::kCompile)) return CompileResult{};
    // A torch.compile log (or a TORCH_TRACE directory of them): the logs-only form of
    // `mlprof compile`; a Kineto trace: its compiled regions.
    if (trace().compile_logs)
      return analyze_compile(*trace().compile_logs, nullptr, options_.compile);
    return analyze_compile({}, &trace(), options_.compile);
  });
}

const SnapshotResult& AnalysisSet::memory_snapshot() {
  return get<SnapshotResult>(AnalysisId::kMemorySnapshot, [&] {
    if (!trace().memory_snapshot) return SnapshotResult{};
    SnapshotResult r = analyze_memory_snapshot(*trace().memory_snapshot, options_.memory_snapshot);
    r.source = trace().meta.source;  // the name every consumer gives the file (serve reads an fd)
    return r;
  });
}

namespace {

void compute_one(AnalysisSet& s, AnalysisId id) {
  switch (id) {
    case AnalysisId::kSummary:
      s.summary();
      break;
    case AnalysisId::kOps:
      s.ops();
      break;
    case AnalysisId::kSteps:
      s.steps();
      break;
    case AnalysisId::kKernels:
      s.kernels();
      break;
    case AnalysisId::kGpu:
      s.gpu();
      break;
    case AnalysisId::kMemory:
      s.memory();
      break;
    case AnalysisId::kLeaks:
      s.leaks();
      break;
    case AnalysisId::kHeap:
      s.heap();
      break;
    case AnalysisId::kBottlenecks:
      s.bottlenecks();
      break;
    case AnalysisId::kFlops:
      s.flops();
      break;
    case AnalysisId::kFlame:
      s.flame();
      break;
    case AnalysisId::kTimeline:
      s.timeline();
      break;
    case AnalysisId::kModules:
      s.modules();
      break;
    case AnalysisId::kCriticalPath:
      s.critical_path();
      break;
    case AnalysisId::kRanks:
      s.ranks();
      break;
    case AnalysisId::kCompile:
      s.compile();
      break;
    case AnalysisId::kMemorySnapshot:
      s.memory_snapshot();
      break;
  }
}

}  // namespace

void AnalysisSet::compute(const std::vector<AnalysisId>& ids) {
  // Every requested analysis and its inputs, inputs first.
  std::array<bool, kAnalysisCount> wanted{};
  std::vector<AnalysisId> order;
  auto visit = [&](auto& self, AnalysisId id) -> void {
    if (wanted[static_cast<size_t>(id)] || unavailable(id)) return;
    wanted[static_cast<size_t>(id)] = true;
    for (AnalysisId need : analysis_info(id).needs) self(self, need);
    order.push_back(id);
  };
  for (AnalysisId id : ids) visit(visit, id);
  unsigned workers = std::min<unsigned>(std::max(1u, std::thread::hardware_concurrency()),
                                        static_cast<unsigned>(order.size()));
  if (workers <= 1) {
    for (AnalysisId id : order) compute_one(*this, id);
    return;
  }
  // Workers take analyses in dependency order; one that needs a result another worker is
  // computing waits for it inside call_once, so the order only affects speed.
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i = next++; i < order.size(); i = next++) compute_one(*this, order[i]);
  };
  std::vector<std::future<void>> pool;
  for (unsigned w = 1; w < workers; ++w) pool.push_back(std::async(std::launch::async, work));
  work();
  for (auto& f : pool) f.get();
}

}  // namespace mlprof
