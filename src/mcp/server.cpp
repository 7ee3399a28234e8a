#include "mcp/server.h"

#include <unistd.h>

#include <cerrno>
#include <string_view>

#include "mcp/line_reader.h"
#include "mcp/roots.h"
#include "mcp/tools.h"
#include "trace/json_writer.h"

#ifndef MLPROF_VERSION
#define MLPROF_VERSION "0.0.0"
#endif

namespace mlprof::mcp {
namespace {

namespace dom = simdjson::dom;

// JSON-RPC 2.0's error codes, and MCP's for a resource that is not there.
constexpr int kParseError = -32700;
constexpr int kInvalidRequest = -32600;
constexpr int kMethodNotFound = -32601;
constexpr int kInvalidParams = -32602;
constexpr int kResourceNotFound = -32002;

// Protocol revisions this server speaks, newest first: a client asking for one gets it, any
// other gets the newest (MCP's version negotiation).
constexpr std::string_view kVersions[] = {"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"};

constexpr std::string_view kFileScheme = "file://";
constexpr size_t kInitialCapacity = 64 * 1024;

bool write_all(int fd, std::string_view s) {
  while (!s.empty()) {
    ssize_t n = ::write(fd, s.data(), s.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    s.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

class Session {
 public:
  Session(const McpOptions& options, Roots& roots)
      : options_(options),
        roots_(roots),
        tools_(roots, options),
        parser_(options.max_message_bytes + simdjson::SIMDJSON_PADDING) {
    // The nesting limit: deeper messages are a parse error, not a deep recursion.
    // simdjson keeps the depth when it grows the buffers for a longer message.
    if (parser_.allocate(kInitialCapacity, options.max_depth) != simdjson::SUCCESS)
      parser_ok_ = false;
  }

  // The reply to one message ("" for a notification or a client's response).
  std::string handle(std::string_view line) {
    if (!parser_ok_) return error("null", kParseError, "out of memory");
    simdjson::padded_string padded(line);
    dom::element root;
    simdjson::error_code ec = parser_.parse(padded).get(root);
    if (ec != simdjson::SUCCESS) {
      std::string why = ec == simdjson::DEPTH_ERROR
                            ? "nested deeper than " + std::to_string(options_.max_depth) + " levels"
                        : ec == simdjson::UTF8_ERROR ? "not valid UTF-8"
                                                     : simdjson::error_message(ec);
      return error("null", kParseError, "parse error: " + why);
    }
    dom::object msg;
    if (root.get(msg) != simdjson::SUCCESS)
      return error("null", kInvalidRequest, "a message is one JSON object (no batches)");
    dom::element id_el;
    bool has_id = msg["id"].get(id_el) == simdjson::SUCCESS;
    std::string id = "null";
    if (has_id) {
      if (!id_el.is_string() && !id_el.is_int64() && !id_el.is_uint64())
        return error("null", kInvalidRequest, "id must be a string or an integer");
      id = simdjson::minify(id_el);
    }
    std::string_view version, method;
    if (msg["jsonrpc"].get(version) != simdjson::SUCCESS || version != "2.0")
      return error(id, kInvalidRequest, "jsonrpc must be \"2.0\"");
    if (msg["method"].get(method) != simdjson::SUCCESS) {
      dom::element ignored;
      bool response = msg["result"].get(ignored) == simdjson::SUCCESS ||
                      msg["error"].get(ignored) == simdjson::SUCCESS;
      if (response) return "";  // an answer to a request: this server sends none
      return error(id, kInvalidRequest, "method must be a string");
    }
    if (!has_id) return "";  // notifications (initialized, cancelled, ...) need no answer
    dom::element params_el;
    dom::object params = empty_object();
    if (msg["params"].get(params_el) == simdjson::SUCCESS &&
        params_el.get(params) != simdjson::SUCCESS)
      return error(id, kInvalidParams, "params must be an object");
    try {
      return dispatch(id, method, params);
    } catch (const std::exception& e) {  // out of memory, a bug: the session goes on
      return error(id, -32603, std::string("internal error: ") + e.what());
    }
  }

  std::string error(const std::string& id, int code, std::string_view message) {
    JsonWriter w;
    w.begin_object().field("jsonrpc", "2.0").key("id").raw(id);
    w.key("error").begin_object().field("code", code).field("message", message).end_object();
    w.end_object();
    return w.take();
  }

 private:
  // {"jsonrpc": "2.0", "id": ID, "result": RESULT}
  std::string result(const std::string& id, std::string_view result_json) {
    std::string out = "{\"jsonrpc\":\"2.0\",\"id\":" + id + ",\"result\":";
    out += result_json;
    out += '}';
    return out;
  }

  std::string dispatch(const std::string& id, std::string_view method, dom::object params) {
    if (method == "initialize") return initialize(id, params);
    if (method == "ping") return result(id, "{}");
    if (method == "tools/list") {
      JsonWriter w;
      w.begin_object().key("tools");
      tools_.write_list(w);
      w.end_object();
      return result(id, w.str());
    }
    if (method == "tools/call") {
      std::string_view name;
      if (params["name"].get(name) != simdjson::SUCCESS)
        return error(id, kInvalidParams, "tools/call needs params.name (a string)");
      dom::element args_el;
      dom::object args;
      if (params["arguments"].get(args_el) == simdjson::SUCCESS) {
        if (args_el.get(args) != simdjson::SUCCESS)
          return error(id, kInvalidParams, "params.arguments must be an object");
      } else {
        // No arguments: an empty object's view.
        args = empty_object();
      }
      std::optional<ToolReply> r = tools_.call(name, args);
      if (!r) return error(id, kInvalidParams, "unknown tool '" + std::string(name) + "'");
      return result(id, content(*r));
    }
    if (method == "resources/list") return resources_list(id);
    if (method == "resources/read") return resources_read(id, params);
    if (method == "resources/templates/list") return result(id, "{\"resourceTemplates\":[]}");
    return error(id, kMethodNotFound, "method not found: " + std::string(method));
  }

  std::string initialize(const std::string& id, dom::object params) {
    std::string_view asked;
    std::string_view version = kVersions[0];
    if (params["protocolVersion"].get(asked) == simdjson::SUCCESS)
      for (std::string_view v : kVersions)
        if (v == asked) version = v;
    JsonWriter w;
    w.begin_object().field("protocolVersion", version);
    w.key("capabilities").begin_object();
    w.key("tools").begin_object().field("listChanged", false).end_object();
    w.key("resources")
        .begin_object()
        .field("subscribe", false)
        .field("listChanged", false)
        .end_object();
    w.end_object();
    w.key("serverInfo")
        .begin_object()
        .field("name", "mlprof")
        .field("version", MLPROF_VERSION)
        .end_object();
    w.field("instructions",
            "mlprof analyzes ML profiler traces (PyTorch/Kineto, Nsight Systems, rocprof, XLA, "
            "CUDA memory snapshots...). Start with list_traces or open, then summary, "
            "bottlenecks (findings with evidence), analysis (any analysis by name), "
            "critical_path, roofline, compare, sql. Results are mlprof's --json output: times "
            "in ns unless a key says otherwise (_us, _ms, _pct, _bytes).");
    w.end_object();
    return result(id, w.str());
  }

  // A tool's reply as MCP's CallToolResult: one text item.
  static std::string content(const ToolReply& r) {
    JsonWriter w;
    w.begin_object().key("content").begin_array();
    w.begin_object().field("type", "text").field("text", r.text).end_object();
    w.end_array().field("isError", r.error).end_object();
    return w.take();
  }

  std::string resources_list(const std::string& id) {
    bool truncated = false;
    JsonWriter w;
    w.begin_object().key("resources").begin_array();
    for (const std::string& p : roots_.traces(truncated)) {
      std::string_view name = p;
      if (size_t slash = name.rfind('/'); slash != std::string_view::npos)
        name.remove_prefix(slash + 1);
      w.begin_object()
          .field("uri", std::string(kFileScheme) + p)
          .field("name", name)
          .field("description", "summary of the trace " + p)
          .field("mimeType", "application/json")
          .end_object();
    }
    w.end_array().end_object();
    return result(id, w.str());
  }

  std::string resources_read(const std::string& id, dom::object params) {
    std::string_view uri;
    if (params["uri"].get(uri) != simdjson::SUCCESS)
      return error(id, kInvalidParams, "resources/read needs params.uri (a string)");
    if (!uri.starts_with(kFileScheme))
      return error(id, kResourceNotFound, "resource not found: " + std::string(uri));
    std::string path(uri.substr(kFileScheme.size()));
    Target t;
    std::string why;
    if (!roots_.resolve(path, t, why) || t.directory)
      return error(id, kResourceNotFound, why.empty() ? path + ": a directory, not a trace" : why);
    ToolReply r = tools_.open(path);
    if (r.error) return error(id, kResourceNotFound, r.text);
    JsonWriter w;
    w.begin_object().key("contents").begin_array();
    w.begin_object()
        .field("uri", uri)
        .field("mimeType", "application/json")
        .field("text", r.text)
        .end_object();
    w.end_array().end_object();
    return result(id, w.str());
  }

  dom::object empty_object() {
    if (!empty_ok_) {
      empty_ok_ = empty_parser_.parse(std::string_view("{}")).get(empty_) == simdjson::SUCCESS;
    }
    return empty_;
  }

  const McpOptions& options_;
  Roots& roots_;
  Tools tools_;
  dom::parser parser_;
  bool parser_ok_ = true;
  dom::parser empty_parser_;
  dom::object empty_;
  bool empty_ok_ = false;
};

}  // namespace

int run_server(const McpOptions& options, int in_fd, int out_fd) {
  Roots roots;
  serve::TraceStoreOptions store;
  store.kept_traces = options.kept_traces;
  store.max_input_bytes = options.max_input_bytes;
  store.cache_bytes = 64u << 20;
  store.analysis = AnalysisOptions{};  // the CLI's defaults: tools answer what --json prints
  for (const std::string& p : options.paths) {
    std::string error;
    if (!roots.add(p, store, error)) {
      std::string line = "mlprof mcp: " + error + "\n";
      write_all(STDERR_FILENO, line);
      return 2;
    }
  }
  Session session(options, roots);
  LineReader reader(in_fd, options.max_message_bytes);
  std::string line;
  for (;;) {
    LineReader::Status s = reader.next(line);
    if (s == LineReader::Status::kEnd) return 0;
    std::string reply;
    if (s == LineReader::Status::kTooLong) {
      reply =
          session.error("null", kInvalidRequest,
                        "message longer than " + std::to_string(options.max_message_bytes >> 20) +
                            " MiB skipped (mlprof mcp --max-message-mb)");
    } else {
      if (line.find_first_not_of(" \t") == std::string::npos) continue;  // blank line
      reply = session.handle(line);
    }
    if (reply.empty()) continue;
    reply += '\n';
    if (!write_all(out_fd, reply)) return 0;  // the client has gone
  }
}

}  // namespace mlprof::mcp
