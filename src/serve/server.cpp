#include "serve/server.h"

#include <microhttpd.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <functional>
#include <mutex>
#include <thread>
#include <utility>

#include "render/analysis_output.h"
#include "render/report.h"
#include "render/web_page.h"
#include "serve/host_check.h"
#include "serve/trace_store.h"
#include "serve/worker_pool.h"
#include "trace/json_writer.h"

namespace mlprof::serve {
namespace {

constexpr const char* kJson = "application/json";
constexpr int kListenBacklog = 1024;  // bursts of connections wait here, not in SYN retries
constexpr size_t kMaxUriBytes = 8192;

struct Reply {
  int status = 200;
  Body body;  // shared with the result cache: a thousand connections sending it hold one copy
  std::string type = kJson;
  std::vector<std::pair<std::string, std::string>> headers;
};

std::string error_json(std::string_view message) {
  JsonWriter w;
  w.begin_object().field("error", message).end_object();
  return w.take();
}

Reply error_reply(int status, std::string_view message) {
  Reply r;
  r.status = status;
  r.body = std::make_shared<const std::string>(error_json(message));
  return r;
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
    case LookupError::kAbandoned:
      return 503;  // nobody reads it: the client has gone, or the server is stopping
  }
  return 500;
}

Reply reply_of(Lookup l, const char* type) {
  if (l.error != LookupError::kNone) {
    Reply r = error_reply(status_of(l.error), l.message);
    if (l.error == LookupError::kIncomplete) r.headers.emplace_back("Retry-After", "2");
    return r;
  }
  Reply r;
  r.body = std::move(l.body);
  r.type = type;
  return r;
}

// Endpoints of /api/profiler/NAME that map to one analysis of one trace.
bool is_trace_analysis(const std::string& name) {
  for (AnalysisId id : report_analyses())
    if (analysis_info(id).name == name) return true;
  return false;
}

void release_body(void* body) { delete static_cast<Body*>(body); }

MHD_Result send_reply(MHD_Connection* c, const Reply& r) {
  auto* body = new Body(r.body);  // the response holds a reference until it is sent
  MHD_Response* resp = MHD_create_response_from_buffer_with_free_callback_cls(
      (*body)->size(), const_cast<char*>((*body)->data()), &release_body, body);
  if (resp == nullptr) {
    delete body;
    return MHD_NO;
  }
  MHD_add_response_header(resp, "Content-Type", r.type.c_str());
  MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
  MHD_add_response_header(resp, "Cache-Control", "no-store");
  MHD_add_response_header(resp, "Referrer-Policy", "no-referrer");
  for (const auto& [k, v] : r.headers) MHD_add_response_header(resp, k.c_str(), v.c_str());
  MHD_Result ok = MHD_queue_response(c, static_cast<unsigned>(r.status), resp);
  MHD_destroy_response(resp);
  return ok;
}

const char* header(MHD_Connection* c, const char* name) {
  return MHD_lookup_connection_value(c, MHD_HEADER_KIND, name);
}

const char* query(MHD_Connection* c, const char* name) {
  return MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, name);
}

int socket_of(MHD_Connection* c) {
  const MHD_ConnectionInfo* i = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
  return i != nullptr ? i->connect_fd : -1;
}

// Whether the client still holds its connection: a closed or reset socket reads as hang-up.
bool peer_open(int fd) {
  pollfd p{fd, POLLRDHUP, 0};
  if (::poll(&p, 1, 0) < 0) return true;
  return (p.revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL)) == 0;
}

unsigned worker_count(unsigned asked) {
  return asked != 0 ? asked : std::max(2u, std::thread::hardware_concurrency());
}

