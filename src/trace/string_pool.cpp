#include "mlprof/string_pool.h"

#include <algorithm>
#include <cstring>

namespace mlprof {

namespace {
constexpr size_t kArenaBytes = 1 << 20;
constexpr size_t kFirstArenaBytes = 16 << 10;
constexpr size_t kInitialSlots = 1 << 8;  // grows by doubling
}  // namespace

StringPool::StringPool() : slots_(kInitialSlots, 0), slot_hashes_(kInitialSlots, 0) {
  views_.push_back(std::string_view());
  // "" is id 0 and never stored in the table: intern("") short-circuits.
}

uint64_t StringPool::hash(std::string_view s) {
  // FNV-1a over 8-byte words, then a final mix: fast and good enough for identifiers.
  uint64_t h = 0xcbf29ce484222325ull ^ s.size();
  const char* p = s.data();
  size_t n = s.size();
  while (n >= 8) {
    uint64_t w;
    std::memcpy(&w, p, 8);
    h = (h ^ w) * 0x100000001b3ull;
    h ^= h >> 29;
    p += 8;
    n -= 8;
  }
  uint64_t w = 0;
  std::memcpy(&w, p, n);
  h = (h ^ w) * 0x100000001b3ull;
  h ^= h >> 32;
  h *= 0x9e3779b97f4a7c15ull;
  h ^= h >> 29;
  return h;
}

std::string_view StringPool::store(std::string_view s) {
  if (s.size() > arena_left_) {
    // Arenas grow from kFirstArenaBytes to kArenaBytes, uninitialized: a small trace (or each
    // small part of a split parse) must not zero and fault in a whole megabyte per pool.
    size_t arena = std::min(kArenaBytes, kFirstArenaBytes << std::min<size_t>(arenas_.size(), 16));
    bool oversized = s.size() > arena / 4;
    size_t bytes = oversized ? s.size() : arena;
    arenas_.push_back(std::unique_ptr<char[]>(new char[bytes]));
    if (oversized) {  // an oversized string gets its own block; keep the current arena
      std::memcpy(arenas_.back().get(), s.data(), s.size());
      return std::string_view(arenas_.back().get(), s.size());
    }
    arena_pos_ = arenas_.back().get();
    arena_left_ = bytes;
  }
  std::memcpy(arena_pos_, s.data(), s.size());
  std::string_view v(arena_pos_, s.size());
  arena_pos_ += s.size();
  arena_left_ -= s.size();
  return v;
}

void StringPool::grow() {
  size_t n = slots_.size() * 2;
  std::vector<uint32_t> slots(n, 0);
  std::vector<uint64_t> hashes(n, 0);
  size_t mask = n - 1;
  for (size_t i = 0; i < slots_.size(); ++i) {
    if (!slots_[i]) continue;
    size_t j = slot_hashes_[i] & mask;
    while (slots[j]) j = (j + 1) & mask;
    slots[j] = slots_[i];
    hashes[j] = slot_hashes_[i];
  }
  slots_.swap(slots);
  slot_hashes_.swap(hashes);
}

StringId StringPool::find(std::string_view s) const {
  if (s.empty()) return kEmptyString;
  uint64_t h = hash(s);
  size_t mask = slots_.size() - 1;
  for (size_t j = h & mask;; j = (j + 1) & mask) {
    uint32_t slot = slots_[j];
    if (!slot) return kNotFound;
    if (slot_hashes_[j] == h && views_[slot - 1] == s) return slot - 1;
  }
}

StringId StringPool::intern(std::string_view s) {
  if (s.empty()) return kEmptyString;
  uint64_t h = hash(s);
  size_t mask = slots_.size() - 1;
  size_t j = h & mask;
  for (;; j = (j + 1) & mask) {
    uint32_t slot = slots_[j];
    if (!slot) break;
    if (slot_hashes_[j] == h && views_[slot - 1] == s) return slot - 1;
  }
  StringId id = static_cast<StringId>(views_.size());
  views_.push_back(store(s));
  slots_[j] = id + 1;
  slot_hashes_[j] = h;
  if (views_.size() * 2 > slots_.size()) grow();
  return id;
}

}  // namespace mlprof
