// Turns return addresses of a finished process into "function (file:line)" using the text of
// its /proc/PID/maps and the mapped files' symbols and debug info (libdwfl).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

struct Dwfl;  // elfutils
struct Dwfl_Module;

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
  struct Symbol {
    uint64_t start, size;
    const char* name;  // owned by libdw's ELF string table, alive as long as the Symbolizer
    uint32_t section;  // ELF section index
  };
  // The symbol containing pc (or the nearest sizeless one before it), as libdw's
  // dwfl_module_addrname finds it (up to aliases: another name at the same address), through
  // the sorted table; nullptr when none.
  const Symbol* symbol_at(uint64_t pc);
  // Modules whose lookups (symbols, line tables) took at least `min_seconds` in all, slowest
  // first: "libfoo.so 12.3 s" (the H100 run's PyTorch capture spent over 40 s symbolizing).
  std::vector<std::string> slow_modules(double min_seconds) const;

 private:
  ::Dwfl* dwfl_ = nullptr;
  // A module's defined symbols sorted by address, read once: libdw's own address lookup
  // (dwfl_module_addrname) scans the whole symbol table on every call, and a PyTorch process
  // has tens of thousands of distinct PCs in libraries of hundreds of thousands of symbols.
  struct ModuleSymbols {
    std::vector<Symbol> symbols;
    std::vector<std::pair<uint64_t, uint64_t>> sections;  // [start, end) by index, as loaded
  };
  const ModuleSymbols& symbols_of(::Dwfl_Module* m);
  std::unordered_map<::Dwfl_Module*, ModuleSymbols> symbols_;
  std::unordered_map<uint64_t, std::string> cache_;
  std::unordered_map<std::string, int64_t> module_ns_;  // lookup time per module path
};

}  // namespace mlprof
