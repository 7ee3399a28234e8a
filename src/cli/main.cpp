#include <cstdio>
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

int main(int argc, char** argv) {
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
