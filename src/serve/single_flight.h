// Concurrent requests for the same result share one computation: the first caller computes, the
// others wait for its result. A waiter whose client has gone stops waiting; when the computing
// caller gives up (its client went away), a waiter that still wants the result computes it.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

namespace mlprof::serve {

template <class T>
class SingleFlight {
 public:
  // `compute` returns nullopt when it gave up; run() returns nullopt when `wanted` turned false.
  std::optional<T> run(const std::string& key, const std::function<std::optional<T>()>& compute,
                       const std::function<bool()>& wanted) {
    for (;;) {
      std::shared_ptr<Flight> f;
      bool leader = false;
      {
        std::lock_guard<std::mutex> lock(mu_);
        std::shared_ptr<Flight>& slot = flights_[key];
        if (!slot) {
          slot = std::make_shared<Flight>();
          leader = true;
        }
        f = slot;
      }
      if (leader) {
        std::optional<T> r;
        try {
          r = compute();
        } catch (...) {
          finish(key, *f, std::nullopt);
          throw;
        }
        finish(key, *f, r);
        return r;
      }
      std::unique_lock<std::mutex> lock(f->m);
      while (!f->done) {
        if (wanted && !wanted()) return std::nullopt;
        f->cv.wait_for(lock, std::chrono::milliseconds(100));
      }
      if (f->result) return f->result;
      if (wanted && !wanted()) return std::nullopt;
    }
  }

 private:
  struct Flight {
    std::mutex m;
    std::condition_variable cv;
    bool done = false;
    std::optional<T> result;
  };
  void finish(const std::string& key, Flight& f, const std::optional<T>& r) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      flights_.erase(key);
    }
    {
      std::lock_guard<std::mutex> lock(f.m);
      f.result = r;
      f.done = true;
    }
    f.cv.notify_all();
  }

  std::mutex mu_;
  std::map<std::string, std::shared_ptr<Flight>> flights_;
};

}  // namespace mlprof::serve
