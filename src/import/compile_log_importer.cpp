// TORCH_TRACE structured logs -> CompileLog. Rules follow tlparse's parse_path (read, not
// copied): line = glog prefix + JSON envelope, TAB lines after it are its payload, blank lines
// are skipped (even inside a payload), a trailing \r is dropped, has_payload is the payload's
// md5. Nothing is fatal except a file with no glog line at all: bad JSON, bad md5 and unknown
// lines are counted.
#include "import/compile_log_importer.h"

#include <openssl/evp.h>
#include <simdjson.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <unordered_map>
#include <unordered_set>

#include "import/byte_source.h"
#include "mlprof/compile_log.h"
#include "trace/cancel.h"

namespace mlprof {

namespace {

using simdjson::dom::element;

constexpr size_t kMaxLine = 256u << 20;  // one line (envelope or payload line)

// `[VIWEC]MMDD HH:MM:SS.uuuuuu THREADID PATH:LINE] ` -> offset of the JSON, or npos.
size_t glog_prefix(std::string_view l) {
  if (l.size() < 22 || !std::strchr("VIWEC", l[0])) return std::string_view::npos;
  for (int k = 1; k <= 4; ++k)
    if (!std::isdigit(static_cast<unsigned char>(l[k]))) return std::string_view::npos;
  if (l[5] != ' ' || l[8] != ':' || l[11] != ':' || l[14] != '.') return std::string_view::npos;
  size_t close = l.find("] ", 15);
  if (close == std::string_view::npos) return std::string_view::npos;
  return close + 2;
}

std::string md5_hex(std::string_view s) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  EVP_Digest(s.data(), s.size(), digest, &n, EVP_md5(), nullptr);
  static const char* hex = "0123456789abcdef";
  std::string out;
  for (unsigned k = 0; k < n; ++k) {
    out += hex[digest[k] >> 4];
    out += hex[digest[k] & 15];
  }
  return out;
}

int64_t int_or(element e, const char* key, int64_t fallback) {
  int64_t v;
  if (e[key].get_int64().get(v) == simdjson::SUCCESS) return v;
  return fallback;
}
double double_or(element e, const char* key, double fallback) {
  double v;
  if (e[key].get_double().get(v) == simdjson::SUCCESS) return v;
  return fallback;
}
std::string str_or(element e, const char* key) {
  std::string_view v;
  if (e[key].get_string().get(v) == simdjson::SUCCESS) return std::string(v);
  return "";
}

// The generated kernels a payload defines or calls: whole words matching
// (triton|cpp)_[a-z]*_?fused_\w+ ("triton_poi_fused_add_0", "cpp_fused_mul_1"). A scan of the
// words, not std::regex: libstdc++'s matcher recurses per character, and a 2 MB word in a
// payload overflowed the stack (exit 139).
std::vector<std::string_view> fused_kernel_names(std::string_view text) {
  auto word_char = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  std::vector<std::string_view> out;
  for (size_t i = 0; i < text.size();) {
    if (!word_char(text[i])) {
      ++i;
      continue;
    }
    size_t end = i;
    while (end < text.size() && word_char(text[end])) ++end;
    std::string_view w = text.substr(i, end - i);
    i = end;
    std::string_view rest;
    if (w.starts_with("triton_"))
      rest = w.substr(7);
    else if (w.starts_with("cpp_"))
      rest = w.substr(4);
    else
      continue;
    size_t lower = 0;  // [a-z]*, then an optional '_', then "fused_" and at least one more
    while (lower < rest.size() && rest[lower] >= 'a' && rest[lower] <= 'z') ++lower;
    for (size_t j = 0; j <= lower + 1 && j < rest.size(); ++j) {
      if (j == lower + 1 && rest[lower] != '_') break;
      if (rest.substr(j).starts_with("fused_") && rest.size() > j + 6) {
        out.push_back(w);
        break;
      }
    }
  }
  return out;
}

// fx_graph_cache_{hit,miss,bypass,disabled}; not fx_graph_cache_hash (a key, not an outcome).
bool is_cache_outcome(std::string_view name) {
  return name == "fx_graph_cache_hit" || name == "fx_graph_cache_miss" ||
         name == "fx_graph_cache_bypass" || name == "fx_graph_cache_disabled";
}

std::string base_name(std::string_view path) {
  size_t slash = path.find_last_of("/\\");
  return std::string(slash == std::string_view::npos ? path : path.substr(slash + 1));
}

// Frames of torch itself (Dynamo's eval_frame wrapper, nn.Module's call machinery): not where
// the user's code called the compiled function.
bool is_torch_internal(std::string_view file) {
  for (std::string_view dir : {"/torch/_dynamo/", "/torch/_inductor/", "/torch/_functorch/",
                               "/torch/nn/modules/module.py", "/torch/_compile.py"})
    if (file.find(dir) != std::string_view::npos) return true;
  return file.starts_with("torch/_dynamo/");
}

class LogParser {
 public:
  explicit LogParser(CompileLog& log) : log_(log) {}

