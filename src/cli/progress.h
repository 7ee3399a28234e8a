// A progress bar on stderr for work that takes over a second (loading a big trace, a rank
// directory, `mlprof run`'s post-processing). Drawn only when stderr is a terminal, and erased
// before anything else is printed, so pipes, files and CI logs never see it.
//
//   Progress p("loading trace.json.gz", total_bytes);  // nothing drawn for the first second
//   options.progress_bytes = p.counter();              // the work adds what it has done
//   p.stage("analyzing");                              // no total: a spinner with elapsed time
//   p.done();                                          // (or the destructor) erases the line
//
// MLPROF_NO_PROGRESS=1 turns it off; MLPROF_PROGRESS=1 draws it even when stderr is not a
// terminal and MLPROF_PROGRESS_DELAY_MS sets the one-second delay (tests).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>

namespace mlprof::cli {

class Progress {
 public:
  explicit Progress(std::string label, uint64_t total = 0);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  std::atomic<uint64_t>* counter() { return &done_; }
  // A new stage: a new label and total (0: unknown), the counter back to 0.
  void stage(std::string label, uint64_t total = 0);
  // Erases the bar and stops drawing (idempotent): call before printing results.
  void done();
  // Erases the bar for a line of text; it is drawn again on the next tick.
  void clear();
  bool enabled() const { return enabled_; }

  // The line drawn for `done` of `total` units (bytes) after `elapsed_s`: for tests.
  static std::string line(const std::string& label, uint64_t done, uint64_t total, double elapsed_s,
                          size_t width, unsigned tick);

 private:
  void run();
  void draw_locked();

  std::mutex mu_;
  std::condition_variable cv_;
  std::string label_;
  uint64_t total_ = 0;
  std::atomic<uint64_t> done_{0};
  bool enabled_ = false, stop_ = false, drawn_ = false;
  unsigned tick_ = 0;
  int64_t start_ns_ = 0, delay_ns_ = 0;
  std::thread thread_;
};

}  // namespace mlprof::cli
