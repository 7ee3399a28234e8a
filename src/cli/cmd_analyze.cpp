// `mlprof analyze PATH`: every analysis of one trace (or of the slowest rank of a directory of
// rank traces, plus the ranks view), rendered as one text report or one JSON object.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <future>
#include <iostream>

#include "cli/command.h"
#include "mlprof/analyze/bottlenecks.h"
#include "mlprof/analyze/flops.h"
#include "mlprof/analyze/gpu.h"
#include "mlprof/analyze/kernels.h"
#include "mlprof/analyze/leaks.h"
#include "mlprof/analyze/memory.h"
#include "mlprof/analyze/ranks.h"
#include "mlprof/analyze/steps.h"
#include "mlprof/analyze/summary.h"
#include "mlprof/render/bottlenecks_render.h"
#include "mlprof/render/flops_render.h"
#include "mlprof/render/gpu_render.h"
#include "mlprof/render/kernels_render.h"
#include "mlprof/render/memory_render.h"
#include "mlprof/render/ranks_render.h"
#include "mlprof/render/report.h"
#include "mlprof/render/steps_render.h"
#include "mlprof/render/summary_render.h"

namespace mlprof::cli {
namespace {

struct AnalyzeArgs {
  std::string path;
  bool json = false;
  size_t top = 15;
  double peak = 0;
  std::string html;
  unsigned threads = 0;
};

struct Analysis {
  SummaryResult summary;
  StepsResult steps;
  MemoryResult memory;
  LeakResult leaks;
  FlopsResult flops;
  bool has_gpu = false;
  GpuResult gpu;
  KernelsResult kernels;
  BottleneckResult bottlenecks;
};

// Two independent halves on two threads (the machine's two cores): host-side analyses on one,
// op statistics and the GPU analyses on the other; bottleneck rules read both.
Analysis analyze_all(const Trace& trace, const AnalyzeArgs& a, const RanksResult* ranks) {
  Analysis r;
  for (uint32_t t = 0; t < trace.tracks.size() && !r.has_gpu; ++t)
    r.has_gpu = trace.is_gpu_track(t);
  auto other = std::async(std::launch::async, [&] {
    SummaryOptions so;
    so.top = a.top;
    r.summary = summarize(trace, so);
    if (r.has_gpu) {
      r.gpu = analyze_gpu(trace);
      r.kernels = analyze_kernels(trace);
    }
  });
  r.steps = analyze_steps(trace);
  r.memory = analyze_memory(trace);
  r.leaks = analyze_leaks(trace, r.steps);
  FlopsOptions fo;
  fo.peak_tflops = a.peak;
  fo.top = a.top;
  r.flops = analyze_flops(trace, r.steps, fo);
  other.get();
  BottleneckInputs in;
  in.steps = &r.steps;
  in.memory = &r.memory;
  in.leaks = &r.leaks;
  if (r.has_gpu) {
    in.gpu = &r.gpu;
    in.kernels = &r.kernels;
  }
  in.ranks = ranks;
  r.bottlenecks = find_bottlenecks(trace, in);
  return r;
}

std::string section(const std::string& title) {
  return "\n== " + title + " " + std::string(title.size() < 90 ? 90 - title.size() : 0, '=') + "\n";
}

std::string render_text(const Analysis& r, size_t top) {
  std::string out;
  out += section("Summary") + render_summary_text(r.summary);
  out += section("Steps") + render_steps_text(r.steps);
  if (r.has_gpu) {
    out += section("GPU") + render_gpu_text(r.gpu);
    out += section("Kernels") + render_kernels_text(r.kernels, 100, top);
  }
  out += section("Memory") + render_memory_text(r.memory);
  out += section("Leaks") + render_leaks_text(r.leaks);
  out += section("FLOPs") + render_flops_text(r.flops);
  out += section("Bottlenecks") + render_bottlenecks_text(r.bottlenecks);
  return out;
}

void write_json(JsonWriter& w, const Analysis& r) {
  w.key("summary");
  write_summary_json(w, r.summary);
  w.key("steps");
  write_steps_json(w, r.steps);
  w.key("memory");
  write_memory_json(w, r.memory);
  w.key("leaks");
  write_leaks_json(w, r.leaks);
  w.key("flops");
  write_flops_json(w, r.flops);
  w.key("gpu");
  if (r.has_gpu)
    write_gpu_json(w, r.gpu);
  else
    w.null();
  w.key("kernels");
  if (r.has_gpu)
    write_kernels_json(w, r.kernels);
  else
    w.null();
  w.key("bottlenecks");
  write_bottlenecks_json(w, r.bottlenecks);
}

MLPROF_REGISTER_COMMAND(
    "analyze",
    "Every analysis of a trace (or a directory of rank traces): steps, GPU, kernels, memory, "
    "leaks, FLOPs, ranked bottlenecks",
    [](CLI::App& sub) -> std::function<int()> {
      auto a = std::make_shared<AnalyzeArgs>();
      sub.add_option("path", a->path, "trace file (.json, .json.gz, .mlprof) or rank directory")
          ->required();
      sub.add_flag("--json", a->json, "one JSON object with every analysis");
      sub.add_option("--top", a->top, "rows per table");
      sub.add_option("--peak-tflops", a->peak, "device peak TFLOP/s for MFU (default: table)");
      sub.add_option("--html", a->html, "also write the HTML report to this file");
      sub.add_option("--threads", a->threads, "rank traces loaded at once (0 = all cores)");
      return [a]() {
        std::error_code ec;
        bool is_dir = std::filesystem::is_directory(a->path, ec);
        std::vector<Trace> rank_traces;
        std::optional<Trace> single;
        RanksResult ranks;
        const Trace* trace = nullptr;
        if (is_dir) {
          std::vector<std::string> errors;
          auto loaded = load_rank_dir(a->path, a->threads, errors);
          if (!loaded) {
            std::fprintf(stderr, "mlprof: %s\n", loaded.error().c_str());
            for (const std::string& e : errors) std::fprintf(stderr, "mlprof: %s\n", e.c_str());
            return kExitBadInput;
          }
          for (const std::string& e : errors)
            std::fprintf(stderr, "mlprof: skipped %s\n", e.c_str());
          rank_traces = std::move(*loaded);
          std::vector<const Trace*> ptrs;
          for (const Trace& t : rank_traces) ptrs.push_back(&t);
          ranks = analyze_ranks(ptrs);
          ranks.errors = errors;
          // Analyze the slowest rank in depth: it sets the job's pace.
          size_t slowest = 0;
          int64_t slowest_wall = -1;
          for (const RankStats& rs : ranks.ranks) {
            for (size_t k = 0; k < rank_traces.size(); ++k) {
              if (rank_traces[k].meta.source == rs.source && rs.wall_ns > slowest_wall) {
                slowest_wall = rs.wall_ns;
                slowest = k;
              }
            }
          }
          if (rank_traces.empty()) return kExitBadInput;
          trace = &rank_traces[slowest];
        } else {
          single = load_or_report(a->path);
          if (!single) return kExitBadInput;
          trace = &*single;
        }
        auto t0 = std::chrono::steady_clock::now();
        Analysis r = analyze_all(*trace, *a, is_dir ? &ranks : nullptr);
        if (std::getenv("MLPROF_TIMING"))
          std::fprintf(
              stderr, "analyze: %.1f ms\n",
              std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
                  .count());
        if (a->json) {
          JsonWriter w(true);
          w.begin_object();
          w.field("source", trace->meta.source);
          w.field("format", trace->meta.format);
          write_json(w, r);
          w.key("ranks");
          if (is_dir)
            write_ranks_json(w, ranks);
          else
            w.null();
          w.end_object();
          std::cout << w.str() << "\n";
        } else {
          std::string out;
          if (is_dir) {
            out += section("Ranks") + render_ranks_text(ranks);
            out += "\nIn depth: the slowest rank, " + trace->meta.source + "\n";
          }
          out += render_text(r, a->top);
          std::cout << out;
        }
        if (!a->html.empty()) {
          ReportInput in;
          in.trace = trace;
          in.name = std::filesystem::path(trace->meta.source).filename().string();
          for (const Trace& t : rank_traces) in.ranks.push_back(&t);
          if (!write_file_atomic(a->html, render_report_html(in))) return kExitFailure;
        }
        return kExitOk;
      };
    });

}  // namespace
}  // namespace mlprof::cli
