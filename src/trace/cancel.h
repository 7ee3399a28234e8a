// Work whose requester may go away (serve: the client closed its connection) asks now and then
// whether it is still wanted. The question belongs to the thread: a serve worker installs its
// request's for the time it works on it, and the long loops below it (the compile analysis, the
// compile-log reader) call throw_if_cancelled(). Elsewhere (CLI, Python) nothing is installed and
// nothing is ever cancelled.
#pragma once

#include <cstdint>
#include <exception>
#include <functional>
#include <utility>

namespace mlprof {

// Thrown out of a computation nobody waits for. Nothing half-done is kept: an analysis result
// whose computation threw is computed again by the next caller (AnalysisSet::get).
struct Cancelled : std::exception {
  const char* what() const noexcept override { return "cancelled: nobody waits for the result"; }
};

namespace cancel_detail {
inline thread_local const std::function<bool()>* still_wanted = nullptr;
}

// While alive, this thread's work asks `still_wanted` (kept by reference: it must outlive the
// scope; an empty function: always wanted).
class CancelScope {
 public:
  explicit CancelScope(const std::function<bool()>& still_wanted)
      : saved_(std::exchange(cancel_detail::still_wanted, still_wanted ? &still_wanted : nullptr)) {
  }
  ~CancelScope() { cancel_detail::still_wanted = saved_; }
  CancelScope(const CancelScope&) = delete;
  CancelScope& operator=(const CancelScope&) = delete;

 private:
  const std::function<bool()>* saved_;
};

// Throws Cancelled when this thread's work is no longer wanted. The question may cost a system
// call (serve polls the socket): loops ask through a CancelPoint.
inline void throw_if_cancelled() {
  if (cancel_detail::still_wanted && !(*cancel_detail::still_wanted)()) throw Cancelled();
}

// Asks every `every`-th tick (a power of two).
class CancelPoint {
 public:
  explicit CancelPoint(uint32_t every = 1024) : mask_(every - 1) {}
  void tick() {
    if ((++n_ & mask_) == 0) throw_if_cancelled();
  }

 private:
  uint32_t mask_, n_ = 0;
};

}  // namespace mlprof