  void line(std::string_view l) {
    ++log_.lines;
    if (!l.empty() && l.back() == '\r') {
      l.remove_suffix(1);
      log_.crlf = true;
    }
    if (!l.empty() && l[0] == '\t') {
      ++log_.payload_lines;
      if (!in_entry_) return;
      if (payload_started_) payload_ += '\n';
      payload_started_ = true;
      payload_.append(l.substr(1));
      return;
    }
    if (l.find_first_not_of(" \t") == std::string_view::npos) {  // after the TAB test: a
      ++log_.blank_lines;                                        // "\t   " line is payload
      return;
    }
    size_t json_at = glog_prefix(l);
    if (json_at == std::string_view::npos) {
      ++log_.unrecognized_lines;
      return;
    }
    finish_entry();
    ++log_.glog_lines;
    envelope_.assign(l.substr(json_at));
    in_entry_ = true;
  }

  void finish() {
    finish_entry();
    log_.global_autotune_events = global_autotune_events_;
    // FX graph cache outcomes: the fx_graph_cache_* artifacts when the log has them (newer
    // PyTorch logs every hit and miss there), else the chromium instants (older logs; newer
    // ones emit instants for misses only).
    if (!artifact_cache_.empty()) {
      log_.cache_events = std::move(artifact_cache_);
    } else {
      for (CompileRecord& r : log_.compiles) {
        auto it = chromium_cache_.find(r.id.key());
        if (it != chromium_cache_.end()) r.cache_events = it->second;
      }
    }
    // The file name's rank (dedicated_log_torch_trace_rank_3_xxx.log) wins over the envelopes'
    // "rank", as in tlparse's multi-rank pages: copied or hand-edited logs keep the rank of the
    // run they came from (multi_rank_runtime's ranks 5 and 6 say "rank": 1 inside), and two files
    // claiming one rank would merge in the divergence groups ("ranks 1, 1").
    std::string_view base(log_.source);
    if (size_t slash = base.find_last_of("/\\"); slash != std::string_view::npos)
      base.remove_prefix(slash + 1);
    size_t r = base.rfind("rank_");
    if (r != std::string_view::npos && r + 5 < base.size() &&
        std::isdigit(static_cast<unsigned char>(base[r + 5])))
      log_.rank = std::atoi(std::string(base.substr(r + 5)).c_str());
  }

 private:
  CompileRecord& record(const CompileId& id) {
    auto [it, fresh] = by_id_.try_emplace(id.key(), log_.compiles.size());
    if (fresh) {
      log_.compiles.emplace_back();
      log_.compiles.back().id = id;
      if (id.attempt == 0) by_short_.try_emplace(id.short_text(), it->second);
    }
    return log_.compiles[it->second];
  }
  // A chromium event's "0/1" (or "!2/0/1"): the compile's (first) attempt-0 record, created if
  // the event comes before the compile's own entries (the dynamo phase begins before
  // dynamo_start). Looked up by its text: a scan per event was quadratic in compile ids.
  CompileRecord* record_for_short(std::string_view short_id) {
    if (auto it = by_short_.find(std::string(short_id)); it != by_short_.end())
      return &log_.compiles[it->second];
    CompileId id;
    std::string_view s = short_id;
    if (!s.empty() && s[0] == '!') {
      size_t slash = s.find('/');
      if (slash == std::string_view::npos) return nullptr;
      id.autograd = std::atoll(std::string(s.substr(1, slash - 1)).c_str());
      s = s.substr(slash + 1);
    }
    size_t slash = s.find('/');
    if (slash == std::string_view::npos || slash == 0 || slash + 1 >= s.size()) return nullptr;
    for (char c : s)
      if (c != '/' && !std::isdigit(static_cast<unsigned char>(c))) return nullptr;
    id.frame = std::atoll(std::string(s.substr(0, slash)).c_str());
    id.compile = std::atoll(std::string(s.substr(slash + 1)).c_str());
    return &record(id);
  }

