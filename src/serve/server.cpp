#include "serve/server.h"

#include <httplib.h>
#include <sys/socket.h>

#include "mlprof/json_writer.h"
#include "mlprof/render/report.h"
#include "mlprof/render/web_page.h"
#include "serve/trace_store.h"

namespace mlprof::serve {
namespace {

constexpr const char* kJson = "application/json";

std::string error_json(std::string_view message) {
  JsonWriter w;
  w.begin_object().field("error", message).end_object();
  return w.take();
}

void send_error(httplib::Response& res, int status, std::string_view message) {
  res.status = status;
  res.set_content(error_json(message), kJson);
}

int status_of(LookupError e) {
  switch (e) {
    case LookupError::kNone:
      return 200;
    case LookupError::kBadName:
      return 400;
    case LookupError::kOutside:
      return 403;
    case LookupError::kNotFound:
      return 404;
    case LookupError::kLoadFailed:
      return 422;  // the file is there but is not a valid trace
    case LookupError::kIncomplete:
      return 503;  // probably still being written: retry
  }
  return 500;
}

// Endpoints of /api/profiler/NAME that map to one analysis of one trace.
bool is_trace_analysis(const std::string& name) {
  for (const std::string& n : report_analysis_names())
    if (n == name) return true;
  return false;
}

}  // namespace

struct Server::Impl {
  ServeOptions options;
  TraceStore store;
  httplib::Server http;
  std::string page;

  explicit Impl(ServeOptions o) : options(std::move(o)), store(options.dir) {
    JsonWriter w;
    w.begin_object()
        .field("kind", "dashboard")
        .field("title", options.dir)
        .field("poll_ms", options.poll_ms)
        .end_object();
    page = render_web_page(WebPage{"dashboard", options.dir, w.take(), ""});
    routes();
  }

  void reply(httplib::Response& res, const Lookup& l, const char* type) {
    if (l.error != LookupError::kNone) {
      if (l.error == LookupError::kIncomplete) res.set_header("Retry-After", "2");
      send_error(res, status_of(l.error), l.message);
      return;
    }
    res.set_content(l.body, type);
  }

  int listen_fd = -1;
  void routes() {
    // Hardening measured for the library decision (docs/serve.md).
    http.set_tcp_nodelay(true);
    http.set_socket_options([this](int sock) {
      int yes = 1;
      setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);  // no SO_REUSEPORT
      listen_fd = sock;
    });
    http.new_task_queue = [] { return new httplib::ThreadPool(64); };
    http.set_read_timeout(5);
    http.set_keep_alive_timeout(2);
    http.set_keep_alive_max_count(100);
    http.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
      if (req.has_header("Range")) {
        const_cast<httplib::Request&>(req).ranges.clear();
        res.set_header("Connection", "close");
        send_error(res, 416, "Range is not supported");
        return httplib::Server::HandlerResponse::Handled;
      }
      if (req.has_header("Transfer-Encoding") ||
          req.get_header_value<uint64_t>("Content-Length") > options.max_request_bytes) {
        res.set_header("Connection", "close");
        send_error(res, 413, "request bodies are not accepted");
        return httplib::Server::HandlerResponse::Handled;
      }
      return httplib::Server::HandlerResponse::Unhandled;
    });
    http.set_payload_max_length(options.max_request_bytes);
    http.set_default_headers({{"X-Content-Type-Options", "nosniff"},
                              {"Cache-Control", "no-store"},
                              {"Referrer-Policy", "no-referrer"}});
    http.Get("/", [this](const httplib::Request&, httplib::Response& res) {
      res.set_content(page, "text/html; charset=utf-8");
    });
    http.Get("/api/traces", [this](const httplib::Request&, httplib::Response& res) {
      JsonWriter w;
      w.begin_object().field("dir", options.dir).key("traces").begin_array();
      for (const TraceFileInfo& f : store.list()) {
        w.begin_object()
            .field("name", f.name)
            .field("size", f.size)
            .field("mtime_ns", f.mtime_ns)
            .end_object();
      }
      w.end_array().end_object();
      res.set_content(w.take(), kJson);
    });
    http.Get("/api/profiler/compare", [this](const httplib::Request& req, httplib::Response& res) {
      if (!req.has_param("base") || !req.has_param("new"))
        return send_error(res, 400, "compare needs ?base=A&new=B");
      reply(res, store.compare(req.get_param_value("base"), req.get_param_value("new")), kJson);
    });
    http.Get("/api/profiler/ranks", [this](const httplib::Request&, httplib::Response& res) {
      reply(res, store.ranks(), kJson);
    });
    http.Get("/api/profiler/timeline/events", [this](const httplib::Request& req,
                                                     httplib::Response& res) {
      if (!req.has_param("trace")) return send_error(res, 400, "missing ?trace=NAME");
      reply(res, store.get(req.get_param_value("trace"), "events"), "application/octet-stream");
    });
    http.Get(R"(/api/profiler/([a-z_]+))",
             [this](const httplib::Request& req, httplib::Response& res) {
               std::string name = req.matches[1];
               if (!is_trace_analysis(name))
                 return send_error(res, 404, "no endpoint /api/profiler/" + name);
               if (!req.has_param("trace")) return send_error(res, 400, "missing ?trace=NAME");
               reply(res, store.get(req.get_param_value("trace"), name), kJson);
             });
    // Anything else: 404 for reads, 405 for writes (the API is read-only).
    auto not_found = [](const httplib::Request& req, httplib::Response& res) {
      send_error(res, 404, "no such page: " + req.path);
    };
    auto read_only = [](const httplib::Request&, httplib::Response& res) {
      res.set_header("Allow", "GET");
      send_error(res, 405, "the mlprof API is read-only");
    };
    http.Get(R"(/.*)", not_found);
    http.Post(R"(/.*)", read_only);
    http.Put(R"(/.*)", read_only);
    http.Delete(R"(/.*)", read_only);
    http.Patch(R"(/.*)", read_only);
    http.set_error_handler([](const httplib::Request&, httplib::Response& res) {
      if (res.body.empty()) {
        const char* what = res.status == 413   ? "request too large"
                           : res.status == 414 ? "request URI too long"
                           : res.status == 400 ? "bad request"
                                               : "error";
        res.set_content(error_json(what), kJson);
      }
    });
    http.set_exception_handler(
        [](const httplib::Request&, httplib::Response& res, std::exception_ptr ep) {
          std::string what = "internal error";
          try {
            if (ep) std::rethrow_exception(ep);
          } catch (const std::exception& e) {
            what = std::string("internal error: ") + e.what();
          } catch (...) {
          }
          send_error(res, 500, what);
        });
  }
};

Server::Server(ServeOptions options) : impl_(std::make_unique<Impl>(std::move(options))) {}
Server::~Server() = default;

int Server::bind(std::string& error) {
  int port = impl_->options.port;
  if (port == 0) {
    port = impl_->http.bind_to_any_port(impl_->options.host);
  } else if (!impl_->http.bind_to_port(impl_->options.host, port)) {
    port = -1;
  }
  if (port > 0 && impl_->listen_fd >= 0) ::listen(impl_->listen_fd, 1024);
  if (port <= 0) {
    error = "cannot listen on " + impl_->options.host + ":" + std::to_string(impl_->options.port) +
            " (in use, or not an address of this machine)";
    return -1;
  }
  return port;
}

void Server::run() { impl_->http.listen_after_bind(); }
void Server::stop() { impl_->http.stop(); }

}  // namespace mlprof::serve
