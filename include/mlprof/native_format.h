// mlprof's own compact trace file (.mlprof): a version header, then the Trace's tables,
// zstd-compressed. Written by the recorder and `mlprof run`, read back by load_trace() and
// load_native() (mlprof/import.h).
#pragma once

#include <string>
#include <string_view>

#include "mlprof/status.h"
#include "mlprof/trace.h"

namespace mlprof {

// The first bytes of every .mlprof file.
inline constexpr std::string_view kNativeMagic = "MLPROF\x01\n";

// Writes atomically: a temporary file renamed into place, so a crash never leaves half a file.
Status save_native(const Trace& trace, const std::string& path);

}  // namespace mlprof
