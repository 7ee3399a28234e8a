#include "cli/sql_source.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>

#include "cli/command.h"
#include "mlprof/analyze/ranks.h"
#include "mlprof/import.h"
#include "sql/result_sinks.h"
#include "trace/output_file.h"

namespace mlprof::cli {

Result<std::unique_ptr<SqlSource>> open_sql_source(const std::string& path) {
  auto src = std::make_unique<SqlSource>();
  std::vector<sql::TracePart> parts;
  Result<Input> in = open_input_or_report(path);
  if (!in) return in.status();
  const bool dir = in->rank_dir();
  if (dir) {
    std::vector<std::string> errors;
    ImportOptions io;
    io.strict = strict_import();
    Result<std::vector<Trace>> r = load_rank_files(in->rank_files, path, 0, errors, io);
    if (!r) {
      for (const std::string& e : errors) std::fprintf(stderr, "mlprof: skipped %s\n", e.c_str());
      std::fprintf(stderr, "mlprof: %s\n", r.error().c_str());
      return r.status();
    }
    if (!report_rank_errors(path, r->size(), errors))
      return Status::error(path + ": a rank trace failed to load (--strict)");
    for (const Trace& t : r.value()) print_import_warnings(t);  // as the other commands do
    src->traces = std::move(r.value());
    for (const Trace& t : src->traces) parts.push_back({&t, rank_of(t, t.meta.source)});
  } else {
    src->traces.push_back(std::move(*in->trace));
    const Trace& tr = src->traces.back();
    parts.push_back({&tr, tr.meta.rank >= 0 ? tr.meta.rank : 0});
  }
  Result<std::unique_ptr<sql::TraceDatabase>> db = sql::TraceDatabase::open(parts, dir);
  if (!db) {
    std::fprintf(stderr, "mlprof: %s: %s\n", path.c_str(), db.error().c_str());
    return db.status();
  }
  src->db = std::move(db.value());
  return src;
}

namespace {

int export_csv(sql::TraceDatabase& db, const std::string& out, const std::string& table) {
  std::vector<std::string> names = db.table_names();
  if (std::find(names.begin(), names.end(), table) == names.end()) {
    std::string list;
    for (const std::string& n : names) list += (list.empty() ? "" : ", ") + n;
    std::fprintf(stderr, "mlprof export: no table %s (tables: %s)\n", table.c_str(), list.c_str());
    return kExitBadInput;
  }
  Result<OutputFile> file = OutputFile::open(out);
  if (!file) {
    std::fprintf(stderr, "mlprof export: %s\n", file.error().c_str());
    return kExitFailure;
  }
  auto sink = sql::make_sink(sql::OutputFormat::kCsv, file->stdio());
  sql::QueryError err;
  if (!db.run("SELECT * FROM " + table, *sink, err)) {
    std::fprintf(stderr, "mlprof export: %s: %s\n", out.c_str(), err.message.c_str());
    return kExitFailure;  // `file` removes the temporary file
  }
  sink.reset();
  if (Status s = file->commit(); !s) {
    std::fprintf(stderr, "mlprof export: %s\n", s.message().c_str());
    return kExitFailure;
  }
  return kExitOk;
}

}  // namespace

int export_sql_tables(const std::string& path, const std::string& out, const std::string& table) {
  Result<std::unique_ptr<SqlSource>> src = open_sql_source(path);
  if (!src) return exit_code_of(src.code());
  if (out.ends_with(".csv")) {
    int rc = export_csv(*src.value()->db, out, table.empty() ? "slice" : table);
    if (rc == kExitOk) std::fprintf(stderr, "wrote %s\n", out.c_str());
    return rc;
  }
  if (!table.empty()) {
    std::fprintf(stderr, "mlprof export: --table goes with a .csv output\n");
    return kExitBadInput;
  }
  Status s = src.value()->db->export_sqlite(out);
  if (!s) {
    std::fprintf(stderr, "mlprof export: %s\n", s.message().c_str());
    return kExitFailure;
  }
  std::fprintf(stderr, "wrote %s\n", out.c_str());
  return kExitOk;
}

}  // namespace mlprof::cli
