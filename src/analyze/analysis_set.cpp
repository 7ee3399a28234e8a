#include "mlprof/analysis_set.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <thread>
#include <tuple>
#include <utility>

#include "analyze/trace_memo.h"
#include "mlprof/analyze/gpu_events.h"

namespace mlprof {

// ---- the table: what each analysis needs --------------------------------------------------------

const std::array<AnalysisInfo, kAnalysisCount>& analysis_table() {
  using enum AnalysisId;
  static const std::array<AnalysisInfo, kAnalysisCount> table = {{
#define MLPROF_X(Id, name, Result, Options, needs, requires_, report, analyze_json, analyze_text, \
                 title, csv, schema)                                                              \
  {k##Id,                                                                                         \
   #name,                                                                                         \
   {MLPROF_ANALYSIS_LIST needs},                                                                  \
   AnalysisRequires::requires_,                                                                   \
   report,                                                                                        \
   analyze_json,                                                                                  \
   analyze_text,                                                                                  \
   title,                                                                                         \
   csv,                                                                                           \
   schema},
      MLPROF_ANALYSES(MLPROF_X)
#undef MLPROF_X
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
  // Once per result, and again after a computation that threw (Cancelled: serve's client went
  // away, trace/cancel.h). Not std::call_once: it relies on pthread_once unwinding, which
  // ThreadSanitizer's interceptor does not do (the next caller waited forever under TSan).
  std::array<std::mutex, kAnalysisCount> computing;
  std::array<std::atomic<bool>, kAnalysisCount> done{};
#define MLPROF_X(Id, name, Result, ...) std::optional<Result> name;
  MLPROF_ANALYSES(MLPROF_X)
#undef MLPROF_X
  // Why an analysis lacks its content (AnalysisInfo::requires_), looked up once.
  std::array<std::once_flag, kAnalysisCount> content_once;
  std::array<std::optional<std::string>, kAnalysisCount> content_missing;
  std::once_flag graph_once;
  std::unique_ptr<DependencyGraph> graph;
  // Tables several analyses derive from the same trace, built once (trace_memo.h).
  TraceMemo memo;
};

template <typename T, typename F>
const T& AnalysisSet::get(AnalysisId id, std::optional<T>& slot, F&& compute) {
  const size_t k = static_cast<size_t>(id);
  if (slots_->done[k].load(std::memory_order_acquire)) return *slot;
  std::lock_guard<std::mutex> lock(slots_->computing[k]);
  if (slots_->done[k].load(std::memory_order_relaxed)) return *slot;  // another thread's
  // MLPROF_TIMING=1: each analysis' time (its inputs' included when they were not ready), to
  // find what grows faster than the trace.
  static const bool timing = std::getenv("MLPROF_TIMING") != nullptr;
  auto t0 = std::chrono::steady_clock::now();
  TraceMemoScope memo(slots_->memo);
  slot.emplace(compute());  // a throw leaves the slot empty and not done: the next caller retries
  if (timing)
    std::fprintf(
        stderr, "analysis %.*s: %.1f ms\n", static_cast<int>(analysis_info(id).name.size()),
        analysis_info(id).name.data(),
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  slots_->done[k].store(true, std::memory_order_release);
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
  using R = AnalysisRequires;
  const AnalysisInfo& info = analysis_info(id);
  if (info.requires_ == R::kGpuStreams && !has_gpu_)
    return "no GPU streams in this trace (a CPU-only profile)";
  if (info.requires_ == R::kRanks && !rank_set_)
    return "one trace: rank analysis needs several (a directory with one trace per rank)";
  // trace(): a rank set of summaries loads the rank it analyzes in depth on first use.
  if (trace().compile_logs && id != AnalysisId::kCompile)
    return "a torch.compile structured log: its analysis is compile (mlprof compile PATH)";
  if (info.requires_ == R::kNothing || info.requires_ == R::kGpuStreams ||
      info.requires_ == R::kRanks)
    return std::nullopt;
  size_t k = static_cast<size_t>(id);
  std::call_once(slots_->content_once[k],
                 [&] { slots_->content_missing[k] = content_missing(info.requires_); });
  return slots_->content_missing[k];
}

std::optional<std::string> AnalysisSet::content_missing(AnalysisRequires content) const {
  using R = AnalysisRequires;
  switch (content) {
    case R::kNothing:
    case R::kGpuStreams:
    case R::kRanks:
      return std::nullopt;
    case R::kMemorySnapshot:
      if (trace().memory_snapshot) return std::nullopt;
      return "not a CUDA memory snapshot (torch.cuda.memory._dump_snapshot .pickle/.json)";
    case R::kModuleEvents:
      return modules_unavailable(trace());
    case R::kCriticalPathWindow:
      return critical_path_unavailable(
          trace(), with_step_annotation(options_.critical_path, options_.steps.step_annotation));
    case R::kCompiledRegions:
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

// ---- the getters: each result computed once, by analysis_stage::compute_NAME -----------------

#define MLPROF_X(Id, name, Result, ...)                                \
  const Result& AnalysisSet::name() {                                  \
    return get(AnalysisId::k##Id, slots_->name,                        \
               [&] { return analysis_stage::compute_##name(*this); }); \
  }
MLPROF_ANALYSES(MLPROF_X)
#undef MLPROF_X

void AnalysisSet::provide_heap(HeapResult heap) {
  get(AnalysisId::kHeap, slots_->heap, [&] { return std::move(heap); });
}

const DependencyGraph& AnalysisSet::dependency_graph() const {
  std::call_once(slots_->graph_once, [&] {
    static const bool timing = std::getenv("MLPROF_TIMING") != nullptr;
    auto t0 = std::chrono::steady_clock::now();
    TraceMemoScope memo(slots_->memo);  // the graph reads the set's GPU event table
    slots_->graph = std::make_unique<DependencyGraph>(trace(), options_.steps.step_annotation);
    if (timing)
      std::fprintf(
          stderr, "dependency graph: %.1f ms\n",
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  });
  return *slots_->graph;
}

CriticalPathResult AnalysisSet::critical_path_for(const CriticalPathOptions& options) const {
  TraceMemoScope memo(slots_->memo);
  return analyze_critical_path(trace(), options, &dependency_graph());
}

GpuResult AnalysisSet::gpu_hta() {
  if (!has_gpu()) return {};
  GpuOptions o = options_.gpu;
  o.hta_compatible = true;
  const StepsResult& st = steps();
  TraceMemoScope memo(slots_->memo);
  return analyze_gpu(trace(), o, &st);
}

KernelsResult AnalysisSet::kernels_hta() const {
  if (!has_gpu()) return {};
  KernelsOptions o = options_.kernels;
  o.hta_compatible = true;
  TraceMemoScope memo(slots_->memo);
  return analyze_kernels(trace(), o);
}

namespace {

void compute_one(AnalysisSet& s, AnalysisId id) {
  switch (id) {
#define MLPROF_X(Id, name, ...) \
  case AnalysisId::k##Id:       \
    s.name();                   \
    break;
    MLPROF_ANALYSES(MLPROF_X)
#undef MLPROF_X
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
