#include <cstdio>
#include <iostream>

#include "cli/command.h"
#include "mlprof/analyze/flame.h"
#include "render/flame_render.h"
#include "trace/output_file.h"

namespace mlprof::cli {
namespace {

struct FlameArgs {
  std::string path;
  std::string out;
  std::string format;  // html | txt | json (speedscope); default from the extension of -o
  bool json = false;
  bool no_gpu = false;
  bool merge_threads = false;
  bool per_step = false;
  uint32_t max_depth = kCollapsedMaxDepth;
};

std::string base_name(const std::string& path) {
  size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

int run_flame(const FlameArgs& a) {
  std::string format = a.format;
  if (!a.out.empty() && format.empty()) {
    if (a.out.ends_with(".html") || a.out.ends_with(".htm"))
      format = "html";
    else if (a.out.ends_with(".json"))
      format = "speedscope";
    else if (a.out.ends_with(".txt") || a.out.ends_with(".folded") || a.out.ends_with(".collapsed"))
      format = "collapsed";
    else {
      std::fprintf(stderr,
                   "mlprof flame: %s: cannot tell the format from the extension "
                   "(.html, .txt, .json) - pass --format html|collapsed|speedscope\n",
                   a.out.c_str());
      return kExitBadInput;
    }
  }
  AnalysisOptions o;
  o.flame.include_gpu = !a.no_gpu;
  o.flame.split_threads = !a.merge_threads;
  o.flame.merge_steps = !a.per_step;
  auto set = open_analysis(a.path, o);
  if (!set) return set.exit_code;
  const FlameGraph& g = set->flame();
  if (a.out.empty()) {
    if (format == "collapsed" && !a.json) {
      write_flame_collapsed(std::cout, g, a.max_depth);
      return kExitOk;
    }
    if (format == "speedscope" && !a.json) {
      write_flame_speedscope(std::cout, g, base_name(a.path));
      return kExitOk;
    }
    return print_analysis(*set, AnalysisId::kFlame, a.json);
  }
  // Streamed into the file: collapsed stacks and speedscope never exist whole in memory.
  Result<OutputFile> out = OutputFile::open(a.out);
  if (!out) {
    std::fprintf(stderr, "mlprof flame: %s\n", out.error().c_str());
    return kExitFailure;
  }
  if (format == "html")
    out->stream() << render_flame_html(g, base_name(a.path));
  else if (format == "speedscope")
    write_flame_speedscope(out->stream(), g, base_name(a.path));
  else
    write_flame_collapsed(out->stream(), g, a.max_depth);
  if (Status s = out->commit(); !s) {
    std::fprintf(stderr, "mlprof flame: %s\n", s.message().c_str());
    return kExitFailure;
  }
  std::fprintf(stderr, "mlprof flame: wrote %s (%s, %zu frames)\n", a.out.c_str(), format.c_str(),
               g.frames.size());
  return kExitOk;
}

MLPROF_REGISTER_COMMAND(
    "flame",
    "Flame graph of a trace: -o F.html (interactive), F.txt (collapsed stacks), F.json "
    "(speedscope)",
    [](CLI::App& sub) -> std::function<int()> {
      auto a = std::make_shared<FlameArgs>();
      sub.add_option("path", a->path, "trace file (.json, .json.gz, .mlprof)")->required();
      sub.add_option("-o,--output", a->out,
                     "output file: .html, .txt (collapsed stacks) or .json (speedscope)");
      sub.add_option("--format", a->format,
                     "html|collapsed|speedscope (default: from the extension)")
          ->check(CLI::IsMember({"html", "collapsed", "speedscope"}));
      sub.add_flag("--json", a->json, "print the frame table as JSON (without -o)");
      sub.add_flag("--no-gpu", a->no_gpu, "leave out the GPU subtree");
      sub.add_flag("--merge-threads", a->merge_threads, "one tree for all threads");
      sub.add_flag("--per-step", a->per_step, "keep ProfilerStep#N frames apart (default: merged)");
      sub.add_option("--max-depth", a->max_depth,
                     "collapsed stacks: fold frames below this depth into one (0 = no limit)")
          ->capture_default_str();
      return [a]() { return run_flame(*a); };
    });

}  // namespace
}  // namespace mlprof::cli
