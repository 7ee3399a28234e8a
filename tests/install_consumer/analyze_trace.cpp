// Loads a trace and checks its op table: analyze_trace FILE (the one record_scopes wrote: 3
// "forward" and 3 "backward" scopes).
#include <cstdio>

#include "mlprof/analyze/op_stats.h"
#include "mlprof/import.h"

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  auto trace = mlprof::load_trace(argv[1]);
  if (!trace) {
    std::fprintf(stderr, "load: %s\n", trace.error().c_str());
    return 1;
  }
  int found = 0;
  for (const mlprof::OpStats& op : mlprof::op_stats(*trace)) {
    std::printf("%-10s count=%llu total_ns=%lld\n", op.name.c_str(),
                static_cast<unsigned long long>(op.count), static_cast<long long>(op.total_ns));
    if ((op.name == "forward" || op.name == "backward") && op.count == 3) ++found;
  }
  if (found != 2) {
    std::fprintf(stderr, "expected 3 forward and 3 backward scopes\n");
    return 1;
  }
  std::printf("ok\n");
  return 0;
}
