#include "mlprof/analyze/dependency_graph.h"

#include "mlprof/analyze/step_replay.h"

namespace mlprof {

DependencyGraph::~DependencyGraph() = default;

DependencyGraph::DependencyGraph(const Trace& t, std::string_view step_annotation)
    : trace_(&t), step_annotation_(step_annotation) {
  const SliceTable& s = t.slices;
  markers_ = step_markers(t, step_annotation);
  StringId cpu_op = t.strings.find("cpu_op"), rt = t.strings.find("cuda_runtime"),
           drv = t.strings.find("cuda_driver"), sync_cat = t.strings.find("cuda_sync"),
           gpu_ann = t.strings.find("gpu_user_annotation");
  StringId k_corr = t.strings.find("correlation");
  StringId record = t.strings.find("cudaEventRecord");
  auto corr_of = [&](size_t i) -> int64_t {
    if (k_corr == StringPool::kNotFound) return kNoCorrelation;
    const Arg* a = t.find_arg(s.args_begin[i], s.args_count[i], k_corr);
    auto v = a ? a->as_int() : std::nullopt;
    return v ? *v : kNoCorrelation;
  };
  auto int_arg = [&](size_t i, std::string_view key) -> std::optional<int64_t> {
    const Arg* a = t.slice_arg(i, key);
    return a ? a->as_int() : std::nullopt;
  };
  for (size_t i = 0; i < s.size(); ++i) {
    StringId c = s.cat[i];
    bool gpu_track = t.is_gpu_track(s.track[i]);
    if (record != StringPool::kNotFound && s.name[i] == record) {
      int64_t corr = corr_of(i);
      event_records_[corr == kNoCorrelation ? -1 : corr] = static_cast<uint32_t>(i);
    }
    if (!gpu_track && (c == cpu_op || c == rt || c == drv)) {
      host_calls_.push_back({static_cast<uint32_t>(i), corr_of(i), c != cpu_op});
      continue;
    }
    bool sync = c == sync_cat && sync_cat != StringPool::kNotFound;
    if (sync) has_sync_events_ = true;
    if ((!gpu_track && !sync) || (c == gpu_ann && gpu_ann != StringPool::kNotFound)) continue;
    const Track& tr = t.tracks[s.track[i]];
    DepGpuEvent e{static_cast<uint32_t>(i), corr_of(i), sync, tr.stream, tr.device, kNoStream};
    if (sync) {
      if (auto v = int_arg(i, "stream")) e.stream = *v;
      if (auto v = int_arg(i, "device")) e.device = static_cast<int32_t>(*v);
      bool event_sync = t.str(s.name[i]) == "Event Sync";
      if (auto v = int_arg(i, event_sync ? "wait_on_stream" : "stream")) e.waited_stream = *v;
      if (e.corr != kNoCorrelation && e.waited_stream != kNoStream)
        sync_streams_[e.corr] = e.waited_stream;
    }
    gpu_events_.push_back(e);
  }
  gpu_ops_ = collect_gpu_events(t);
}

const StepModel& DependencyGraph::replay() const {
  std::call_once(replay_once_, [&] { replay_ = std::make_unique<StepModel>(*this); });
  return *replay_;
}

}  // namespace mlprof