  void finish_entry() {
    if (!in_entry_) return;
    in_entry_ = false;
    std::string payload = std::move(payload_);
    payload_.clear();
    payload_started_ = false;
    simdjson::padded_string env(envelope_);
    element e;
    if (parser_.parse(env).get(e) != simdjson::SUCCESS || !e.is_object()) {
      ++log_.json_failures;
      return;
    }
    std::string_view expect;
    if (e["has_payload"].get_string().get(expect) == simdjson::SUCCESS &&
        md5_hex(payload) != expect)
      ++log_.md5_mismatches;
    static const char* const kIdKeys[] = {
        "compiled_autograd_id", "frame_id", "frame_compile_id", "attempt", "rank",
        "has_payload",          "stack"};
    std::string kind;
    element body;
    for (auto field : e.get_object()) {
      bool id_key = false;
      for (const char* k : kIdKeys) id_key |= field.key == k;
      if (!id_key && kind.empty()) {
        kind = std::string(field.key);
        body = field.value;
      }
    }
    if (kind.empty()) kind = "(none)";
    ++log_.entries_by_kind[kind];
    int64_t rank = int_or(e, "rank", -1);
    if (rank >= 0 && log_.rank < 0) log_.rank = static_cast<int32_t>(rank);
    CompileId id;
    id.autograd = int_or(e, "compiled_autograd_id", -1);
    id.frame = int_or(e, "frame_id", -1);
    id.compile = int_or(e, "frame_compile_id", -1);
    id.attempt = int_or(e, "attempt", 0);
    if (kind == "str") {
      simdjson::dom::array a;
      std::string_view s;
      int64_t idx;
      if (body.get_array().get(a) == simdjson::SUCCESS && a.size() == 2 &&
          a.at(0).get_string().get(s) == simdjson::SUCCESS &&
          a.at(1).get_int64().get(idx) == simdjson::SUCCESS)
        strings_[idx] = std::string(s);
      return;
    }
    if (kind == "chromium_event") return chromium(payload);
    if (!id.known() && kind != "artifact" && kind != "compilation_metrics_runtime") return;
    if (kind == "dynamo_start") {
      CompileRecord& r = record(id);
      ++r.dynamo_starts;
      log_.dynamo_starts.push_back(id.text());
      simdjson::dom::array stack;
      if (body["stack"].get_array().get(stack) == simdjson::SUCCESS && stack.size()) {
        // The innermost frame that is not torch's own: the stack ends in eval_frame.py's _fn
        // when the compiled function is called directly, and the row read
        // "eval_frame.py:410 in _fn" where its restart read "fn (test_misc.py:9549)".
        std::vector<element> frames;
        for (element f : stack) frames.push_back(f);
        size_t pick = frames.size() - 1;
        for (size_t k = frames.size(); k-- > 0;) {
          auto it = strings_.find(int_or(frames[k], "filename", -1));
          if (it == strings_.end() || !is_torch_internal(it->second)) {
            pick = k;
            break;
          }
        }
        element f = frames[pick];
        int64_t file = int_or(f, "filename", -1);
        auto it = strings_.find(file);
        r.user_frame = (it == strings_.end() ? std::string("?") : base_name(it->second)) + ":" +
                       std::to_string(int_or(f, "line", 0)) + " in " + str_or(f, "name");
      }
    } else if (kind == "compilation_metrics") {
      CompileRecord& r = record(id);
      r.has_metrics = true;
      r.co_name = str_or(body, "co_name");
      r.co_filename = str_or(body, "co_filename");
      r.co_firstlineno = int_or(body, "co_firstlineno", -1);
      // One compile id can be compiled several times in a process (after a reset): times add.
      auto acc = [](double& field, double v) {
        if (!std::isnan(v)) field = std::isnan(field) ? v : field + v;
      };
      double us = double_or(body, "dynamo_cumulative_compile_time_us", NAN);
      acc(r.compile_s,
          double_or(body, "entire_frame_compile_time_s", std::isnan(us) ? NAN : us / 1e6));
      double aot_us = double_or(body, "aot_autograd_cumulative_compile_time_us", NAN);
      acc(r.backend_s,
          double_or(body, "backend_compile_time_s", std::isnan(aot_us) ? NAN : aot_us / 1e6));
      double ind_us = double_or(body, "inductor_cumulative_compile_time_us", NAN);
      acc(r.inductor_s,
          double_or(body, "inductor_compile_time_s", std::isnan(ind_us) ? NAN : ind_us / 1e6));
      // Code generation: code_gen_time_s in 2024 logs, inductor_code_gen_cumulative_compile_time_us
      // in newer ones (simple.log: 529174 us).
      double cg_us = double_or(body, "inductor_code_gen_cumulative_compile_time_us", NAN);
      acc(r.code_gen_s, double_or(body, "code_gen_time_s", std::isnan(cg_us) ? NAN : cg_us / 1e6));
      ++r.metrics_count;
      for (const char* k : {"compile_time_autotune_time_us", "runtime_triton_autotune_time_us"}) {
        double v = double_or(body, k, NAN);
        if (!std::isnan(v)) r.autotune_us += v;
      }
      r.graph_op_count = int_or(body, "graph_op_count", -1);
      r.guard_count = int_or(body, "guard_count", -1);
      r.fail_type = str_or(body, "fail_type");
      r.fail_reason = str_or(body, "fail_reason");
      std::string ff = str_or(body, "fail_user_frame_filename");
      if (!ff.empty())
        r.fail_user_frame =
            base_name(ff) + ":" + std::to_string(int_or(body, "fail_user_frame_lineno", 0));
      simdjson::dom::array reasons;
      if (body["restart_reasons"].get_array().get(reasons) == simdjson::SUCCESS)
        for (element x : reasons) {
          std::string_view s;
          if (x.get_string().get(s) == simdjson::SUCCESS) r.restart_reasons.emplace_back(s);
        }
      std::string rr = str_or(body, "recompile_reason");
      if (!rr.empty() && r.recompile_reasons.empty()) r.recompile_reasons.push_back(rr);
    } else if (kind == "compilation_metrics_runtime") {
      CompileRecord* r = id.known() ? &record(id) : record_for_short(str_or(body, "compile_id"));
      if (!r) return;
      double v = double_or(body, "runtime_triton_autotune_time_us", NAN);
      if (!std::isnan(v)) r->autotune_us += v;
    } else if (kind == "artifact") {
      std::string name = str_or(body, "name");
      ++log_.artifacts[name];
      if (name == "graph_execution") return graph_execution(payload);
      if (!id.known()) return;
      CompileRecord& r = record(id);
      if (name.find("autotun") != std::string::npos) ++r.autotune_events;
      if (is_cache_outcome(name)) {  // key in the payload
        simdjson::padded_string p(payload);
        element v;
        std::string key;
        if (parser_.parse(p).get(v) == simdjson::SUCCESS) key = str_or(v, "key");
        artifact_cache_.emplace_back(name, key, id.short_text());
        r.cache_events.emplace_back(name, key);
      } else if (name == "recompile_reasons") {
        simdjson::padded_string p(payload);
        element v;
        if (parser_.parse(p).get(v) == simdjson::SUCCESS && v.is_array()) {
          for (element x : v.get_array()) {
            std::string_view s;
            if (x.get_string().get(s) == simdjson::SUCCESS) r.recompile_reasons.emplace_back(s);
          }
        } else {
          ++log_.payload_json_failures;
        }
      } else if (name == "inductor_collective_schedule") {
        simdjson::padded_string p(payload);
        element v;
        if (parser_.parse(p).get(v) != simdjson::SUCCESS || !v.is_array()) {
          ++log_.payload_json_failures;
          return;
        }
        r.has_collective_schedule = true;
        r.collective_schedule.clear();
        for (element x : v.get_array()) {
          std::string_view s;
          r.collective_schedule.emplace_back(
              x.get_string().get(s) == simdjson::SUCCESS ? s : simdjson::minify(x));
        }
      } else if (name == "inductor_runtime_and_tensor_meta") {
        simdjson::padded_string p(payload);
        element v;
        simdjson::dom::array ops;
        if (parser_.parse(p).get(v) != simdjson::SUCCESS ||
            v["ops"].get_array().get(ops) != simdjson::SUCCESS) {
          ++log_.payload_json_failures;
          return;
        }
        r.has_tensor_meta = true;
        r.tensor_meta.clear();
        for (element op : ops) {
          element outputs;
          std::string outs =
              op["outputs"].get(outputs) == simdjson::SUCCESS ? simdjson::minify(outputs) : "-";
          r.tensor_meta.push_back(str_or(op, "name") + " " + outs);
        }
      } else if (name == "dynamo_graph_break_reason") {
        r.graph_break_reasons.push_back(payload.substr(0, payload.find('\n')));
      }
    } else if (kind == "inductor_output_code") {
      CompileRecord& r = record(id);
      size_t index = static_cast<size_t>(&r - log_.compiles.data());
      for (std::string_view k : fused_kernel_names(payload))
        if (kernels_seen_.emplace(index, std::string(k)).second) r.kernels.emplace_back(k);
    } else {
      record(id);  // any other entry names the compile id
    }
  }

