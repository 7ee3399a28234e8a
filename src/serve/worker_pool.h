// A fixed set of threads running queued jobs: `serve` computes analyses here, off the thread
// that talks HTTP, so a long analysis never delays a cheap request.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace mlprof::serve {

class WorkerPool {
 public:
  explicit WorkerPool(unsigned threads) {
    for (unsigned i = 0; i < threads; ++i) threads_.emplace_back([this] { work(); });
  }
  ~WorkerPool() { drain_and_join(); }
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  // False once drain_and_join() has begun: the caller handles the job itself.
  bool submit(std::function<void()> job) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (closed_) return false;
      jobs_.push_back(std::move(job));
    }
    cv_.notify_one();
    return true;
  }

  // Runs every queued job, then stops the threads.
  void drain_and_join() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      closed_ = true;
    }
    cv_.notify_all();
    for (std::thread& t : threads_)
      if (t.joinable()) t.join();
  }

 private:
  void work() {
    for (;;) {
      std::function<void()> job;
      {
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait(lock, [this] { return closed_ || !jobs_.empty(); });
        if (jobs_.empty()) return;  // closed and drained
        job = std::move(jobs_.front());
        jobs_.pop_front();
      }
      job();
    }
  }

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> jobs_;
  bool closed_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace mlprof::serve
