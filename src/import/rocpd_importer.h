// rocprofv3's rocpd SQLite output (`rocprofv3 --output-format rocpd`, rocprofiler-sdk's schema
// version 3: source/share/rocprofiler-sdk-rocpd/rocpd_tables.sql and rocpd_views.sql): kernel
// dispatches with their kernel symbols, memory copies, HIP/HSA API and marker regions linked to
// the GPU work by correlation id, memory allocations and agents, mapped onto the Trace as Kineto
// records a ROCm run (docs/traces.md has the table). Not the older rpd_tracer schema
// (rpd_importer.h), which shares the rocpd_ prefix.
#pragma once

#include "import/sqlite_db.h"
#include "mlprof/trace.h"

namespace mlprof::import {

bool is_rocpd_database(const SqliteDb& db);
Result<Trace> import_rocpd(SqliteDb& db);

}  // namespace mlprof::import
