#include "cli/progress.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace mlprof::cli {

namespace {

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

bool env_on(const char* name) {
  const char* v = std::getenv(name);
  return v && *v && std::strcmp(v, "0") != 0;
}

size_t terminal_width() {
  winsize ws{};
  if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 20) return ws.ws_col;
  return 80;
}

// One bar at a time: a second Progress while one is drawn (two traces loading at once) stays quiet.
std::atomic<bool> g_active{false};

// "12/117 MB" (one decimal under 100 MB).
std::string megabytes(uint64_t done, uint64_t total) {
  char buf[48];
  double d = static_cast<double>(done) / 1e6, t = static_cast<double>(total) / 1e6;
  if (t < 100)
    std::snprintf(buf, sizeof buf, "%.1f/%.1f MB", d, t);
  else
    std::snprintf(buf, sizeof buf, "%.0f/%.0f MB", d, t);
  return buf;
}

}  // namespace

std::string Progress::line(const std::string& label, uint64_t done, uint64_t total,
                           double elapsed_s, size_t width, unsigned tick) {
  char tail[96];
  std::string bar;
  if (total > 0) {
    double f = std::min(1.0, static_cast<double>(done) / static_cast<double>(total));
    std::snprintf(tail, sizeof tail, " %3.0f%% %s %.1f s", f * 100, megabytes(done, total).c_str(),
                  elapsed_s);
    constexpr size_t kBar = 20;
    size_t full = static_cast<size_t>(f * kBar + 0.5);
    bar = " [" + std::string(full, '#') + std::string(kBar - full, '.') + "]";
  } else {
    static constexpr char kSpin[] = "|/-\\";
    std::snprintf(tail, sizeof tail, " %c  %.1f s", kSpin[tick % 4], elapsed_s);
  }
  std::string head = "mlprof: " + label;
  size_t room = width > 1 ? width - 1 : 0;  // never the last column: no wrap
  size_t need = bar.size() + std::strlen(tail);
  if (head.size() + need > room)
    head = room > need + 4 ? head.substr(0, room - need - 3) + "..." : std::string();
  return head + bar + tail;
}

Progress::Progress(std::string label, uint64_t total) : label_(std::move(label)), total_(total) {
  if (env_on("MLPROF_NO_PROGRESS")) return;
  enabled_ = env_on("MLPROF_PROGRESS") || isatty(STDERR_FILENO) == 1;
  if (!enabled_ || g_active.exchange(true)) {
    enabled_ = false;
    return;
  }
  const char* d = std::getenv("MLPROF_PROGRESS_DELAY_MS");
  delay_ns_ = (d && *d ? std::atoll(d) : 1000) * 1'000'000;
  start_ns_ = now_ns();
  if (delay_ns_ <= 0) {  // tests: drawn at once, so even instant work shows one frame
    std::lock_guard<std::mutex> lock(mu_);
    draw_locked();
  }
  thread_ = std::thread([this] { run(); });
}

Progress::~Progress() { done(); }

void Progress::stage(std::string label, uint64_t total) {
  std::lock_guard<std::mutex> lock(mu_);
  label_ = std::move(label);
  total_ = total;
  done_.store(0, std::memory_order_relaxed);
}

void Progress::done() {
  if (!thread_.joinable()) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
    if (drawn_) {
      std::fputs("\r\033[K", stderr);
      std::fflush(stderr);
      drawn_ = false;
    }
  }
  cv_.notify_all();
  thread_.join();
  g_active.store(false);
}

void Progress::clear() {
  std::lock_guard<std::mutex> lock(mu_);
  if (drawn_) {
    std::fputs("\r\033[K", stderr);
    std::fflush(stderr);
    drawn_ = false;
  }
}

void Progress::draw_locked() {
  double elapsed = static_cast<double>(now_ns() - start_ns_) / 1e9;
  std::string s = line(label_, done_.load(std::memory_order_relaxed), total_, elapsed,
                       terminal_width(), tick_++);
  std::fprintf(stderr, "\r%s\033[K", s.c_str());
  std::fflush(stderr);
  drawn_ = true;
}

void Progress::run() {
  std::unique_lock<std::mutex> lock(mu_);
  if (cv_.wait_for(lock, std::chrono::nanoseconds(delay_ns_), [this] { return stop_; })) return;
  while (!stop_) {
    draw_locked();
    cv_.wait_for(lock, std::chrono::milliseconds(100), [this] { return stop_; });
  }
}

}  // namespace mlprof::cli
