// Interned strings: every name, category and string argument in a Trace is a 32-bit id.
// Open addressing instead of std::unordered_map: importing a 1M-event trace interns ~7M
// strings, and the node-based map's allocation per insert dominated the profile.
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

namespace mlprof {

using StringId = uint32_t;
inline constexpr StringId kEmptyString = 0;  // id 0 is always ""

class StringPool {
 public:
  StringPool();
  StringPool(StringPool&&) noexcept = default;
  StringPool& operator=(StringPool&&) noexcept = default;
  StringPool(const StringPool&) = delete;
  StringPool& operator=(const StringPool&) = delete;

  StringId intern(std::string_view s);
  // Returns kNotFound when s was never interned (lookups must not grow the pool).
  static constexpr StringId kNotFound = 0xffffffffu;
  StringId find(std::string_view s) const;
  std::string_view get(StringId id) const { return views_[id]; }
  size_t size() const { return views_.size(); }

 private:
  static uint64_t hash(std::string_view s);
  void grow();
  std::string_view store(std::string_view s);

  std::vector<std::string_view> views_;
  std::vector<uint32_t> slots_;  // id + 1, 0 = empty
  std::vector<uint64_t> slot_hashes_;
  std::vector<std::unique_ptr<char[]>> arenas_;
  char* arena_pos_ = nullptr;
  size_t arena_left_ = 0;
};

}  // namespace mlprof
