// The step model: which slices are a trace's iterations (ProfilerStep#N, an engine's iteration
// annotation, a user-named one), and what a serving engine's annotation says about its batch.
#include <algorithm>
#include <charconv>
#include <memory>
#include <regex>

#include "analyze/iteration_markers.h"
#include "mlprof/analyze/steps.h"

namespace mlprof {

std::string_view step_source_name(StepSource s) {
  static constexpr std::string_view kNames[] = {"none", "profiler_step", "annotation",
                                                "vllm", "sglang",        "trace_span"};
  return kNames[static_cast<size_t>(s)];
}

std::string_view iteration_phase_name(IterationPhase p) {
  static constexpr std::string_view kNames[] = {"unknown", "prefill", "decode", "mixed"};
  return kNames[static_cast<size_t>(p)];
}

namespace {

// A cursor over an annotation: literal prefixes and unsigned decimal numbers.
struct Cursor {
  std::string_view s;
  size_t i = 0;
  bool lit(std::string_view w) {
    if (s.substr(i, w.size()) != w) return false;
    i += w.size();
    return true;
  }
  bool num(int64_t& out) {
    if (i >= s.size() || s[i] < '0' || s[i] > '9') return false;
    auto [p, ec] = std::from_chars(s.data() + i, s.data() + s.size(), out);
    if (ec != std::errc()) return false;
    i = static_cast<size_t>(p - s.data());
    return true;
  }
  bool done() const { return i == s.size(); }
};

// "(sq<q>sk<k>sqsq<qq>sqsk<qk>)": the sums of query and key lengths (and of their products).
bool detailed_group(Cursor& c, int64_t& q, int64_t& k) {
  int64_t qq = 0, qk = 0;
  return c.lit("(sq") && c.num(q) && c.lit("sk") && c.num(k) && c.lit("sqsq") && c.num(qq) &&
         c.lit("sqsk") && c.num(qk) && c.lit(")");
}

// "(<tokens>)": vLLM's default annotation holds one number per side, the scheduled tokens of
// that side's requests. A build that added "_<sum of squared query lengths>" (the B200 GPT-OSS
// trace: "(888_788544)", 888^2 = 788544) is read too; the extra numbers are not used.
bool plain_group(Cursor& c, int64_t& tokens) {
  if (!c.lit("(") || !c.num(tokens)) return false;
  int64_t more = 0;
  while (c.lit("_"))
    if (!c.num(more)) return false;
  return c.lit(")");
}

IterationPhase phase_of(int64_t context, int64_t generation) {
  if (context > 0 && generation > 0) return IterationPhase::kMixed;
  if (context > 0) return IterationPhase::kPrefill;
  if (generation > 0) return IterationPhase::kDecode;
  return IterationPhase::kUnknown;
}

}  // namespace

std::optional<ServingIteration> parse_vllm_iteration(std::string_view name) {
  Cursor c{name};
  ServingIteration it;
  if (!c.lit("execute_")) return std::nullopt;
  if (c.lit("context_")) {
    // vLLM's default (vllm/v1/worker/gpu_worker.py, Worker.annotate_profile; counts from
    // compute_iteration_details in vllm/v1/utils.py):
    // execute_context_<ctx requests>(<ctx tokens>)_generation_<gen requests>(<gen tokens>), a
    // side's tokens being its requests' scheduled tokens (a decode schedules 1 + its speculative
    // tokens). The detailed form below is the same counts with
    // profiler_config.detailed_trace_annotation.
    if (!c.num(it.context_requests) || !plain_group(c, it.context_tokens) ||
        !c.lit("_generation_") || !c.num(it.generation_requests) ||
        !plain_group(c, it.generation_tokens) || !c.done())
      return std::nullopt;
    it.num_tokens = it.context_tokens + it.generation_tokens;  // the detailed form's N
  } else {
    if (!c.num(it.num_tokens) || !c.lit("_context_") || !c.num(it.context_requests) ||
        !detailed_group(c, it.context_tokens, it.context_kv) || !c.lit("_generation_") ||
        !c.num(it.generation_requests) ||
        !detailed_group(c, it.generation_tokens, it.generation_kv) || !c.done())
      return std::nullopt;
  }
  it.batch_size = it.context_requests + it.generation_requests;
  it.phase = phase_of(it.context_requests, it.generation_requests);
  return it;
}

std::optional<ServingIteration> parse_sglang_iteration(std::string_view name) {
  if (!name.starts_with("step[") || !name.ends_with("]")) return std::nullopt;
  std::string_view body = name.substr(5, name.size() - 6);
  size_t sp = body.find(' ');
  ServingIteration it;
  it.mode = std::string(body.substr(0, sp));
  if (it.mode.empty()) return std::nullopt;
  for (char ch : it.mode)
    if (!((ch >= 'A' && ch <= 'Z') || ch == '_')) return std::nullopt;
  while (sp != std::string_view::npos) {
    body = body.substr(sp + 1);
    sp = body.find(' ');
    std::string_view kv = body.substr(0, sp);
    size_t eq = kv.find('=');
    if (eq == std::string_view::npos) return std::nullopt;
    int64_t v = 0;
    std::string_view val = kv.substr(eq + 1);
    auto [p, ec] = std::from_chars(val.data(), val.data() + val.size(), v);
    if (ec != std::errc() || p != val.data() + val.size()) return std::nullopt;
    std::string_view key = kv.substr(0, eq);
    if (key == "bs") it.batch_size = v;
    if (key == "toks") it.num_tokens = v;
  }
  // SGLang's ForwardMode: EXTEND (prefill), DECODE, MIXED (chunked prefill with decodes); the
  // others (IDLE, TARGET_VERIFY, DRAFT_EXTEND, ...) keep an unknown phase.
  if (it.mode == "EXTEND" || it.mode == "PREFILL") {
    it.phase = IterationPhase::kPrefill;
    it.context_requests = it.batch_size;
    it.generation_requests = it.batch_size >= 0 ? 0 : -1;
    it.context_tokens = it.num_tokens;
    it.generation_tokens = it.batch_size >= 0 ? 0 : -1;
  } else if (it.mode == "DECODE") {
    it.phase = IterationPhase::kDecode;
    it.generation_requests = it.batch_size;
    it.context_requests = it.batch_size >= 0 ? 0 : -1;
    it.generation_tokens = it.num_tokens >= 0 ? it.num_tokens : it.batch_size;
    it.context_tokens = it.batch_size >= 0 ? 0 : -1;
  } else if (it.mode == "MIXED") {
    it.phase = IterationPhase::kMixed;
  }
  return it;
}

namespace {
constexpr uint8_t kUnset = 0x80;
uint8_t source_bit(StepSource src) {
  return static_cast<uint8_t>(1u << static_cast<unsigned>(src));
}
}  // namespace

IterationMarkerNames::IterationMarkerNames(const Trace& trace, std::string_view step_annotation)
    : trace_(trace), kind_(trace.strings.size(), kUnset) {
  if (step_annotation.empty()) return;
  try {
    auto re =
        std::make_shared<const std::regex>(std::string(step_annotation), std::regex::ECMAScript);
    user_ = [re](std::string_view n) { return std::regex_search(n.begin(), n.end(), *re); };
  } catch (const std::regex_error& e) {
    error_ = "--step-annotation '" + std::string(step_annotation) +
             "' is not a valid regular expression (" + e.what() + ")";
  }
}

uint8_t IterationMarkerNames::sources(StringId name) {
  if (name >= kind_.size()) return 0;
  uint8_t& k = kind_[name];
  if (k == kUnset) {
    std::string_view n = trace_.str(name);
    k = 0;
    if (user_ && user_(n)) k |= source_bit(StepSource::kAnnotation);
    if (step_number(n)) k |= source_bit(StepSource::kProfilerStep);
    if (n.starts_with("execute_") && parse_vllm_iteration(n)) k |= source_bit(StepSource::kVllm);
    if (n.starts_with("step[") && parse_sglang_iteration(n)) k |= source_bit(StepSource::kSglang);
  }
  return k;
}

StepMarkers step_markers(const Trace& trace, std::string_view step_annotation) {
  StepMarkers out;
  const SliceTable& s = trace.slices;
  IterationMarkerNames names(trace, step_annotation);
  if (!names.error().empty()) {
    out.error = names.error();
    return out;
  }
  std::array<std::vector<size_t>, 6> found;
  for (size_t i = 0; i < s.size(); ++i) {
    if (trace.is_gpu_track(s.track[i])) continue;  // Kineto mirrors annotations on GPU streams
    uint8_t k = names.sources(s.name[i]);
    if (k == 0) continue;
    for (StepSource src : {StepSource::kAnnotation, StepSource::kProfilerStep, StepSource::kVllm,
                           StepSource::kSglang})
      if (k & source_bit(src)) found[static_cast<size_t>(src)].push_back(i);
  }
  std::vector<size_t>* chosen = nullptr;
  for (StepSource src : {StepSource::kAnnotation, StepSource::kProfilerStep, StepSource::kVllm,
                         StepSource::kSglang}) {
    if (!found[static_cast<size_t>(src)].empty()) {
      out.source = src;
      chosen = &found[static_cast<size_t>(src)];
      break;
    }
  }
  if (chosen == nullptr) {
    out.source = StepSource::kTraceSpan;
    return out;
  }
  std::vector<size_t>& candidates = *chosen;
  std::sort(candidates.begin(), candidates.end(),
            [&](size_t a, size_t b) { return s.ts[a] != s.ts[b] ? s.ts[a] < s.ts[b] : a < b; });
  int64_t last_end = INT64_MIN;
  for (size_t i : candidates) {
    if (s.ts[i] < last_end) continue;  // a duplicate marker inside the previous step
    out.slices.push_back(i);
    last_end = s.end(i);
    auto n = step_number(trace.str(s.name[i]));
    out.numbers.push_back(n && out.source == StepSource::kProfilerStep
                              ? *n
                              : static_cast<int64_t>(out.numbers.size()));
  }
  return out;
}

std::vector<size_t> host_step_slices(const Trace& trace) { return step_markers(trace).slices; }

}  // namespace mlprof
