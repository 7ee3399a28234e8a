// Turns return addresses of a finished process into "function (file:line)" using the text of
// its /proc/PID/maps and the mapped files' symbols and debug info (libdwfl).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

struct Dwfl;  // elfutils

namespace mlprof {

class Symbolizer {
 public:
  explicit Symbolizer(const std::string& maps_text);
  ~Symbolizer();
  Symbolizer(const Symbolizer&) = delete;
  Symbolizer& operator=(const Symbolizer&) = delete;

  // `return_address`: the pc is the instruction after a call, so pc-1 is looked up (every frame
  // but the innermost one of a backtrace).
  const std::string& frame_name(uint64_t pc, bool return_address);
  // Path of the file mapped at pc ("" when unknown).
  std::string module_path(uint64_t pc);
  bool ok() const { return dwfl_ != nullptr; }
  // Modules whose lookups (symbols, line tables) took at least `min_seconds` in all, slowest
  // first: "libfoo.so 12.3 s" (the H100 run's PyTorch capture spent over 40 s symbolizing).
  std::vector<std::string> slow_modules(double min_seconds) const;

 private:
  ::Dwfl* dwfl_ = nullptr;
  std::unordered_map<uint64_t, std::string> cache_;
  std::unordered_map<std::string, int64_t> module_ns_;  // lookup time per module path
};

}  // namespace mlprof
