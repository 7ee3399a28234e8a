#include "import/sqlite_trace.h"

#include "import/nsys_importer.h"
#include "import/rocpd_importer.h"
#include "import/rpd_importer.h"

namespace mlprof::import {

Status strict_error(const Trace& t);  // import_warnings.cpp

Result<Trace> import_sqlite_trace(SqliteDb& db, const ImportOptions& options) {
  Result<Trace> t = Status::error("");
  if (is_nsys_database(db)) {
    t = import_nsys(db);
  } else if (is_rpd_database(db)) {
    t = import_rpd(db);
  } else if (is_rocpd_database(db)) {
    t = import_rocpd(db);
  } else {
    return Status::error(
        db.name() +
        ": an SQLite database, but not a trace mlprof reads (an Nsight Systems "
        "export has StringIds and CUPTI_ACTIVITY_KIND_*/NVTX_EVENTS tables, an rpd file "
        "rocpd_op, rocpd_api and rocpd_string, a rocprofv3 rocpd database "
        "rocpd_kernel_dispatch/rocpd_region and rocpd_string)");
  }
  if (t && options.strict) {
    MLPROF_RETURN_IF_ERROR(strict_error(*t));
  }
  return t;
}

}  // namespace mlprof::import
