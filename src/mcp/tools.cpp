#include "mcp/tools.h"

#include <sqlite3.h>

#include <chrono>
#include <cstdio>
#include <functional>
#include <vector>

#include "analyze/option_values.h"
#include "mlprof/analyze/ranks.h"
#include "render/analysis_output.h"
#include "render/report.h"
#include "sql/result_sinks.h"
#include "sql/trace_database.h"

namespace mlprof::mcp {
namespace {

namespace dom = simdjson::dom;

struct Arg {
  std::string name;
  std::string type;  // JSON Schema type
  std::string help;
  bool required = false;
  std::vector<std::string> choices;  // "enum", when not empty
};

struct ToolDef {
  std::string name;
  std::string description;
  std::vector<Arg> args;
  std::optional<AnalysisId> analysis;  // a tool whose other arguments are this analysis' options
};

Arg arg(std::string name, std::string type, std::string help, bool required = false,
        std::vector<std::string> choices = {}) {
  return Arg{std::move(name), std::move(type), std::move(help), required, std::move(choices)};
}

const Arg kTraceArg{"trace",
                    "string",
                    "path of a trace file (absolute, or relative to a directory mlprof mcp was "
                    "given), as open or list_traces return it",
                    true,
                    {}};

// The arguments of an analysis' own tool: the trace, then the analysis' options.
std::vector<Arg> analysis_args(AnalysisId id) {
  std::vector<Arg> args{kTraceArg};
  for (const OptionSpec& s : analysis_option_specs())
    if (s.id == id)
      args.push_back(arg(std::string(s.key), std::string(s.type), std::string(s.help)));
  return args;
}

std::string options_help() {
  std::string h = "options of the analysis, as its `mlprof NAME` flags (snake_case, without --): ";
  std::string last;
  for (const OptionSpec& s : analysis_option_specs()) {
    std::string name(analysis_info(s.id).name);
    h += name == last ? ", " : (last.empty() ? "" : "; ") + name + ": ";
    h += std::string(s.key) + " (" + std::string(s.type) + ")";
    last = name;
  }
  return h;
}

const std::vector<ToolDef>& tool_defs() {
  static const std::vector<ToolDef> defs = [] {
    std::vector<std::string> names;
    for (const AnalysisInfo& a : analysis_table()) names.emplace_back(a.name);
    std::vector<ToolDef> d;
    d.push_back({"list_traces",
                 "The trace files this server may read (the paths given to mlprof mcp and the "
                 "traces in its directories).",
                 {},
                 std::nullopt});
    d.push_back({"open",
                 "Open a trace file (parsed once and kept for the next calls) and return its "
                 "summary: span, events, threads, steps, top ops (times in ns, shares in %). "
                 "For a directory: the trace files in it.",
                 {arg("path", "string",
                      "a trace file or directory given to mlprof mcp, or a file under one", true)},
                 std::nullopt});
    d.push_back({"summary",
                 "Overview of a trace: span, events, threads, steps, top ops (as `mlprof summary "
                 "--json`; times in ns).",
                 analysis_args(AnalysisId::kSummary), AnalysisId::kSummary});
    d.push_back({"analysis",
                 "Any analysis of mlprof's catalogue by name (as `mlprof NAME --json`): summary, "
                 "ops, steps, kernels, gpu, memory, leaks, heap, bottlenecks, flops, flame, "
                 "timeline, modules, critical_path, ranks (a directory), compile, "
                 "memory_snapshot, roofline, graphs. Analyses the trace has no data for answer "
                 "{\"unavailable\": why}.",
                 {kTraceArg, arg("name", "string", "the analysis", true, names),
                  arg("options", "object", options_help())},
                 std::nullopt});
    d.push_back({"bottlenecks",
                 "Findings ranked by the time they cost, each with its evidence (the numbers "
                 "behind it) and what to try; savings never exceed the time they could remove "
                 "(as `mlprof bottlenecks --json`).",
                 {kTraceArg},
                 AnalysisId::kBottlenecks});
    d.push_back({"roofline",
                 "Per-kernel-shape roofline: arithmetic intensity, achieved vs peak FLOP/s and "
                 "bandwidth, compute- or memory-bound (as `mlprof roofline --json`).",
                 analysis_args(AnalysisId::kRoofline), AnalysisId::kRoofline});
    d.push_back({"critical_path",
                 "HTA's critical path of a step (default: the first ProfilerStep) or annotation: "
                 "CPU-bound, GPU compute, launch and kernel-kernel overhead, the events on it (as "
                 "`mlprof critical-path --json`).",
                 analysis_args(AnalysisId::kCriticalPath), AnalysisId::kCriticalPath});
    d.push_back({"compare",
                 "Compare two traces: per-op and per-kernel deltas, speedup, significant "
                 "regressions (as `mlprof compare BASE NEW --json`).",
                 {arg("base", "string", "the baseline trace", true),
                  arg("new", "string", "the trace compared with it", true)},
                 std::nullopt});
    d.push_back({"sql",
                 "Read-only SQL over a trace's tables (slice, track, args, ops, kernels, "
                 "launches...; docs/sql.md); over a directory given, every rank's with a rank "
                 "column. Writes are refused. Per statement {\"schema\": \"mlprof.sql/1\", "
                 "\"columns\", \"rows\": [objects]} (as `mlprof sql --json`).",
                 {kTraceArg, arg("query", "string", "SQL (several statements run in order)", true)},
                 std::nullopt});
    return d;
  }();
  return defs;
}

ToolReply fail(std::string message) { return ToolReply{true, std::move(message)}; }
ToolReply ok(std::string json) { return ToolReply{false, std::move(json)}; }

// The one-line message for a trace that did not open: serve's wording made the CLI's.
std::string open_error(const Target& t, const serve::OpenedTrace& o) {
  switch (o.error) {
    case serve::LookupError::kOutside:
      return t.shown + ": outside the paths mlprof mcp was given (a symlink or '..' leads out)";
    case serve::LookupError::kNotFound:
      return t.shown + ": no such trace file (*.json, *.json.gz, *.mlprof, ...)";
    default:
      return o.message;
  }
}

bool option_value(dom::element e, OptionValue& v) {
  switch (e.type()) {
    case dom::element_type::BOOL:
      v.kind = OptionValue::kBool;
      v.boolean = bool(e);
      return true;
    case dom::element_type::INT64:
    case dom::element_type::UINT64:
    case dom::element_type::DOUBLE:
      v.kind = OptionValue::kNumber;
      v.number = double(e);
      return true;
    case dom::element_type::STRING:
      v.kind = OptionValue::kString;
      v.text = std::string(std::string_view(e));
      return true;
    default:
      return false;
  }
}

bool has_type(dom::element e, const std::string& type) {
  switch (e.type()) {
    case dom::element_type::STRING:
      return type == "string";
    case dom::element_type::BOOL:
      return type == "boolean";
    case dom::element_type::OBJECT:
      return type == "object";
    case dom::element_type::INT64:
    case dom::element_type::UINT64:
    case dom::element_type::DOUBLE:
      return type == "number" || type == "integer";
    default:
      return false;
  }
}

std::string str(dom::object args, const char* key) {
  dom::element e;
  if (args[key].get(e) != simdjson::SUCCESS || !e.is_string()) return "";
  return std::string(std::string_view(e));
}

// Stops a statement that runs past its deadline or whose call was cancelled (SQLite's progress
// handler).
struct SqlWatch {
  std::chrono::steady_clock::time_point deadline;
  const serve::StillWanted* wanted;
};
int sql_should_stop(void* watch) {
  auto* w = static_cast<SqlWatch*>(watch);
  return std::chrono::steady_clock::now() > w->deadline || (*w->wanted && !(*w->wanted)());
}

// Passes rows on until `max` have been sent, then stops the statement.
class RowLimit : public sql::RowSink {
 public:
  RowLimit(sql::RowSink& inner, sql::TraceDatabase& db, size_t max)
      : inner_(inner), db_(db), max_(max) {}
  void begin(sqlite3_stmt* st) override { inner_.begin(st); }
  void row(sqlite3_stmt* st) override {
    if (++rows_ > max_) {
      over_ = true;
      db_.interrupt();
      return;
    }
    inner_.row(st);
  }
  void end() override { inner_.end(); }
  bool over() const { return over_; }

