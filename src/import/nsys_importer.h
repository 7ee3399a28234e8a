// Nsight Systems SQLite exports (`nsys export --type sqlite`): CUPTI kernels, memcpys, memsets,
// synchronizations and CUDA runtime/driver calls, NVTX ranges and marks, processes, threads and
// GPUs, mapped onto the Trace as Kineto would record the same run (docs/traces.md has the table).
#pragma once

#include "import/import_report.h"
#include "import/sqlite_db.h"
#include "mlprof/trace.h"

namespace mlprof::import {

// Tables only an Nsight Systems export has.
bool is_nsys_database(const SqliteDb& db);
Result<Trace> import_nsys(SqliteDb& db);

}  // namespace mlprof::import
