#include <malloc.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "cli/command.h"
#include "cli/mpi_ranks.h"
#include "cli/version.h"

namespace mlprof::cli {
namespace {
struct Entry {
  const char* name;
  const char* help;
  CommandSetup setup;
};
std::vector<Entry>& registry() {
  static std::vector<Entry> r;
  return r;
}
}  // namespace

CommandRegistration::CommandRegistration(const char* name, const char* help, CommandSetup setup) {
  registry().push_back(Entry{name, help, std::move(setup)});
}

}  // namespace mlprof::cli

namespace {
// Big tables are built by push_back into fresh memory, and a first touch of a 4 KiB page costs
// ~10 us on these VMs: importing a 117 MB trace spent half its CPU time in page faults. So every
// allocation comes from glibc's main heap (one arena, no mmap'd chunks), the heap is extended
// once by kHeapReserve of address space (no memory is used until touched), and that range is
// advised MADV_HUGEPAGE: tables then fault in 2 MiB at a time. Freed memory is kept for reuse
// rather than returned and faulted in again. (An earlier version re-executed mlprof with
// GLIBC_TUNABLES=glibc.malloc.hugetlb=1, which cost a second start-up: ~20 ms of dynamic
// linking.) MLPROF_NO_HUGEPAGES=1 turns this off.
constexpr int kHeapReserve = (1 << 30) + (1 << 29);  // 1.5 GiB of address space

void use_huge_pages() {
  mallopt(M_ARENA_MAX, 1);
  if (std::getenv("MLPROF_NO_HUGEPAGES")) return;
  mallopt(M_MMAP_MAX, 0);
  mallopt(M_TRIM_THRESHOLD, kHeapReserve);
  mallopt(M_TOP_PAD, kHeapReserve);
  char* old_break = static_cast<char*>(sbrk(0));
  size_t before = mallinfo2().arena;
  void* grow = malloc(1 << 20);  // more than the top chunk holds: one sbrk of 1 MiB + the pad
  asm volatile("" : : "r"(grow) : "memory");  // keep the compiler from eliding the pair
  size_t grown = mallinfo2().arena - before;
  mallopt(M_TOP_PAD, 64 << 20);  // growth past the reserve in ordinary steps
  if (grown < static_cast<size_t>(kHeapReserve) / 2) {
    mallopt(M_MMAP_MAX, 65536);  // no room for the reserve (strict overcommit?): glibc defaults
    free(grow);
    return;
  }
  constexpr uintptr_t kHuge = 2u << 20;
  uintptr_t from = (reinterpret_cast<uintptr_t>(old_break) + kHuge - 1) & ~(kHuge - 1);
  uintptr_t to = (reinterpret_cast<uintptr_t>(old_break) + grown) & ~(kHuge - 1);
  if (to > from) madvise(reinterpret_cast<void*>(from), to - from, MADV_HUGEPAGE);
  free(grow);
}
// Levenshtein distance, for "did you mean" on a mistyped command.
size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

// `mlprof` alone or `mlprof foo`: say what is wrong and list the commands (CLI11 would only say
// "A subcommand is required").
int usage_error(const std::vector<std::string>& names, const char* given) {
  std::string list;
  for (const std::string& n : names) list += (list.empty() ? "" : " ") + n;
  if (given) {
    std::fprintf(stderr, "mlprof: unknown command '%s'", given);
    const std::string* best = nullptr;  // the closest name within 2 edits, else a completion
    size_t best_d = 3;
    for (const std::string& n : names) {
      size_t d = edit_distance(given, n);
      if (d < best_d) best_d = d, best = &n;
    }
    for (const std::string& n : names)
      if (!best && std::strlen(given) >= 2 && n.starts_with(given)) best = &n;
    if (best) std::fprintf(stderr, " (did you mean '%s'?)", best->c_str());
    std::fprintf(stderr, "\n");
  } else {
    std::fprintf(stderr, "mlprof: a command is required\n");
  }
  std::fprintf(stderr,
               "commands: %s\nRun 'mlprof --help' for what each does, 'mlprof COMMAND --help' for "
               "its options.\n",
               list.c_str());
  return mlprof::cli::kExitBadInput;
}

// "-1", "3.5", "1e999", "99999999999999999999": a number, whatever its range.
bool looks_numeric(const std::string& s) {
  size_t i = s[0] == '-' || s[0] == '+' ? 1 : 0, digits = 0;
  for (; i < s.size(); ++i) {
    if (s[i] >= '0' && s[i] <= '9')
      ++digits;
    else if (s[i] != '.' && s[i] != 'e' && s[i] != 'E' && s[i] != '-' && s[i] != '+')
      return false;
  }
  return digits > 0;
}

}  // namespace

int main(int argc, char** argv) {
  use_huge_pages();
  using namespace mlprof::cli;
  CLI::App app{"mlprof: where the time and memory of ML workloads go, and what to change"};
  app.require_subcommand(1);
  app.set_version_flag("--version", version_string());
  std::vector<std::pair<CLI::App*, std::function<int()>>> runners;
  bool strict = false;
  for (auto& e : registry()) {
    CLI::App* sub = app.add_subcommand(e.name, e.help);
    runners.emplace_back(sub, e.setup(*sub));
    sub->add_flag("--strict", strict,
                  "fail (exit 2) on any import problem instead of warning and reading on (CI)");
  }
  std::vector<std::string> names;
  for (auto& e : registry()) names.emplace_back(e.name);
  if (argc < 2) return usage_error(names, nullptr);
  if (argv[1][0] != '-' && std::find(names.begin(), names.end(), argv[1]) == names.end())
    return usage_error(names, argv[1]);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ConversionError& e) {
    // CLI11 says "Could not convert: --threads = 99999999999999999999": say which problem it is.
    std::string what = e.what();
    constexpr std::string_view kPrefix = "Could not convert: ";
    size_t eq = what.find(" = ");
    if (!what.starts_with(kPrefix) || eq == std::string::npos)
      return app.exit(e) ? kExitBadInput : kExitOk;
    std::string option = what.substr(kPrefix.size(), eq - kPrefix.size());
    std::string value = what.substr(eq + 3);
    std::fprintf(stderr, "mlprof: %s %s: %s\n", option.c_str(), value.c_str(),
                 looks_numeric(value) ? "value out of range" : "not a number");
    return kExitBadInput;
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? kExitOk : kExitBadInput;
  }
  set_strict_import(strict);
  for (auto& [sub, run] : runners) {
    if (sub->parsed()) {
      // Under mpirun only `ranks` shares its work across the processes; any other command would
      // print its whole output once per process: MPI rank 0 runs it alone, the others exit.
      if (sub->get_name() != "ranks" && launched_by_mpi()) {
        if (mpi_process_rank() != 0) return kExitOk;
        std::fprintf(stderr,
                     "mlprof: under mpirun only `ranks` runs across the processes; `%s` runs "
                     "on MPI rank 0 alone (the others exit)\n",
                     sub->get_name().c_str());
      }
      try {
        return run();
      } catch (const std::exception& ex) {
        std::fprintf(stderr, "mlprof %s: %s\n", sub->get_name().c_str(), ex.what());
        return kExitFailure;
      }
    }
  }
  return kExitBadInput;
}
