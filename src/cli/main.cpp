#include <malloc.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <memory>
#include <vector>

#include "cli/command.h"

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
// ~10 us on these VMs: importing a 117 MB trace spent half its CPU time in page faults.
// glibc backs malloc with transparent huge pages when the tunable is set at start-up, so mlprof
// re-executes itself once with it (MLPROF_NO_HUGEPAGES=1 turns this off). The user's own
// GLIBC_TUNABLES is restored afterwards so processes mlprof starts (`mlprof run`) never see it.
void use_huge_pages(char** argv) {
  if (std::getenv("MLPROF_NO_HUGEPAGES")) return;
  if (const char* orig = std::getenv("MLPROF_ORIG_TUNABLES")) {
    if (*orig) setenv("GLIBC_TUNABLES", orig + 1, 1);  // stored with a leading '=' when set
    else unsetenv("GLIBC_TUNABLES");
    unsetenv("MLPROF_ORIG_TUNABLES");
    return;
  }
  const char* t = std::getenv("GLIBC_TUNABLES");
  if (t && std::strstr(t, "glibc.malloc.hugetlb")) return;
  std::string saved = t ? std::string("=") + t : std::string();
  std::string value = t ? std::string(t) + ":glibc.malloc.hugetlb=1" : "glibc.malloc.hugetlb=1";
  setenv("MLPROF_ORIG_TUNABLES", saved.c_str(), 1);
  setenv("GLIBC_TUNABLES", value.c_str(), 1);
  execv("/proc/self/exe", argv);
  // exec failed: carry on with ordinary pages.
  unsetenv("MLPROF_ORIG_TUNABLES");
  if (t) setenv("GLIBC_TUNABLES", saved.c_str() + 1, 1);
  else unsetenv("GLIBC_TUNABLES");
}
}  // namespace

int main(int argc, char** argv) {
  use_huge_pages(argv);
  // Big tables from the huge-page heap, not from fresh mmaps (4 KiB faults again, and in a
  // thread's own arena not even huge pages): one arena, mmap only past 32 MiB, and freed memory
  // kept for reuse instead of being returned and faulted in again.
  mallopt(M_ARENA_MAX, 1);
  mallopt(M_MMAP_THRESHOLD, 32 << 20);  // the largest value glibc accepts
  mallopt(M_TRIM_THRESHOLD, 128 << 20);
  using namespace mlprof::cli;
  CLI::App app{"mlprof: where the time and memory of ML workloads go, and what to change"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "mlprof 0.1.0");
  std::vector<std::pair<CLI::App*, std::function<int()>>> runners;
  for (auto& e : registry()) {
    CLI::App* sub = app.add_subcommand(e.name, e.help);
    runners.emplace_back(sub, e.setup(*sub));
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? kExitOk : kExitBadInput;
  }
  for (auto& [sub, run] : runners) {
    if (sub->parsed()) {
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
