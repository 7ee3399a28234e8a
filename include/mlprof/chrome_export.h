// Chrome trace JSON writer: loads in Perfetto UI and chrome://tracing, and reads back into the
// same tables through import_chrome_json (timestamps in microseconds with ns decimals).
#pragma once

#include <ostream>
#include <string>

#include "mlprof/status.h"
#include "mlprof/trace.h"

namespace mlprof {

void write_chrome_json(const Trace& trace, std::ostream& out);
// Writes to a temporary file and renames it into place: nothing half-written on failure.
Status save_chrome_json(const Trace& trace, const std::string& path);

}  // namespace mlprof
