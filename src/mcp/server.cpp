#include "mcp/server.h"

#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <string_view>
#include <thread>
#include <utility>

#include "mcp/line_reader.h"
#include "mcp/roots.h"
#include "mcp/tools.h"
#include "trace/cancel.h"
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
constexpr int kServerBusy = -32000;                   // JSON-RPC's range for server errors
constexpr size_t kMaxQueued = 1024;                   // requests waiting behind the one running
constexpr size_t kMaxQueuedBytes = size_t{64} << 20;  // and their bytes

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

  // What the reader does with a message: answer it at once (a malformed message, ping), queue
  // it for the worker (a request), note a cancellation, or nothing (another notification, a
  // client's response).
  struct Classified {
    enum Kind { kReply, kQueue, kCancel, kIgnore } kind = kIgnore;
    std::string reply;  // kReply
    std::string id;     // kQueue: the request's id; kCancel: the cancelled request's
  };

  Classified classify(std::string_view line) {
    Classified c;
    c.kind = Classified::kReply;
    if (!parser_ok_) {
      c.reply = error("null", kParseError, "out of memory");
      return c;
    }
    simdjson::padded_string padded(line);
    dom::element root;
    simdjson::error_code ec = parser_.parse(padded).get(root);
    if (ec != simdjson::SUCCESS) {
      std::string why = ec == simdjson::DEPTH_ERROR
                            ? "nested deeper than " + std::to_string(options_.max_depth) + " levels"
                        : ec == simdjson::UTF8_ERROR ? "not valid UTF-8"
                                                     : simdjson::error_message(ec);
      c.reply = error("null", kParseError, "parse error: " + why);
      return c;
    }
    dom::object msg;
    if (root.get(msg) != simdjson::SUCCESS) {
      c.reply = error("null", kInvalidRequest, "a message is one JSON object (no batches)");
      return c;
    }
    dom::element id_el;
    bool has_id = msg["id"].get(id_el) == simdjson::SUCCESS;
    std::string id = "null";
    if (has_id) {
      if (!id_el.is_string() && !id_el.is_int64() && !id_el.is_uint64()) {
        c.reply = error("null", kInvalidRequest, "id must be a string or an integer");
        return c;
      }
      id = simdjson::minify(id_el);
    }
    std::string_view version, method;
    if (msg["jsonrpc"].get(version) != simdjson::SUCCESS || version != "2.0") {
      c.reply = error(id, kInvalidRequest, "jsonrpc must be \"2.0\"");
      return c;
    }
    if (msg["method"].get(method) != simdjson::SUCCESS) {
      dom::element ignored;
      bool response = msg["result"].get(ignored) == simdjson::SUCCESS ||
                      msg["error"].get(ignored) == simdjson::SUCCESS;
      if (response) return Classified{};  // an answer to a request: this server sends none
      c.reply = error(id, kInvalidRequest, "method must be a string");
      return c;
    }
    if (!has_id) {  // notifications need no answer; a cancellation names its request
      dom::element cancelled;
      if (method == "notifications/cancelled" &&
          msg["params"]["requestId"].get(cancelled) == simdjson::SUCCESS)
        return Classified{Classified::kCancel, "", simdjson::minify(cancelled)};
      return Classified{};
    }
    dom::element params_el;
    dom::object params;
    if (msg["params"].get(params_el) == simdjson::SUCCESS &&
        params_el.get(params) != simdjson::SUCCESS) {
      c.reply = error(id, kInvalidParams, "params must be an object");
      return c;
    }
    if (method == "ping") {  // answered even while a long call runs
      c.reply = result(id, "{}");
      return c;
    }
    return Classified{Classified::kQueue, "", id};
  }

  // The reply to a request classify() queued (it is valid: parsed again here, by this session's
  // own parser, as the reader's is parsing the next line meanwhile).
  std::string handle(std::string_view line, const serve::StillWanted& wanted) {
    simdjson::padded_string padded(line);
    dom::object msg;
    if (!parser_ok_ || parser_.parse(padded).get(msg) != simdjson::SUCCESS) return "";
    std::string id = simdjson::minify(msg["id"].value());
    std::string_view method = msg["method"].get_string().value();
    dom::object params = empty_object();
    dom::element params_el;
    if (msg["params"].get(params_el) == simdjson::SUCCESS) params = params_el.get_object().value();
    tools_.set_wanted(wanted);
    CancelScope cancel_scope(wanted);  // the long loops below ask it too
    try {
      return dispatch(id, method, params);
    } catch (const Cancelled&) {
      return "";                         // nobody waits for it
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
  // The reader (this thread) answers what needs no trace at once (malformed lines, ping) and
  // notes cancellations; one worker runs the requests in order. A cancelled request gets no
  // reply (MCP: the receiver should not answer it) and stops at its next check.
  Session reader_session(options, roots);
  Session worker_session(options, roots);
  std::mutex out_mu;
  auto send = [&](std::string reply) {
    if (reply.empty()) return;
    reply += '\n';
    std::lock_guard<std::mutex> lock(out_mu);
    write_all(out_fd, reply);  // a client that has gone closes stdin too
  };
  std::mutex mu;
  std::condition_variable cv;
  std::deque<std::pair<std::string, std::string>> queue;  // (line, id)
  size_t queued_bytes = 0;
  bool end = false;
  std::string running;  // the id of the request being handled ("" when none)
  std::atomic<bool> cancelled{false};
  std::thread worker([&] {
    serve::StillWanted wanted = [&] { return !cancelled.load(std::memory_order_relaxed); };
    for (;;) {
      std::pair<std::string, std::string> next;
      {
        std::unique_lock<std::mutex> lock(mu);
        cv.wait(lock, [&] { return end || !queue.empty(); });
        if (queue.empty()) return;
        next = std::move(queue.front());
        queue.pop_front();
        queued_bytes -= next.first.size();
        running = next.second;
        cancelled = false;
      }
      std::string reply;
      try {  // handle() answers its own failures; this is the last guard of the thread
        reply = worker_session.handle(next.first, wanted);
      } catch (...) {
        reply = worker_session.error(next.second, -32603, "internal error");
      }
      {
        std::lock_guard<std::mutex> lock(mu);
        running.clear();
        if (cancelled) reply.clear();
      }
      send(std::move(reply));
    }
  });
  LineReader reader(in_fd, options.max_message_bytes);
  std::string line;
  for (;;) {
    LineReader::Status s = reader.next(line);
    if (s == LineReader::Status::kEnd) break;
    if (s == LineReader::Status::kTooLong) {
      send(reader_session.error("null", kInvalidRequest,
                                "message longer than " +
                                    std::to_string(options.max_message_bytes >> 20) +
                                    " MiB skipped (mlprof mcp --max-message-mb)"));
      continue;
    }
    if (line.find_first_not_of(" \t") == std::string::npos) continue;  // blank line
    Session::Classified c = reader_session.classify(line);
    if (c.kind == Session::Classified::kReply) {
      send(std::move(c.reply));
    } else if (c.kind == Session::Classified::kCancel) {
      std::lock_guard<std::mutex> lock(mu);
      if (!running.empty() && running == c.id) cancelled = true;
      // A request still queued is dropped.
      std::erase_if(queue, [&](const auto& q) {
        if (q.second != c.id) return false;
        queued_bytes -= q.first.size();
        return true;
      });
    } else if (c.kind == Session::Classified::kQueue) {
      std::unique_lock<std::mutex> lock(mu);
      if (queue.size() >= kMaxQueued || queued_bytes + line.size() > kMaxQueuedBytes) {
        size_t waiting = queue.size();
        lock.unlock();
        send(reader_session.error(c.id, kServerBusy,
                                  "busy: " + std::to_string(waiting) +
                                      " requests are waiting; send the next when one is answered"));
        continue;
      }
      queued_bytes += line.size();
      queue.emplace_back(line, c.id);
      cv.notify_one();
    }
  }
  {
    std::lock_guard<std::mutex> lock(mu);  // what was asked before the end is still answered
    end = true;
    cv.notify_one();
  }
  worker.join();
  return 0;
}

}  // namespace mlprof::mcp
