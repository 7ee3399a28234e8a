#include "import/capture/symbolizer.h"

#include <cxxabi.h>
#include <elfutils/libdwfl.h>
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace mlprof {

namespace {

char* g_debuginfo_path = nullptr;

const Dwfl_Callbacks kCallbacks = {
    dwfl_linux_proc_find_elf,
    dwfl_standard_find_debuginfo,
    nullptr,
    &g_debuginfo_path,
};

std::string demangle(const char* name) {
  int status = 0;
  char* d = abi::__cxa_demangle(name, nullptr, nullptr, &status);
  if (status == 0 && d) {
    std::string s(d);
    std::free(d);
    return s;
  }
  return name;
}

int64_t now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t{ts.tv_sec} * 1000000000 + ts.tv_nsec;
}

std::string base_name(const char* path) {
  const char* slash = std::strrchr(path, '/');
  return slash ? slash + 1 : path;
}

}  // namespace

Symbolizer::Symbolizer(const std::string& maps_text) {
  if (maps_text.empty()) return;
  dwfl_ = dwfl_begin(&kCallbacks);
  if (!dwfl_) return;
  // fmemopen needs a mutable buffer that outlives the FILE.
  std::string copy = maps_text;
  FILE* f = fmemopen(copy.data(), copy.size(), "r");
  if (!f) {
    dwfl_end(dwfl_);
    dwfl_ = nullptr;
    return;
  }
  dwfl_report_begin(dwfl_);
  dwfl_linux_proc_maps_report(dwfl_, f);
  dwfl_report_end(dwfl_, nullptr, nullptr);
  std::fclose(f);
}

Symbolizer::~Symbolizer() {
  if (dwfl_) dwfl_end(dwfl_);
}

std::string Symbolizer::module_path(uint64_t pc) {
  if (!dwfl_) return {};
  Dwfl_Module* m = dwfl_addrmodule(dwfl_, pc);
  if (!m) return {};
  const char* name =
      dwfl_module_info(m, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr);
  return name ? name : "";
}

const std::string& Symbolizer::frame_name(uint64_t pc, bool return_address) {
  uint64_t lookup = return_address && pc > 0 ? pc - 1 : pc;
  auto it = cache_.find(lookup);
  if (it != cache_.end()) return it->second;
  std::string out;
  Dwfl_Module* m = dwfl_ ? dwfl_addrmodule(dwfl_, lookup) : nullptr;
  if (!m) {
    char buf[32];
    std::snprintf(buf, sizeof(buf), "0x%llx", static_cast<unsigned long long>(pc));
    out = buf;
  } else {
    int64_t t0 = now_ns();
    const Symbol* found = symbol_at(lookup);
    const char* sym = found ? found->name : nullptr;
    Dwarf_Addr start = 0;
    const char* modname =
        dwfl_module_info(m, nullptr, &start, nullptr, nullptr, nullptr, nullptr, nullptr);
    if (sym) {
      out = demangle(sym);
    } else {
      char buf[64];
      std::snprintf(buf, sizeof(buf), "+0x%llx", static_cast<unsigned long long>(lookup - start));
      out = (modname ? base_name(modname) : std::string("?")) + buf;
    }
    int line = 0;
    Dwfl_Line* l = dwfl_module_getsrc(m, lookup);
    const char* file = l ? dwfl_lineinfo(l, nullptr, &line, nullptr, nullptr, nullptr) : nullptr;
    if (file) {
      out += " (" + base_name(file) + ":" + std::to_string(line) + ")";
    } else if (sym && modname) {
      out += " (" + base_name(modname) + ")";
    }
    module_ns_[modname ? modname : "?"] += now_ns() - t0;
  }
  return cache_.emplace(lookup, std::move(out)).first->second;
}

