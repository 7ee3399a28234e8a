// Query results written out: an aligned table, CSV (a header row, NULL as an empty field) or
// JSON (an array of objects per statement, NULL as null).
#pragma once

#include <cstdio>
#include <memory>

#include "sql/trace_database.h"

namespace mlprof::sql {

enum class OutputFormat { kTable, kCsv, kJson };

// Rows go to `out` (CSV and JSON stream; the table is written when the statement ends, its
// longest text column cut in the middle to fit `width`, 0 = never cut).
std::unique_ptr<RowSink> make_sink(OutputFormat format, std::FILE* out, size_t width = 0);

}  // namespace mlprof::sql
