// mlprof run's symbolizer looks symbols up in its own sorted table (libdw's dwfl_module_addrname
// scans every symbol on each call: the H100 PyTorch capture spent over 40 s there). It must find
// what libdw finds: for addresses all over this test's own text (a full .symtab), libstdc++ and
// libdw (.dynsym only), the same symbol (or an alias at the same address), or none where libdw
// finds none.
#include "import/capture/symbolizer.h"

#include <elfutils/libdwfl.h>
#include <gtest/gtest.h>

#include <fstream>
#include <random>
#include <sstream>
#include <string>

namespace {

using mlprof::Symbolizer;

std::string self_maps() {
  std::ifstream in("/proc/self/maps");
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

char* g_debuginfo = nullptr;
const Dwfl_Callbacks kCallbacks = {dwfl_linux_proc_find_elf, dwfl_standard_find_debuginfo, nullptr,
                                   &g_debuginfo};

TEST(Symbolizer, FindsWhatLibdwFinds) {
  std::string maps = self_maps();
  Symbolizer sym(maps);
  ASSERT_TRUE(sym.ok());
  Dwfl* dwfl = dwfl_begin(&kCallbacks);
  ASSERT_NE(dwfl, nullptr);
  dwfl_report_begin(dwfl);
  ASSERT_EQ(dwfl_linux_proc_report(dwfl, getpid()), 0);
  dwfl_report_end(dwfl, nullptr, nullptr);

  struct Range {
    Dwarf_Addr lo, hi;
    std::string name;
  };
  std::vector<Range> ranges;
  for (void* anchor : {reinterpret_cast<void*>(&self_maps), reinterpret_cast<void*>(&dwfl_begin),
                       reinterpret_cast<void*>(&std::__throw_bad_alloc)}) {
    Dwfl_Module* m = dwfl_addrmodule(dwfl, reinterpret_cast<Dwarf_Addr>(anchor));
    ASSERT_NE(m, nullptr);
    Dwarf_Addr lo = 0, hi = 0;
    const char* name = dwfl_module_info(m, nullptr, &lo, &hi, nullptr, nullptr, nullptr, nullptr);
    ranges.push_back({lo, hi, name ? name : "?"});
  }
  std::mt19937_64 rng(42);
  int checked = 0, found = 0;
  for (const Range& r : ranges) {
    int module_found = 0;
    for (int i = 0; i < 600; ++i) {
      Dwarf_Addr pc = r.lo + rng() % (r.hi - r.lo);
      Dwfl_Module* m = dwfl_addrmodule(dwfl, pc);
      GElf_Off offset = 0;
      GElf_Sym s;
      const char* want = dwfl_module_addrinfo(m, pc, &offset, &s, nullptr, nullptr, nullptr);
      const Symbolizer::Symbol* got = sym.symbol_at(pc);
      ++checked;
      if (!want) {
        EXPECT_EQ(got, nullptr) << r.name << " pc " << std::hex << pc << ": libdw finds nothing, "
                                << "the table finds " << got->name;
        continue;
      }
      ASSERT_NE(got, nullptr) << r.name << " pc " << std::hex << pc << ": libdw finds " << want;
      // Same symbol, or another name at the same address (C1/C2 constructors, aliases).
      EXPECT_TRUE(std::string(got->name) == want || got->start == pc - offset)
          << r.name << " pc " << std::hex << pc << ": " << got->name << " vs libdw's " << want;
      ++module_found;
    }
    found += module_found;
    EXPECT_GT(module_found, 0) << r.name << ": no address had a symbol";
  }
  EXPECT_EQ(checked, 1800);
  // Symbolized frames read the same table.
  const std::string& frame = sym.frame_name(reinterpret_cast<uint64_t>(&self_maps), false);
  EXPECT_NE(frame.find("self_maps"), std::string::npos) << frame;
  dwfl_end(dwfl);
  RecordProperty("found", found);
}

}  // namespace
