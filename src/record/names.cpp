// Dynamic names: interned once into a process-wide table; a thread-local cache in front keeps
// repeated lookups off the lock.
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "mlprof/mlprof.h"
#include "record/recorder_internal.h"

namespace mlprof {
namespace {

struct StringHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>()(s); }
};

struct NameTable {
  std::mutex mu;
  std::vector<std::string> names{""};  // id 0 = "" (no category)
  std::unordered_map<std::string, NameId, StringHash, std::equal_to<>> ids{{"", 0}};
};

// Heap-allocated and never destroyed: usable from static initializers and at exit.
NameTable& table() {
  static NameTable* t = new NameTable();
  return *t;
}

}  // namespace

namespace detail {

NameId intern_name(std::string_view name) {
  NameTable& t = table();
  std::lock_guard<std::mutex> lock(t.mu);
  auto it = t.ids.find(name);
  if (it != t.ids.end()) return it->second;
  NameId id = static_cast<NameId>(t.names.size());
  t.names.emplace_back(name);
  t.ids.emplace(std::string(name), id);
  return id;
}

NameId intern_cached(std::string_view name) {
  thread_local std::unordered_map<std::string, NameId, StringHash, std::equal_to<>> cache;
  auto it = cache.find(name);
  if (it != cache.end()) return it->second;
  NameId id = intern_name(name);
  cache.emplace(std::string(name), id);
  return id;
}

}  // namespace detail

NameId intern(std::string_view name) { return detail::intern_name(name); }

namespace record {

std::vector<std::string> names_snapshot() {
  NameTable& t = table();
  std::lock_guard<std::mutex> lock(t.mu);
  return t.names;
}

std::string name_of(NameId id) {
  NameTable& t = table();
  std::lock_guard<std::mutex> lock(t.mu);
  return id < t.names.size() ? t.names[id] : std::string();
}

void reset_names_after_fork() { new (&table().mu) std::mutex(); }

}  // namespace record
}  // namespace mlprof
