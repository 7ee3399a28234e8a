// SQLite databases other profilers write, chosen by their tables: Nsight Systems exports and
// ROCm rpd_tracer files. Anything else is a one-line error naming the file.
#pragma once

#include <memory>

#include "import/sqlite_db.h"
#include "mlprof/import.h"

namespace mlprof::import {

Result<Trace> import_sqlite_trace(SqliteDb& db, const ImportOptions& options);

}  // namespace mlprof::import
