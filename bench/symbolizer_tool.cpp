// mlprof run's symbol lookup against libdw's own, in the same run (bench/symbolizer_bench.sh):
// loads a big shared library (default: libLLVM, ~46k dynamic symbols; PyTorch's libtorch_cuda
// has several times more), picks N distinct addresses in it and resolves each with
// dwfl_module_addrname (a scan of every symbol per call: the baseline) and with
// mlprof::Symbolizer::symbol_at (one sorted table per module), and prints both times and the
// ratio. Usage: symbolizer_tool [LIBRARY] [N=2000]
#include <dlfcn.h>
#include <elfutils/libdwfl.h>
#include <link.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>
#include <vector>

#include "import/capture/symbolizer.h"

namespace {
char* g_debuginfo = nullptr;
const Dwfl_Callbacks kCallbacks = {dwfl_linux_proc_find_elf, dwfl_standard_find_debuginfo, nullptr,
                                   &g_debuginfo};
double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}
}  // namespace

int main(int argc, char** argv) {
  const char* lib = argc > 1 ? argv[1] : "libLLVM-15.so.1";
  int n = argc > 2 ? std::atoi(argv[2]) : 2000;
  void* handle = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    std::fprintf(stderr, "symbolizer_tool: cannot load %s: %s\n", lib, dlerror());
    return 2;
  }
  link_map* lm = nullptr;
  dlinfo(handle, RTLD_DI_LINKMAP, &lm);
  std::ifstream in("/proc/self/maps");
  std::stringstream maps;
  maps << in.rdbuf();

  Dwfl* dwfl = dwfl_begin(&kCallbacks);
  dwfl_report_begin(dwfl);
  dwfl_linux_proc_report(dwfl, getpid());
  dwfl_report_end(dwfl, nullptr, nullptr);
  // The library's dynamic section lies inside its mapping.
  Dwfl_Module* m = dwfl_addrmodule(dwfl, reinterpret_cast<Dwarf_Addr>(lm->l_ld));
  if (!m) {
    std::fprintf(stderr, "symbolizer_tool: %s not found in the process's maps\n", lib);
    return 2;
  }
  Dwarf_Addr lo = 0, hi = 0;
  dwfl_module_info(m, nullptr, &lo, &hi, nullptr, nullptr, nullptr, nullptr);
  int symbols = dwfl_module_getsymtab(m);
  std::mt19937_64 rng(1);
  std::vector<uint64_t> pcs(n);
  for (uint64_t& pc : pcs) pc = lo + rng() % (hi - lo);

  auto t0 = std::chrono::steady_clock::now();
  int libdw_found = 0;
  for (uint64_t pc : pcs) libdw_found += dwfl_module_addrname(m, pc) != nullptr;
  double libdw_s = seconds_since(t0);

  t0 = std::chrono::steady_clock::now();
  mlprof::Symbolizer sym(maps.str());  // table built inside the timing
  int table_found = 0;
  for (uint64_t pc : pcs) table_found += sym.symbol_at(pc) != nullptr;
  double table_s = seconds_since(t0);

  std::printf("%s: %d symbols, %d distinct addresses\n", lib, symbols, n);
  std::printf("libdw dwfl_module_addrname: %.3f s (%d found)\n", libdw_s, libdw_found);
  std::printf("mlprof sorted table:        %.3f s (%d found, incl. building the table)\n", table_s,
              table_found);
  std::printf("ratio libdw / table: %.0fx\n", libdw_s / (table_s > 0 ? table_s : 1e-9));
  dwfl_end(dwfl);
  return libdw_found == table_found ? 0 : 1;
}