 private:
  sql::RowSink& inner_;
  sql::TraceDatabase& db_;
  size_t max_;
  size_t rows_ = 0;
  bool over_ = false;
};

}  // namespace

void Tools::write_list(JsonWriter& w) const {
  w.begin_array();
  for (const ToolDef& t : tool_defs()) {
    w.begin_object().field("name", t.name).field("description", t.description);
    w.key("inputSchema").begin_object().field("type", "object");
    w.key("properties").begin_object();
    for (const Arg& a : t.args) {
      w.key(a.name).begin_object().field("type", a.type).field("description", a.help);
      if (a.type == "integer") w.field("minimum", 0);
      if (!a.choices.empty()) {
        w.key("enum").begin_array();
        for (const std::string& c : a.choices) w.value(c);
        w.end_array();
      }
      w.end_object();
    }
    w.end_object();
    w.key("required").begin_array();
    for (const Arg& a : t.args)
      if (a.required) w.value(a.name);
    w.end_array();
    w.field("additionalProperties", false);
    w.end_object();
    w.key("annotations").begin_object().field("readOnlyHint", true).end_object();
    w.end_object();
  }
  w.end_array();
}

ToolReply Tools::open(const std::string& path) {
  Target t;
  std::string error;
  if (!roots_.resolve(path, t, error)) return fail(error);
  if (t.directory) {
    serve::Listing l = t.root->store->list();
    JsonWriter w;
    w.begin_object().field("directory", t.shown).key("traces").begin_array();
    std::string prefix = t.name.empty() ? "" : t.name + "/";
    size_t n = 0;
    for (const serve::TraceFileInfo& f : l.files)
      if (f.name.starts_with(prefix)) {
        w.begin_object()
            .field("trace", t.root->canonical + "/" + f.name)
            .field("bytes", f.size)
            .end_object();
        ++n;
      }
    w.end_array().field("truncated", l.truncated).end_object();
    if (n == 0 && !t.name.empty()) return fail(t.shown + ": no such trace file or folder");
    return ok(w.take());
  }
  serve::OpenedTrace o = t.root->store->trace(t.name, wanted_);
  if (o.error != serve::LookupError::kNone) return fail(open_error(t, o));
  return ok(analysis_json(*o.set, AnalysisId::kSummary));
}

std::optional<ToolReply> Tools::call(std::string_view name, dom::object args) {
  const ToolDef* def = nullptr;
  for (const ToolDef& d : tool_defs())
    if (d.name == name) def = &d;
  if (def == nullptr) return std::nullopt;
  // Arguments against the schema: a wrong one is the tool's error, so the model can correct it.
  for (auto [key, value] : args) {
    const Arg* arg = nullptr;
    for (const Arg& a : def->args)
      if (a.name == key) arg = &a;
    if (arg == nullptr) return fail(def->name + ": unknown argument '" + std::string(key) + "'");
    if (!has_type(value, arg->type))
      return fail(def->name + ": " + arg->name + " must be " +
                  (arg->type == "integer" ? "a whole number" : "of type " + arg->type));
  }
  for (const Arg& a : def->args) {
    dom::element e;
    if (a.required && args[a.name].get(e) != simdjson::SUCCESS)
      return fail(def->name + ": missing argument '" + a.name + "'");
  }
  ToolReply r;
  if (def->name == "list_traces") {
    bool truncated = false;
    JsonWriter w;
    w.begin_object().key("traces").begin_array();
    for (const std::string& p : roots_.traces(truncated)) w.value(p);
    w.end_array().field("truncated", truncated).end_object();
    r = ok(w.take());
  } else if (def->name == "open") {
    r = open(str(args, "path"));
  } else if (def->name == "compare") {
    r = compare(str(args, "base"), str(args, "new"));
  } else if (def->name == "sql") {
    r = sql(str(args, "trace"), str(args, "query"));
  } else {
    // An analysis: `analysis` names it and takes its options as an object; the others are the
    // analysis' own tool, its options the remaining arguments.
    AnalysisId id;
    std::vector<std::pair<std::string, dom::element>> options;
    if (def->analysis) {
      id = *def->analysis;
      for (auto [key, value] : args)
        if (key != "trace") options.emplace_back(std::string(key), value);
    } else {
      std::string analysis = str(args, "name");
      auto found = analysis_id(analysis);
      if (!found) return fail("analysis: unknown analysis '" + analysis + "'");
      id = *found;
      dom::object o;
      if (args["options"].get(o) == simdjson::SUCCESS)
        for (auto [key, value] : o) options.emplace_back(std::string(key), value);
    }
    r = analysis(str(args, "trace"), id, options);
  }
  if (!r.error && r.text.size() > options_.max_result_bytes)
    return fail(def->name + ": the answer is " + std::to_string(r.text.size() >> 20) +
                " MiB, more than the limit of " + std::to_string(options_.max_result_bytes >> 20) +
                " MiB: ask for fewer rows (top, LIMIT)");
  return r;
}

ToolReply Tools::analysis(const std::string& path, AnalysisId id,
                          const std::vector<std::pair<std::string, dom::element>>& options) {
  std::string_view name = analysis_info(id).name;
  AnalysisOptions o;
  for (const auto& [key, value] : options) {
    OptionValue v;
    std::optional<std::string> why;
    if (!option_value(value, v))
      why = std::string(name) + ": " + key + " must be a number, string or boolean";
    else
      why = set_analysis_option(o, id, key, v);
    if (why) return fail(*why);
  }
  Target t;
  std::string error;
  if (!roots_.resolve(path, t, error)) return fail(error);
  if (t.directory && !t.name.empty())
    return fail(t.shown + ": not a trace file (" + std::string(name) +
                " reads a trace file, or a directory given to mlprof mcp as a rank set)");
  if (t.directory) {  // a rank set, as `mlprof NAME DIR`
    if (!options.empty())
      return fail(t.shown +
                  ": a directory: options apply to one trace file (give one of its "
                  "traces, or no options)");
    serve::OpenedTrace ranks = t.root->store->rank_set(wanted_);
    if (ranks.error != serve::LookupError::kNone) return fail(ranks.message);
    return ok(analysis_json(*ranks.set, id));
  }
  serve::OpenedTrace opened = t.root->store->trace(t.name, wanted_);
  if (opened.error != serve::LookupError::kNone) return fail(open_error(t, opened));
  if (options.empty()) return ok(analysis_json(*opened.set, id));  // the kept stage's results
  AnalysisSet set(opened.set->trace(), o);
  // A window asked for that the trace lacks is the caller's mistake, as in the CLI (the default
  // window's absence is the analysis' own "unavailable").
  if (id == AnalysisId::kCriticalPath)
    if (auto why = set.unavailable(id)) return fail(set.trace().meta.source + ": " + *why);
  return ok(analysis_json(set, id));
}

ToolReply Tools::compare(const std::string& base, const std::string& next) {
  serve::OpenedTrace sets[2];
  const std::string* paths[2] = {&base, &next};
  for (int i = 0; i < 2; ++i) {
    Target t;
    std::string error;
    if (!roots_.resolve(*paths[i], t, error)) return fail(error);
    if (t.directory) return fail(t.shown + ": a directory: compare reads two trace files");
    sets[i] = t.root->store->trace(t.name, wanted_);
    if (sets[i].error != serve::LookupError::kNone) return fail(open_error(t, sets[i]));
  }
  return ok(compare_json(sets[0].set->trace(), sets[1].set->trace()));
}

ToolReply Tools::sql(const std::string& path, const std::string& query) {
  Target t;
  std::string error;
  if (!roots_.resolve(path, t, error)) return fail(error);
  // As `mlprof sql`: one trace (its rank, when it has one, in the hidden rank column), or a
  // directory given: every rank trace in it, the rank column shown, files that fail skipped.
  std::vector<std::shared_ptr<AnalysisSet>> held;  // kept alive while the query runs
  std::vector<sql::TracePart> parts;
  if (t.directory) {
    if (!t.name.empty()) return fail(t.shown + ": not a trace file, nor a directory given");
    std::string first_error;
    for (const std::string& name : t.root->store->rank_names()) {
      serve::OpenedTrace r = t.root->store->trace(name, wanted_);
      if (r.error == serve::LookupError::kAbandoned) return fail("sql: cancelled");
      if (r.error != serve::LookupError::kNone) {
        if (first_error.empty()) first_error = r.message;
        continue;
      }
      const Trace& tr = r.set->trace();
      parts.push_back({&tr, rank_of(tr, tr.meta.source)});
      held.push_back(std::move(r.set));
    }
    if (parts.empty())
      return fail(t.shown + ": no trace could be loaded (a directory of rank traces" +
                  (first_error.empty() ? "" : "; the first: " + first_error) + ")");
  } else {
    serve::OpenedTrace opened = t.root->store->trace(t.name, wanted_);
    if (opened.error != serve::LookupError::kNone) return fail(open_error(t, opened));
    const Trace& tr = opened.set->trace();
    parts.push_back({&tr, tr.meta.rank >= 0 ? tr.meta.rank : 0});
    held.push_back(std::move(opened.set));
  }
  auto db = sql::TraceDatabase::open(parts, t.directory);
  if (!db) return fail(t.shown + ": " + db.error());
  char* buf = nullptr;
  size_t size = 0;
  std::FILE* out = ::open_memstream(&buf, &size);
  if (out == nullptr) return fail("sql: out of memory");
  SqlWatch watch{std::chrono::steady_clock::now() +
                     std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                         std::chrono::duration<double>(options_.sql_timeout_s)),
                 &wanted_};
  sqlite3_progress_handler((*db)->handle(), 10000, sql_should_stop, &watch);
  bool done;
  sql::QueryError err;
  bool over;
  {
    auto sink = sql::make_sink(sql::OutputFormat::kJson, out);
    RowLimit limit(*sink, **db, options_.sql_max_rows);
    done = (*db)->run(query, limit, err);
    over = limit.over();
  }
  std::fclose(out);
  std::string text(buf, size);
  std::free(buf);
  // The row limit first: a statement interrupted as it finished completes, its rows cut.
  if (over)
    return fail("sql: more than " + std::to_string(options_.sql_max_rows) +
                " rows: add a LIMIT or aggregate");
  if (done) return ok(std::move(text));
  // The messages `mlprof sql` prints, and this server's own limits.
  if (err.interrupted)
    return fail("sql: stopped after " + std::to_string(static_cast<int>(options_.sql_timeout_s)) +
                " s (mlprof mcp --sql-timeout)");
  if (err.refused_write)
    return fail("sql: " + err.message + ": the trace tables are read-only (write refused)");
  return fail("sql: " + err.message +
              (err.offset >= 0 ? " (offset " + std::to_string(err.offset) + ")" : ""));
}

}  // namespace mlprof::mcp
