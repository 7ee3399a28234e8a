// ROCm rpd_tracer databases (rocpd_op, rocpd_api, rocpd_api_ops, rocpd_string, rocpd_kernelapi,
// rocpd_copyapi, rocpd_monitor), mapped onto the Trace as Kineto records a ROCm run
// (docs/traces.md has the table). A gzip'ed .rpd is inflated into memory by load_trace.
#pragma once

#include "import/sqlite_db.h"
#include "mlprof/trace.h"

namespace mlprof::import {

bool is_rpd_database(const SqliteDb& db);
Result<Trace> import_rpd(SqliteDb& db);

}  // namespace mlprof::import
