// A flat hash map from a 64-bit key (a block address) to a small value: the live-block table of
// allocation replays (mlprof run's capture, the heap and memory analyses). Open addressing with
// linear probing and backward-shift deletion: no node allocation per insert, no tombstones, so
// millions of malloc/free pairs cost a probe or two each (std::unordered_map allocated a node per
// live block and dominated these replays).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace mlprof {

template <typename V>
class AddrMap {
 public:
  explicit AddrMap(size_t expected = 1024) { rehash(capacity_for(expected)); }

  size_t size() const { return size_ + (has_empty_key_ ? 1 : 0); }

  // The value for key, or null.
  V* find(uint64_t key) {
    if (key == kEmpty) return has_empty_key_ ? &empty_key_value_ : nullptr;
    for (size_t i = slot(key);; i = (i + 1) & mask_) {
      if (keys_[i] == key) return &values_[i];
      if (keys_[i] == kEmpty) return nullptr;
    }
  }

  // Inserts (key, v) when key is absent; returns the value slot and whether it was inserted.
  std::pair<V*, bool> try_emplace(uint64_t key, const V& v) {
    if (key == kEmpty) {
      bool fresh = !has_empty_key_;
      if (fresh) empty_key_value_ = v;
      has_empty_key_ = true;
      return {&empty_key_value_, fresh};
    }
    if ((size_ + 1) * 4 > keys_.size() * 3) rehash(keys_.size() * 2);
    size_t i = slot(key);
    for (; keys_[i] != kEmpty; i = (i + 1) & mask_)
      if (keys_[i] == key) return {&values_[i], false};
    keys_[i] = key;
    values_[i] = v;
    ++size_;
    return {&values_[i], true};
  }

  // Removes key; returns whether it was present (and its value in *out).
  bool erase(uint64_t key, V* out = nullptr) {
    if (key == kEmpty) {
      if (!has_empty_key_) return false;
      if (out) *out = empty_key_value_;
      has_empty_key_ = false;
      return true;
    }
    size_t i = slot(key);
    for (;; i = (i + 1) & mask_) {
      if (keys_[i] == key) break;
      if (keys_[i] == kEmpty) return false;
    }
    if (out) *out = values_[i];
    // Backward shift: pull later entries of the probe run into the hole.
    for (size_t j = (i + 1) & mask_;; j = (j + 1) & mask_) {
      if (keys_[j] == kEmpty) break;
      size_t home = slot(keys_[j]);
      // Move j into i when its home is not cyclically within (i, j].
      if (((j - home) & mask_) >= ((j - i) & mask_)) {
        keys_[i] = keys_[j];
        values_[i] = values_[j];
        i = j;
      }
    }
    keys_[i] = kEmpty;
    --size_;
    return true;
  }

  void clear() {
    std::fill(keys_.begin(), keys_.end(), kEmpty);
    size_ = 0;
    has_empty_key_ = false;
  }

  // Calls fn(key, value) for every entry (unspecified order).
  template <typename Fn>
  void for_each(Fn&& fn) const {
    for (size_t i = 0; i < keys_.size(); ++i)
      if (keys_[i] != kEmpty) fn(keys_[i], values_[i]);
    if (has_empty_key_) fn(kEmpty, empty_key_value_);
  }

 private:
  // No allocator returns the all-ones address; it still works as a key (kept aside).
  static constexpr uint64_t kEmpty = ~uint64_t{0};

  static size_t capacity_for(size_t n) {
    size_t c = 16;
    while (c * 3 < n * 4) c *= 2;
    return c;
  }
  size_t slot(uint64_t key) const {
    return static_cast<size_t>((key * 0x9e3779b97f4a7c15ull) >> shift_);
  }
  void rehash(size_t capacity) {
    std::vector<uint64_t> old_keys(capacity, kEmpty);
    std::vector<V> old_values(capacity);
    old_keys.swap(keys_);
    old_values.swap(values_);
    mask_ = capacity - 1;
    shift_ = 64;
    for (size_t c = capacity; c > 1; c >>= 1) --shift_;
    size_ = 0;
    for (size_t i = 0; i < old_keys.size(); ++i) {
      if (old_keys[i] == kEmpty) continue;
      size_t j = slot(old_keys[i]);
      while (keys_[j] != kEmpty) j = (j + 1) & mask_;
      keys_[j] = old_keys[i];
      values_[j] = old_values[i];
      ++size_;
    }
  }

  std::vector<uint64_t> keys_;
  std::vector<V> values_;
  size_t mask_ = 0;
  int shift_ = 64;
  size_t size_ = 0;
  bool has_empty_key_ = false;
  V empty_key_value_{};
};

}  // namespace mlprof