const Symbolizer::ModuleSymbols& Symbolizer::symbols_of(Dwfl_Module* m) {
  auto [it, fresh] = symbols_.try_emplace(m);
  if (!fresh) return it->second;
  std::vector<Symbol>& syms = it->second.symbols;
  int n = dwfl_module_getsymtab(m);
  for (int i = 1; i < n; ++i) {
    GElf_Sym sym;
    GElf_Addr addr = 0;
    GElf_Word shndx = 0;
    const char* name = dwfl_module_getsym_info(m, i, &sym, &addr, &shndx, nullptr, nullptr);
    if (!name || !*name || shndx == SHN_UNDEF) continue;
    // What dwfl_module_addrsym considers: no section, file or TLS symbols.
    int type = GELF_ST_TYPE(sym.st_info);
    if (type == STT_SECTION || type == STT_FILE || type == STT_TLS) continue;
    syms.push_back({addr, sym.st_size, name, shndx});
  }
  // By address; at one address the sized symbol first, as libdw prefers it.
  std::stable_sort(syms.begin(), syms.end(), [](const Symbol& a, const Symbol& b) {
    if (a.start != b.start) return a.start < b.start;
    return (a.size != 0) > (b.size != 0);
  });
  // Section ranges: a sizeless symbol covers an address only within its own section.
  GElf_Addr bias = 0;
  if (Elf* elf = dwfl_module_getelf(m, &bias)) {
    auto& sections = it->second.sections;
    for (Elf_Scn* scn = nullptr; (scn = elf_nextscn(elf, scn));) {
      GElf_Shdr shdr;
      if (!gelf_getshdr(scn, &shdr)) continue;
      size_t index = elf_ndxscn(scn);
      if (sections.size() <= index) sections.resize(index + 1, {0, 0});
      if (shdr.sh_flags & SHF_ALLOC)
        sections[index] = {shdr.sh_addr + bias, shdr.sh_addr + bias + shdr.sh_size};
    }
  }
  return it->second;
}

const Symbolizer::Symbol* Symbolizer::symbol_at(uint64_t pc) {
  Dwfl_Module* m = dwfl_ ? dwfl_addrmodule(dwfl_, pc) : nullptr;
  if (!m) return nullptr;
  const ModuleSymbols& table = symbols_of(m);
  const std::vector<Symbol>& syms = table.symbols;
  auto after = std::upper_bound(syms.begin(), syms.end(), pc,
                                [](uint64_t a, const Symbol& s) { return a < s.start; });
  if (after == syms.begin()) return nullptr;
  // The innermost sized symbol holding pc: the last one starting at or before it, looking back
  // past a few that end before pc (symbols nested in a bigger one, aliases).
  const Symbol* sizeless = nullptr;
  int looked = 0;
  for (auto it = after; it != syms.begin() && looked < 64; ++looked) {
    --it;
    if (it->size == 0) {
      // libdw takes a sizeless symbol only when it is the closest one below pc, in pc's section.
      if (!sizeless && it + 1 == after && it->section < table.sections.size() &&
          pc >= table.sections[it->section].first && pc < table.sections[it->section].second)
        sizeless = &*it;
      continue;
    }
    if (pc < it->start + it->size) {
      // Among symbols at the same address prefer the first (sized, sorted above).
      while (it != syms.begin() && (it - 1)->start == it->start && (it - 1)->size != 0) --it;
      return &*it;
    }
  }
  return sizeless;
}

std::vector<std::string> Symbolizer::slow_modules(double min_seconds) const {
  std::vector<std::pair<int64_t, std::string>> slow;
  for (const auto& [path, ns] : module_ns_)
    if (ns >= min_seconds * 1e9) slow.emplace_back(ns, path);
  std::sort(slow.begin(), slow.end(),
            [](const auto& a, const auto& b) { return a.first > b.first; });
  std::vector<std::string> out;
  for (const auto& [ns, path] : slow) {
    char buf[32];
    std::snprintf(buf, sizeof buf, " %.1f s", ns / 1e9);
    out.push_back(base_name(path.c_str()) + buf);
  }
  return out;
}

}  // namespace mlprof
