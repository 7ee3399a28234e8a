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

namespace {
// 64x64 -> 128-bit multiply, folded: the mixing step of wyhash.
inline uint64_t mix(uint64_t a, uint64_t b) {
  __uint128_t r = static_cast<__uint128_t>(a) * b;
  return static_cast<uint64_t>(r) ^ static_cast<uint64_t>(r >> 64);
}
inline uint64_t load8(const char* p) {
  uint64_t w;
  std::memcpy(&w, p, 8);
  return w;
}
}  // namespace

uint64_t StringPool::hash(std::string_view s) {
  // wyhash-style: 16 bytes per 128-bit multiply (the last 16 read overlapping), so a kernel name
  // of ~80 bytes costs 5 multiplies, not the 10 dependent multiply-and-shift rounds of FNV-1a
  // over words, which was 12% of a Kineto import's CPU (perf, 1M generated events). Strings keep
  // the ids they are interned with: only where they sit in the table depends on the hash.
  constexpr uint64_t k0 = 0xa0761d6478bd642full, k1 = 0xe7037ed1a0b428dbull,
                     k2 = 0x8ebc6af09c88c6e3ull;
  const char* p = s.data();
  size_t n = s.size();
  uint64_t seed = k0 ^ n;
  uint64_t a, b;
  if (n <= 16) {
    if (n >= 8) {
      a = load8(p);
      b = load8(p + n - 8);
    } else if (n >= 4) {
      uint32_t x, y;
      std::memcpy(&x, p, 4);
      std::memcpy(&y, p + n - 4, 4);
      a = x;
      b = y;
    } else if (n > 0) {
      a = (static_cast<uint64_t>(static_cast<uint8_t>(p[0])) << 16) |
          (static_cast<uint64_t>(static_cast<uint8_t>(p[n >> 1])) << 8) |
          static_cast<uint8_t>(p[n - 1]);
      b = 0;
    } else {
      a = b = 0;
    }
  } else {
    while (n > 16) {
      seed = mix(load8(p) ^ k1, load8(p + 8) ^ seed);
      p += 16;
      n -= 16;
    }
    a = load8(p + n - 16);
    b = load8(p + n - 8);
  }
  return mix(k1 ^ s.size(), mix(a ^ k1, b ^ seed) ^ k2);
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
