// Least-recently-used values bounded by their total size in bytes (`serve`'s analysis results:
// keys carry the file's size and mtime, so results of a changed file simply age out). Values are
// shared, never copied: every connection sending a result sends the cached bytes.
#pragma once

#include <cstddef>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>

namespace mlprof::serve {

using Body = std::shared_ptr<const std::string>;

class ResultCache {
 public:
  explicit ResultCache(size_t max_bytes) : max_bytes_(max_bytes) {}

  Body find(const std::string& key) {  // null when absent
    std::lock_guard<std::mutex> lock(mu_);
    auto it = index_.find(key);
    if (it == index_.end()) return nullptr;
    order_.splice(order_.begin(), order_, it->second);  // most recent first
    return it->second->second;
  }

  void put(const std::string& key, Body value) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = index_.find(key);
    if (it != index_.end()) {
      bytes_ -= cost(*it->second);
      order_.erase(it->second);
      index_.erase(it);
    }
    order_.emplace_front(key, std::move(value));
    index_[key] = order_.begin();
    bytes_ += cost(order_.front());
    while (bytes_ > max_bytes_ && order_.size() > 1) {  // the newest stays even if over
      bytes_ -= cost(order_.back());
      index_.erase(order_.back().first);
      order_.pop_back();
    }
  }

  size_t size() const {
    std::lock_guard<std::mutex> lock(mu_);
    return index_.size();
  }

  size_t bytes() const {
    std::lock_guard<std::mutex> lock(mu_);
    return bytes_;
  }

 private:
  using Item = std::pair<std::string, Body>;
  static size_t cost(const Item& i) { return i.first.size() + i.second->size() + 64; }

  size_t max_bytes_;
  mutable std::mutex mu_;
  std::list<Item> order_;
  std::unordered_map<std::string, std::list<Item>::iterator> index_;
  size_t bytes_ = 0;
};

}  // namespace mlprof::serve
