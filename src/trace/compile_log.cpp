// CompileLog model helpers (shared by the importer and the compile analysis).
#include "mlprof/compile_log.h"

#include <cmath>

namespace mlprof {

std::string CompileId::text() const {
  auto n = [](int64_t v) { return v < 0 ? std::string("-") : std::to_string(v); };
  std::string s = "[";
  if (autograd >= 0) s += "!" + std::to_string(autograd) + "/";
  s += n(frame) + "/" + n(compile);
  if (attempt > 0) s += "_" + std::to_string(attempt);
  return s + "]";
}

std::string CompileId::short_text() const {
  auto n = [](int64_t v) { return v < 0 ? std::string("-") : std::to_string(v); };
  return (autograd >= 0 ? "!" + std::to_string(autograd) + "/" : std::string()) + n(frame) + "/" +
         n(compile);
}

CompileRecord::CompileRecord() : compile_s(NAN), backend_s(NAN), inductor_s(NAN), code_gen_s(NAN) {}

}  // namespace mlprof
