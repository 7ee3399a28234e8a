// JAX/XLA profiles: the XSpace protobuf (`*.xplane.pb`, what jax.profiler writes and
// TensorBoard's profile plugin / xprof read), decoded field by field (XLA's xplane.proto) and
// mapped onto the Trace as Kineto would record the run (docs/traces.md has the table).
#pragma once

#include <string>
#include <string_view>

#include "mlprof/status.h"
#include "mlprof/trace.h"

namespace mlprof::import {

// The start of an XSpace: a plane (field 1) whose first fields are an id or a name such as
// "/host:CPU", "/device:GPU:0", "Task Environment".
bool looks_like_xspace(std::string_view head);
Result<Trace> import_xspace(std::string_view bytes, const std::string& name);

}  // namespace mlprof::import
