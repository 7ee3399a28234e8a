#include "trace/parallel_for.h"

#include <algorithm>
#include <atomic>
#include <thread>
#include <vector>

namespace mlprof {

void parallel_for(size_t n, unsigned threads, const std::function<void(size_t)>& fn,
                  const std::function<bool()>& keep_going) {
  if (n == 0) return;
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  threads = std::max(1u, static_cast<unsigned>(std::min<size_t>(threads, n)));
  std::atomic<size_t> next{0};
  std::atomic<bool> stop{false};
  auto worker = [&] {
    for (size_t i = next++; i < n && !stop; i = next++) {
      if (keep_going && !keep_going()) {
        stop = true;
        break;
      }
      fn(i);
    }
  };
  std::vector<std::thread> pool;
  for (unsigned i = 1; i < threads; ++i) pool.emplace_back(worker);
  worker();
  for (auto& t : pool) t.join();
}

}  // namespace mlprof