  void chromium(const std::string& payload) {
    simdjson::padded_string p(payload);
    element ev;
    if (parser_.parse(p).get(ev) != simdjson::SUCCESS || !ev.is_object()) {
      ++log_.payload_json_failures;
      return;
    }
    std::string name = str_or(ev, "name"), ph = str_or(ev, "ph");
    double ts = double_or(ev, "ts", NAN);
    // Fields of "args", "" when there is none (converting a missing field throws: a chromium
    // event without args ended the CLI with "The JSON field referenced does not exist").
    std::string cid, cache_key;
    if (element args; ev["args"].get(args) == simdjson::SUCCESS) {
      cid = str_or(args, "compile_id");
      cache_key = str_or(args, "key");
    }
    if (cid.empty()) cid = "None";
    if (ph == "i" || ph == "I" || ph == "n") {
      if (is_cache_outcome(name)) {
        log_.cache_events.emplace_back(name, cache_key, cid);
        if (CompileRecord* r = record_for_short(cid))
          chromium_cache_[r->id.key()].emplace_back(name, cache_key);
      }
      if (name.find("autotun") != std::string::npos)
        if (CompileRecord* r = record_for_short(cid)) ++r->autotune_events;
      return;
    }
    if (ph == "B") {
      open_[{name, cid}].push_back(ts);
    } else if (ph == "E") {
      auto& st = open_[{name, cid}];
      if (st.empty() || std::isnan(ts)) return;
      double dur = ts - st.back();
      st.pop_back();
      CompileRecord* r = cid == "None" ? nullptr : record_for_short(cid);
      auto& phases = r ? r->phases_us : log_.global_phases_us;
      // (record, phase name) -> its index in phases: a scan per event was quadratic in names.
      size_t owner = r ? static_cast<size_t>(r - log_.compiles.data()) : SIZE_MAX;
      auto [at, fresh] = phase_index_.try_emplace(std::pair(owner, name), phases.size());
      if (fresh)
        phases.emplace_back(name, dur);
      else
        phases[at->second].second += dur;
      if ((name.find("autotun") != std::string::npos ||
           name.find("benchmark") != std::string::npos)) {
        if (r)
          ++r->autotune_events;
        else
          ++global_autotune_events_;
      }
    }
  }

