// op_groups with graph replays charged as if the graph had run eagerly (issue 27): each matched
// replayed kernel's GPU time goes to the groups of the op that launched it in the capture pass
// (its input shapes and call stack there, by the rule of the analyzed trace's ops), out of the
// groups of the graph launch's op, as the ops rows charge it.
#pragma once

#include "mlprof/analyze/op_groups.h"
#include "mlprof/analyze/op_stats.h"

namespace mlprof {

struct GraphsResult;

// `replays`: null or without replayed kernels, op_groups. Groups ordered by `by` as the ops rows
// (then host total, name, shape, stack) and cut to `top` (0 = all).
OpGroups op_groups_replayed(const Trace& trace, const DeviceTime* device,
                            const GraphsResult* replays, size_t top, OpSort by);

}  // namespace mlprof