// Every connection is a descriptor, and so is every trace being read: raise the soft limit on
// descriptors to fit `wanted` connections plus kSpareFds (Debian's default soft limit is
// 1,024), or accept fewer connections, so traces can always be opened.
constexpr rlim_t kSpareFds = 128;
unsigned connection_limit(unsigned wanted) {
  rlimit rl{};
  if (::getrlimit(RLIMIT_NOFILE, &rl) != 0) return wanted;
  rlim_t need = wanted + kSpareFds;
  if (rl.rlim_cur < need) {
    rl.rlim_cur = std::min(need, rl.rlim_max);
    ::setrlimit(RLIMIT_NOFILE, &rl);
    ::getrlimit(RLIMIT_NOFILE, &rl);
  }
  if (rl.rlim_cur >= need) return wanted;
  return static_cast<unsigned>(rl.rlim_cur > 2 * kSpareFds ? rl.rlim_cur - kSpareFds
                                                           : rl.rlim_cur / 2);
}

// One request's state (libmicrohttpd's con_cls): the reply a worker computed while the
// connection was suspended.
struct Exchange {
  bool suspended = false;
  Reply reply;
};

using Job = std::function<Reply(const StillWanted&)>;

}  // namespace

struct Server::Impl {
  ServeOptions options;
  TraceStore store;
  HostCheck hosts;
  Body page;
  WorkerPool workers;    // analyses
  WorkerPool lister{1};  // /api/traces: never queued behind analyses
  MHD_Daemon* daemon = nullptr;
  std::atomic<bool> stopping{false};
  std::mutex stop_mu;
  std::condition_variable stop_cv;
  bool stop_requested = false;

  explicit Impl(ServeOptions o)
      : options(std::move(o)),
        store(options.dir, TraceStoreOptions{.cache_bytes = options.cache_bytes}),
        hosts(options.host, options.allow_hosts),
        workers(worker_count(options.workers)) {
    JsonWriter w;
    w.begin_object()
        .field("kind", "dashboard")
        .field("title", options.dir)
        .field("poll_ms", options.poll_ms)
        .end_object();
    page = std::make_shared<const std::string>(
        render_web_page(WebPage{"dashboard", options.dir, w.take(), ""}));
  }

  ~Impl() { shutdown(); }

  void shutdown() {
    stopping = true;           // running jobs give up at their next step
    workers.drain_and_join();  // every suspended connection is resumed
    lister.drain_and_join();
    if (daemon != nullptr) MHD_stop_daemon(daemon);  // closes the listening socket too
    daemon = nullptr;
  }

  // Before the request line is parsed: the raw URI's length, for the 414 check. It travels to
  // on_request as con_cls tagged with the low bit (never a heap pointer, whose low bit is 0), so
  // nothing is allocated for requests that end before on_request (e.g. a 431).
  static void* on_uri(void*, const char* uri, MHD_Connection*) {
    return reinterpret_cast<void*>((std::strlen(uri) << 1) | 1u);
  }
  static bool is_uri_length(void* con_cls) {
    return (reinterpret_cast<uintptr_t>(con_cls) & 1u) != 0;
  }

  static MHD_Result on_request(void* cls, MHD_Connection* c, const char* url, const char* method,
                               const char*, const char*, size_t* upload_size, void** con_cls) {
    auto* self = static_cast<Impl*>(cls);
    if (*con_cls != nullptr && !is_uri_length(*con_cls)) {  // a worker resumed the connection
      auto* ex = static_cast<Exchange*>(*con_cls);
      *upload_size = 0;
      if (!ex->suspended) return MHD_YES;
      ex->suspended = false;
      return send_reply(c, ex->reply);
    }
    size_t uri_bytes = reinterpret_cast<uintptr_t>(*con_cls) >> 1;
    auto* ex = new Exchange;
    *con_cls = ex;
    if (uri_bytes > kMaxUriBytes) return send_reply(c, error_reply(414, "request URI too long"));
    try {
      return self->route(c, ex, url, method);
    } catch (const std::exception& e) {
      return send_reply(c, error_reply(500, std::string("internal error: ") + e.what()));
    }
  }

  static void on_completed(void*, MHD_Connection*, void** con_cls, MHD_RequestTerminationCode) {
    if (!is_uri_length(*con_cls)) delete static_cast<Exchange*>(*con_cls);
    *con_cls = nullptr;
  }