  void graph_execution(const std::string& payload) {
    simdjson::padded_string p(payload);
    element v;
    if (parser_.parse(p).get(v) != simdjson::SUCCESS) {
      ++log_.payload_json_failures;
      return;
    }
    simdjson::dom::array order;
    if (v["graph_execution_order"].get_array().get(order) != simdjson::SUCCESS) return;
    for (element x : order) {
      std::string_view s;
      if (x["compile_id"].get_string().get(s) == simdjson::SUCCESS)
        log_.graph_execution_order.emplace_back(s);
    }
  }

  CompileLog& log_;
  simdjson::dom::parser parser_;
  std::string envelope_, payload_;
  bool in_entry_ = false, payload_started_ = false;
  std::map<int64_t, std::string> strings_;
  std::map<std::tuple<int64_t, int64_t, int64_t, int64_t>, size_t> by_id_;
  std::unordered_map<std::string, size_t> by_short_;  // "0/1" -> its first attempt-0 record
  struct PairHash {
    size_t operator()(const std::pair<size_t, std::string>& k) const {
      return std::hash<std::string>()(k.second) ^ (k.first * 0x9e3779b97f4a7c15ull);
    }
  };
  std::unordered_map<std::pair<size_t, std::string>, size_t, PairHash> phase_index_;
  std::unordered_set<std::pair<size_t, std::string>, PairHash> kernels_seen_;
  std::map<std::pair<std::string, std::string>, std::vector<double>> open_;
  std::vector<std::tuple<std::string, std::string, std::string>> artifact_cache_;
  uint32_t global_autotune_events_ = 0;
  std::map<std::tuple<int64_t, int64_t, int64_t, int64_t>,
           std::vector<std::pair<std::string, std::string>>>
      chromium_cache_;
};

Result<CompileLog> parse(import::ByteSource& src, const std::string& name) {
  CompileLog log;
  log.source = name;
  LogParser parser(log);
  std::string line;
  char buf[1 << 16];
  bool too_long = false;
  for (;;) {
    throw_if_cancelled();  // serve: once per 64 KiB, the client may have gone (trace/cancel.h)
    size_t n = src.read(buf, sizeof buf);
    if (n == 0) break;
    for (size_t k = 0; k < n;) {
      const char* nl = static_cast<const char*>(std::memchr(buf + k, '\n', n - k));
      size_t end = nl ? static_cast<size_t>(nl - buf) : n;
      if (line.size() + (end - k) > kMaxLine) too_long = true;
      if (!too_long) line.append(buf + k, end - k);
      k = end;
      if (nl) {
        if (too_long)
          return Status::error(name + ": line " + std::to_string(log.lines + 1) +
                               " longer than 256 MiB");
        parser.line(line);
        line.clear();
        ++k;
      }
    }
  }
  MLPROF_RETURN_IF_ERROR(src.status());
  if (too_long) return Status::error(name + ": last line longer than 256 MiB");
  if (!line.empty()) parser.line(line);  // no final newline
  parser.finish();
  if (log.glog_lines == 0)
    return Status::error(name +
                         ": not a torch.compile structured log (no line like "
                         "'V0101 12:00:00.000000 123 file.py:1] {...}')");
  return log;
}

}  // namespace

