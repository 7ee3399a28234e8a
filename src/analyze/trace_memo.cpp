#include "analyze/trace_memo.h"

namespace mlprof {

namespace {

thread_local TraceMemo* t_current = nullptr;

// Changes when a table grows or moves: the test that an entry still describes the trace.
uint64_t layout_stamp(const Trace& t) {
  uint64_t h = 1469598103934665603ull;
  auto mix = [&](uint64_t v) { h = (h ^ v) * 1099511628211ull; };
  mix(t.slices.size());
  mix(reinterpret_cast<uintptr_t>(t.slices.ts.data()));
  mix(t.args.size());
  mix(reinterpret_cast<uintptr_t>(t.args.data()));
  mix(t.flows.size());
  mix(t.tracks.size());
  mix(t.strings.size());
  mix(t.instants.size());
  return h;
}

}  // namespace

TraceMemo* TraceMemo::current() { return t_current; }

TraceMemoScope::TraceMemoScope(TraceMemo& memo) : outer_(t_current) { t_current = &memo; }
TraceMemoScope::~TraceMemoScope() { t_current = outer_; }

std::shared_ptr<const void> TraceMemo::get_erased(
    const Trace& trace, MemoTable table, const void* extra,
    const std::function<std::shared_ptr<const void>()>& build) {
  std::shared_ptr<Slot> slot;
  {
    std::lock_guard<std::mutex> lock(mu_);
    std::shared_ptr<Slot>& s = slots_[{&trace, table, extra}];
    if (!s) s = std::make_shared<Slot>();
    slot = s;
  }
  const uint64_t stamp = layout_stamp(trace);
  std::lock_guard<std::mutex> lock(slot->mu);
  if (!slot->value || slot->stamp != stamp) {
    slot->value = nullptr;  // a stale table goes before the new one is built
    slot->value = build();
    slot->stamp = stamp;
  }
  return slot->value;
}

}  // namespace mlprof