  // Small replies go out as soon as they are written (no Nagle delay on keep-alive requests).
  static void on_connection(void*, MHD_Connection* c, void**, MHD_ConnectionNotificationCode toe) {
    if (toe != MHD_CONNECTION_NOTIFY_STARTED) return;
    int fd = socket_of(c);
    int yes = 1;
    if (fd >= 0) ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &yes, sizeof yes);
  }

  MHD_Result route(MHD_Connection* c, Exchange* ex, const std::string& path,
                   const std::string& method) {
    // Checked before any body is read: the API is read-only and takes no request bodies.
    const char* length = header(c, "Content-Length");
    if (header(c, "Transfer-Encoding") != nullptr ||
        (length != nullptr && std::string_view(length) != "0"))
      return send_reply(c, error_reply(413, "request bodies are not accepted"));
    if (method != "GET" && method != "HEAD") {
      Reply r = error_reply(405, "the mlprof API is read-only");
      r.headers.emplace_back("Allow", "GET, HEAD");
      return send_reply(c, r);
    }
    const char* host = header(c, "Host");
    if (!hosts.allows(host != nullptr ? host : "")) {
      return send_reply(c, error_reply(403, "Host '" + std::string(host) +
                                                "' is not served (DNS rebinding?): mlprof serve "
                                                "answers loopback names and its --host; add "
                                                "names with --allow-host"));
    }
    if (path == "/") {
      Reply r;
      r.body = page;
      r.type = "text/html; charset=utf-8";
      return send_reply(c, r);
    }
    if (path == "/api/traces")  // off the HTTP thread: a big directory takes ~0.1 s to list
      return dispatch(c, ex, lister, [this](const StillWanted&) { return traces_reply(); });
    Job job;
    if (path == "/api/profiler/compare") {
      const char* base = query(c, "base");
      const char* next = query(c, "new");
      if (base == nullptr || next == nullptr)
        return send_reply(c, error_reply(400, "compare needs ?base=A&new=B"));
      job = [this, b = std::string(base), n = std::string(next)](const StillWanted& wanted) {
        return reply_of(store.compare(b, n, wanted), kJson);
      };
    } else if (path == "/api/profiler/ranks") {
      job = [this](const StillWanted& wanted) { return reply_of(store.ranks(wanted), kJson); };
    } else if (path.starts_with("/api/profiler/")) {
      std::string name = path.substr(std::string_view("/api/profiler/").size());
      bool events = name == "timeline/events";
      if (!events && !is_trace_analysis(name))
        return send_reply(c, error_reply(404, "no endpoint /api/profiler/" + name));
      const char* trace = query(c, "trace");
      if (trace == nullptr) return send_reply(c, error_reply(400, "missing ?trace=NAME"));
      if (name == "critical_path") {  // ?step=N or ?annotation=NAME[&instance=K]: that window
        std::optional<CriticalPathWindow> window;
        std::string error;
        if (!parse_critical_path_window(query(c, "step"), query(c, "annotation"),
                                        query(c, "instance"), window, error))
          return send_reply(c, error_reply(400, error));
        if (window)
          return dispatch(c, ex, workers,
                          [this, t = std::string(trace), w = *window](const StillWanted& wanted) {
                            return reply_of(store.critical_path(t, w, wanted), kJson);
                          });
      }
      job = [this, t = std::string(trace), name, events](const StillWanted& wanted) {
        return reply_of(store.get(t, events ? "events" : name, wanted),
                        events ? "application/octet-stream" : kJson);
      };
    } else {
      return send_reply(c, error_reply(404, "no such page: " + path));
    }
    return dispatch(c, ex, workers, std::move(job));
  }

  Reply traces_reply() const {
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
    Reply r;
    r.body = std::make_shared<const std::string>(w.take());
    return r;
  }

  // Suspends the connection and computes its reply on a worker, which resumes it when done.
  // The worker's job asks `wanted` between its steps and gives up once the client has gone.
  MHD_Result dispatch(MHD_Connection* c, Exchange* ex, WorkerPool& pool, Job job) {
    int fd = socket_of(c);
    StillWanted wanted = [this, fd] { return !stopping && (fd < 0 || peer_open(fd)); };
    ex->suspended = true;
    MHD_suspend_connection(c);
    bool queued = pool.submit([c, ex, job = std::move(job), wanted] {
      try {
        ex->reply = job(wanted);
      } catch (const std::exception& e) {
        ex->reply = error_reply(500, std::string("internal error: ") + e.what());
      }
      MHD_resume_connection(c);  // the last use of `ex` here: MHD may free it from now on
    });
    if (!queued) {
      ex->reply = error_reply(503, "the server is stopping");
      MHD_resume_connection(c);
    }
    return MHD_YES;
  }
};

