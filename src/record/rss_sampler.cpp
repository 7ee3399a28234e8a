// A thread that records the process's resident set size (from /proc/self/statm) as the counter
// "rss" (bytes) at a set interval while a session runs.
#include <pthread.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>

#include "mlprof/mlprof.h"
#include "record/recorder_internal.h"

namespace mlprof::record {
namespace {

int64_t read_rss_bytes() {
  FILE* f = std::fopen("/proc/self/statm", "r");
  if (!f) return -1;
  long long size = 0, resident = 0;
  int got = std::fscanf(f, "%lld %lld", &size, &resident);
  std::fclose(f);
  if (got != 2) return -1;
  return resident * static_cast<int64_t>(::sysconf(_SC_PAGESIZE));
}

}  // namespace

void start_rss_sampler(uint32_t interval_ms) {
  Recorder& r = recorder();
  std::lock_guard<std::mutex> lock(r.sampler_mu);
  if (r.sampler) return;
  r.sampler_stop = false;
  r.sampler = new std::thread([interval_ms, &r] {
    detail::set_thread_name("mlprof rss");
    NameId rss = detail::intern_name("rss");
    for (;;) {
      int64_t bytes = read_rss_bytes();
      if (bytes >= 0) detail::record_counter(rss, static_cast<double>(bytes));
      std::unique_lock<std::mutex> l(r.sampler_mu);
      if (r.sampler_cv.wait_for(l, std::chrono::milliseconds(interval_ms),
                                [&r] { return r.sampler_stop; }))
        break;
    }
    int64_t bytes = read_rss_bytes();  // a last value at stop
    if (bytes >= 0) detail::record_counter(rss, static_cast<double>(bytes));
  });
}

void stop_rss_sampler() {
  Recorder& r = recorder();
  std::thread* t;
  {
    std::lock_guard<std::mutex> lock(r.sampler_mu);
    if (!r.sampler) return;
    r.sampler_stop = true;
    t = r.sampler;
    r.sampler = nullptr;
  }
  r.sampler_cv.notify_all();
  t->join();
  delete t;
}

}  // namespace mlprof::record