Result<CompileLog> load_compile_log(const std::string& path) {
  auto opened = import::open_byte_source(path);
  MLPROF_RETURN_IF_ERROR(opened);
  return parse(*opened.value(), path);
}

Result<CompileLog> load_compile_log_buffer(std::string_view bytes, const std::string& name) {
  auto src = import::memory_byte_source(bytes.data(), bytes.size(), name);
  if (!src->status()) return src->status();
  return parse(*src, name);
}

bool is_compile_log_file(const std::string& path) {
  auto opened = import::open_byte_source(path);
  if (!opened) return false;
  std::string head(4096, '\0');
  size_t got = opened.value()->read(head.data(), head.size());
  head.resize(got);
  size_t i = head.find_first_not_of(" \t\r\n");
  if (i == std::string::npos) return false;
  std::string_view l(head.data() + i, head.size() - i);
  l = l.substr(0, l.find('\n'));
  size_t at = glog_prefix(l);
  return at != std::string_view::npos && at < l.size() && l[at] == '{';
}

}  // namespace mlprof

namespace mlprof::import {

bool looks_like_compile_log(std::string_view head) {
  size_t i = head.find_first_not_of(" \t\r\n");
  if (i == std::string_view::npos) return false;
  std::string_view l = head.substr(i);
  l = l.substr(0, l.find('\n'));
  size_t at = glog_prefix(l);
  return at != std::string_view::npos && at < l.size() && l[at] == '{';
}

Result<CompileLog> import_compile_log(ByteSource& src, const std::string& name) {
  return parse(src, name);
}

}  // namespace mlprof::import
