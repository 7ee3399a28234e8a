// Each device of a memory snapshot with its trace range and its segments, found in one pass
// over the parts and one over the segments: per-device searches made a snapshot of 100k
// devices take 32 s. The replay and the snapshot's Trace walk devices through this.
#pragma once

#include <cstdint>
#include <vector>

#include "mlprof/memory_snapshot.h"

namespace mlprof {

struct SnapshotDevice {
  SnapshotDeviceRange range;
  std::vector<uint32_t> segments;  // into MemorySnapshot::segments, in dump order
};
// Devices ascending, as snapshot_devices.
std::vector<SnapshotDevice> snapshot_devices_with_segments(const MemorySnapshot& snapshot);
// snapshot_replay_start over the device's own segments only.
SnapshotReplayStart snapshot_replay_start(const MemorySnapshot& snapshot,
                                          const SnapshotDevice& device);

}  // namespace mlprof
