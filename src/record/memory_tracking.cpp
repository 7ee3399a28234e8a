// track_alloc / track_free: one Trace memory event per call with the device's running total,
// and current/peak bytes per device. A free needs its allocation's size: a sharded map keeps
// live pointers (a lock per shard, so threads allocating at once rarely meet).
#include <atomic>
#include <cstring>
#include <mutex>
#include <unordered_map>

#include "mlprof/mlprof.h"
#include "record/recorder_internal.h"

namespace mlprof {
namespace record {
namespace {

constexpr int kDeviceIds = 16;
constexpr int kDeviceSlots = 3 * kDeviceIds;  // DeviceType kCpu, kCuda, kOther
constexpr size_t kShards = 64;

struct Live {
  int64_t bytes;
  int slot;
};

struct Shard {
  std::mutex mu;
  std::unordered_map<uintptr_t, Live> live;
};

struct MemoryState {
  std::atomic<int64_t> current[kDeviceSlots] = {};
  std::atomic<int64_t> peak[kDeviceSlots] = {};
  Shard shards[kShards];
};

MemoryState& state() {
  static MemoryState* s = new MemoryState();
  return *s;
}

int device_slot(DeviceType type, int device_id) {
  int t = static_cast<int>(type);
  if (t < 0 || t > 2) t = 2;
  if (device_id < 0 || device_id >= kDeviceIds) device_id = kDeviceIds - 1;
  return t * kDeviceIds + device_id;
}

Shard& shard_of(uintptr_t p) {
  return state().shards[(p >> 4) * 0x9e3779b97f4a7c15ull >> 58];  // 64 shards
}

void record_memory(int mode, uintptr_t addr, int64_t bytes, int slot, int64_t total) {
  uint64_t type = static_cast<uint64_t>(slot / kDeviceIds);
  uint64_t id = static_cast<uint64_t>(slot % kDeviceIds);
  Event ev[3] = {{now_raw(mode), (type << 4) | (id << 8) | detail::kMemory},
                 {addr, static_cast<uint64_t>(bytes)},
                 {static_cast<uint64_t>(total), 0}};
  write_slots(mode, ev, 3);
}

}  // namespace

void reset_memory_tracking() {
  MemoryState& s = state();
  for (Shard& sh : s.shards) {
    std::lock_guard<std::mutex> lock(sh.mu);
    sh.live.clear();
  }
  for (int i = 0; i < kDeviceSlots; ++i) {
    s.current[i].store(0);
    s.peak[i].store(0);
  }
}

void reset_memory_after_fork() {
  for (Shard& sh : state().shards) new (&sh.mu) std::mutex();
}

}  // namespace record

namespace detail {

void record_alloc(const void* ptr, size_t bytes, DeviceType type, int device_id) noexcept {
  int mode = record::clock_of(__atomic_load_n(&g_mode, __ATOMIC_RELAXED));
  if (mode == record::kModeOff || ptr == nullptr) return;
  record::MemoryState& s = record::state();
  int slot = record::device_slot(type, device_id);
  auto addr = reinterpret_cast<uintptr_t>(ptr);
  auto size = static_cast<int64_t>(bytes);
  {
    record::Shard& sh = record::shard_of(addr);
    std::lock_guard<std::mutex> lock(sh.mu);
    sh.live[addr] = record::Live{size, slot};
  }
  int64_t total = s.current[slot].fetch_add(size, std::memory_order_relaxed) + size;
  int64_t peak = s.peak[slot].load(std::memory_order_relaxed);
  while (total > peak &&
         !s.peak[slot].compare_exchange_weak(peak, total, std::memory_order_relaxed)) {
  }
  record::record_memory(mode, addr, size, slot, total);
}

void record_free(const void* ptr) noexcept {
  int mode = record::clock_of(__atomic_load_n(&g_mode, __ATOMIC_RELAXED));
  if (mode == record::kModeOff || ptr == nullptr) return;
  record::MemoryState& s = record::state();
  auto addr = reinterpret_cast<uintptr_t>(ptr);
  record::Live live;
  {
    record::Shard& sh = record::shard_of(addr);
    std::lock_guard<std::mutex> lock(sh.mu);
    auto it = sh.live.find(addr);
    if (it == sh.live.end()) return;  // not tracked (allocated before the session): ignored
    live = it->second;
    sh.live.erase(it);
  }
  int64_t total =
      s.current[live.slot].fetch_sub(live.bytes, std::memory_order_relaxed) - live.bytes;
  record::record_memory(mode, addr, -live.bytes, live.slot, total);
}

}  // namespace detail

int64_t current_bytes(DeviceType type, int device_id) {
  return record::state().current[record::device_slot(type, device_id)].load();
}
int64_t peak_bytes(DeviceType type, int device_id) {
  return record::state().peak[record::device_slot(type, device_id)].load();
}

}  // namespace mlprof