Server::Server(ServeOptions options) : impl_(std::make_unique<Impl>(std::move(options))) {}
Server::~Server() = default;

int Server::bind(std::string& error) {
  const ServeOptions& o = impl_->options;
  std::string where = o.host + ":" + std::to_string(o.port);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  if (int rc = ::getaddrinfo(o.host.c_str(), std::to_string(o.port).c_str(), &hints, &found)) {
    error = "cannot listen on " + where + ": " + ::gai_strerror(rc);
    return -1;
  }
  int fd = -1;
  int err = 0;
  int family = AF_INET;
  for (addrinfo* a = found; a != nullptr && fd < 0; a = a->ai_next) {
    fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) {
      err = errno;
      continue;
    }
    // SO_REUSEADDR lets a restarted serve bind while old connections sit in TIME_WAIT; never
    // SO_REUSEPORT, so a second serve on a port in use fails instead of sharing it.
    int yes = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    if (::bind(fd, a->ai_addr, a->ai_addrlen) == 0 && ::listen(fd, kListenBacklog) == 0) {
      family = a->ai_family;
      break;
    }
    err = errno;
    ::close(fd);
    fd = -1;
  }
  ::freeaddrinfo(found);
  if (fd < 0) {
    error = "cannot listen on " + where + ": " + std::strerror(err) +
            (err == EADDRINUSE ? " (another program, or another mlprof serve, has this port)" : "");
    return -1;
  }
  sockaddr_storage addr{};
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  int port = family == AF_INET6 ? ntohs(reinterpret_cast<sockaddr_in6*>(&addr)->sin6_port)
                                : ntohs(reinterpret_cast<sockaddr_in*>(&addr)->sin_port);
  unsigned max_connections = connection_limit(o.max_connections);
  unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_AUTO | MHD_ALLOW_SUSPEND_RESUME;
  if (family == AF_INET6) flags |= MHD_USE_IPv6;
  impl_->daemon = MHD_start_daemon(
      flags, 0, nullptr, nullptr, &Impl::on_request, impl_.get(), MHD_OPTION_LISTEN_SOCKET,
      static_cast<MHD_socket>(fd), MHD_OPTION_CONNECTION_LIMIT, max_connections,
      MHD_OPTION_CONNECTION_TIMEOUT, static_cast<unsigned>(o.client_timeout_s),
      MHD_OPTION_CONNECTION_MEMORY_LIMIT, static_cast<size_t>(o.max_request_bytes),
      MHD_OPTION_NOTIFY_COMPLETED, &Impl::on_completed, nullptr, MHD_OPTION_NOTIFY_CONNECTION,
      &Impl::on_connection, nullptr, MHD_OPTION_URI_LOG_CALLBACK, &Impl::on_uri, nullptr,
      MHD_OPTION_END);
  if (impl_->daemon == nullptr) {
    ::close(fd);
    error = "cannot start the HTTP server on " + where;
    return -1;
  }
  return port;
}

void Server::run() {
  std::unique_lock<std::mutex> lock(impl_->stop_mu);
  impl_->stop_cv.wait(lock, [this] { return impl_->stop_requested; });
  lock.unlock();
  impl_->shutdown();
}

void Server::stop() {
  {
    std::lock_guard<std::mutex> lock(impl_->stop_mu);
    impl_->stop_requested = true;
  }
  impl_->stop_cv.notify_all();
}

}  // namespace mlprof::serve
