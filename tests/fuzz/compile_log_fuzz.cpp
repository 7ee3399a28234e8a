// libFuzzer target for the torch.compile structured-log reader (src/import/
// compile_log_importer.cpp) and the compile analysis over it (src/analyze/compile.cpp). Any bytes
// must give a log or a one-line error naming the input, never a crash or a hang. NUL bytes split
// the input into the logs of several ranks (up to 4), so the cross-rank comparisons (compile ids,
// cache outcomes, collective schedules, tensor meta) run on what the fuzzer makes too.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "mlprof/analyze/compile.h"
#include "mlprof/compile_log.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in(reinterpret_cast<const char*>(data), size);
  std::vector<mlprof::CompileLog> logs;
  for (size_t start = 0, rank = 0; start <= in.size() && rank < 4; ++rank) {
    size_t nul = in.find('\0', start);
    std::string_view part = in.substr(start, nul == std::string_view::npos ? nul : nul - start);
    std::string name = "rank_" + std::to_string(rank) + ".log";
    auto log = mlprof::load_compile_log_buffer(part, name);
    if (log) {
      logs.push_back(std::move(*log));
    } else if (log.error().rfind(name, 0) != 0 || log.error().find('\n') != std::string::npos) {
      __builtin_trap();
    }
    if (nul == std::string_view::npos) break;
    start = nul + 1;
  }
  if (logs.empty()) return 0;
  mlprof::analyze_compile(logs, nullptr);
  mlprof::CompileOptions one_rank;
  one_rank.rank = logs.back().rank;
  mlprof::analyze_compile(logs, nullptr, one_rank);
  return 0;
}
