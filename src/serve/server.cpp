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
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <mutex>
#include <thread>
#include <unordered_set>
#include <utility>

#include "mlprof/import.h"
#include "render/analysis_output.h"
#include "render/report.h"
#include "render/timeline_tiles.h"
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
// The API takes at most 3 parameters. Each one libmicrohttpd keeps costs ~70 bytes of the
// connection's memory: ~900 of them exhausted it and the request got no answer at all.
constexpr size_t kMaxQueryParams = 64;
using Clock = std::chrono::steady_clock;

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

// HTTP's own refusals of a request (405 method, 413 body, 414 URI) give their status here.
Reply error_reply(int status, std::string_view message) {
  Reply r;
  r.status = status;
  r.body = std::make_shared<const std::string>(error_json(message));
  return r;
}

// The HTTP status of an mlprof error comes from status.h's one mapping.
Reply error_reply(StatusCode code, std::string_view message) {
  return error_reply(error_mapping(code).http_status, message);
}

Reply reply_of(Lookup l, const char* type) {
  if (l.error != LookupError::kNone) {
    Reply r = error_reply(status_code(l.error), l.message);
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
  bool routed = false;     // route() ran (on the call after the headers: see on_request)
  bool suspended = false;  // a worker computes `reply`
  Reply reply;
};

using Job = std::function<Reply(const StillWanted&)>;

// One connection (libmicrohttpd's socket_context), for the header deadline and the eviction of
// slow clients. Guarded by Impl::conns_mu.
struct Conn {
  int fd = -1;
  Clock::time_point waiting_since;  // connected, or the previous request completed
  bool in_request = false;          // headers complete: a reply is being computed or sent
  bool shut = false;                // shut down by us: libmicrohttpd closes it on its next turn
};

// Why on_uri refused a request before libmicrohttpd parsed its query (con_cls tag).
enum Refusal : uintptr_t { kAccept = 0, kLongUri = 1, kManyParams = 2 };

// A query's whole number (an optional '-', at most 18 digits): false when absent or malformed.
bool whole_number(const char* text, int64_t& out) {
  if (text == nullptr) return false;
  std::string_view v(text);
  bool negative = v.starts_with('-');
  if (negative) v.remove_prefix(1);
  if (v.empty() || v.size() > 18 ||
      !std::all_of(v.begin(), v.end(), [](char ch) { return ch >= '0' && ch <= '9'; }))
    return false;
  out = 0;
  for (char ch : v) out = out * 10 + (ch - '0');
  if (negative) out = -out;
  return true;
}

uint64_t default_max_input(uint64_t asked) {
  if (asked != 0) return asked;
  if (const char* env = std::getenv("MLPROF_MAX_INPUT_MB"); env != nullptr && *env != '\0')
    return 0;  // load_trace reads it
  return std::min(kDefaultMaxInputBytes, max_input_bytes(ImportOptions{}));
}

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
  std::mutex conns_mu;
  std::condition_variable conns_cv;  // wakes the watchdog to stop
  std::unordered_set<Conn*> conns;
  size_t evict_at = 0;  // connections at which a new one evicts the slowest waiting one
  std::thread watchdog;
  std::atomic<int> busy{0}, max_busy{0};  // analysis jobs running now, and at most at once

  explicit Impl(ServeOptions o)
      : options(std::move(o)),
        store(options.dir,
              TraceStoreOptions{.cache_bytes = options.cache_bytes,
                                .max_input_bytes = default_max_input(options.max_input_bytes),
                                .graph_captures = options.graph_captures}),
        hosts(options.host, options.allow_hosts),
        workers(worker_count(options.workers)) {
    JsonWriter w;
    w.begin_object()
        .field("kind", "dashboard")
        .field("title", options.dir)
        .field("poll_ms", options.poll_ms)
        .field("tiles_above", options.tiles_above)
        .end_object();
    page = std::make_shared<const std::string>(
        render_web_page(WebPage{"dashboard", options.dir, w.take(), ""}));
  }

  ~Impl() { shutdown(); }

  void shutdown() {
    stopping = true;  // running jobs give up at their next step
    {
      std::lock_guard<std::mutex> lock(conns_mu);
      conns_cv.notify_all();
    }
    if (watchdog.joinable()) watchdog.join();
    workers.drain_and_join();  // every suspended connection is resumed
    lister.drain_and_join();
    if (daemon != nullptr) MHD_stop_daemon(daemon);  // closes the listening socket too
    daemon = nullptr;
  }

  // After the request line, before libmicrohttpd parses its query: a URI too long or with too
  // many parameters is refused here, and its query string is cut (the byte after '?' set to
  // NUL: libmicrohttpd 0.9.75 parses the arguments after this call, from this buffer), so the
  // parameters never fill the connection's memory. The refusal travels to on_request as con_cls
  // tagged with the low bit (never a heap pointer, whose low bit is 0), so nothing is allocated
  // for requests that end before on_request (e.g. a 431).
  static void* on_uri(void*, const char* uri, MHD_Connection*) {
    size_t len = std::strlen(uri);
    const char* q = std::strchr(uri, '?');
    size_t params = q == nullptr ? 0 : 1 + static_cast<size_t>(std::count(q, uri + len, '&'));
    uintptr_t refuse = len > kMaxUriBytes         ? kLongUri
                       : params > kMaxQueryParams ? kManyParams
                                                  : kAccept;
    if (refuse != kAccept && q != nullptr) const_cast<char*>(q)[1] = '\0';
    return reinterpret_cast<void*>((refuse << 1) | 1u);
  }
  static bool is_uri_tag(void* con_cls) { return (reinterpret_cast<uintptr_t>(con_cls) & 1u) != 0; }

  static Conn* conn_of(MHD_Connection* c) {
    const MHD_ConnectionInfo* i = MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return i != nullptr ? static_cast<Conn*>(i->socket_context) : nullptr;
  }

  // libmicrohttpd calls this once the headers are in, again once the (empty) body is read, and
  // again after a worker resumes the connection. A reply is queued on the second call or later:
  // one queued on the first call is "early" to libmicrohttpd, which then closes the connection
  // after it (Connection: close, and pipelined requests behind it are dropped). Only refusals
  // that end the connection anyway (413 for a body, 414) are answered on the first call.
  static MHD_Result on_request(void* cls, MHD_Connection* c, const char* url, const char* method,
                               const char*, const char*, size_t* upload_size, void** con_cls) {
    auto* self = static_cast<Impl*>(cls);
    if (*con_cls != nullptr && !is_uri_tag(*con_cls)) {
      auto* ex = static_cast<Exchange*>(*con_cls);
      *upload_size = 0;
      if (!ex->routed) {
        ex->routed = true;
        try {
          return self->route(c, ex, url, method);
        } catch (const std::exception& e) {
          return send_reply(
              c, error_reply(StatusCode::kInternal, std::string("internal error: ") + e.what()));
        }
      }
      if (!ex->suspended) return MHD_YES;
      ex->suspended = false;  // a worker resumed the connection
      return send_reply(c, ex->reply);
    }
    uintptr_t refused = reinterpret_cast<uintptr_t>(*con_cls) >> 1;
    auto* ex = new Exchange;
    *con_cls = ex;
    if (Conn* conn = conn_of(c)) {  // headers complete: the header deadline is met
      std::lock_guard<std::mutex> lock(self->conns_mu);
      conn->in_request = true;
    }
    if (refused == kLongUri)
      return send_reply(c, error_reply(414, "request URI longer than " +
                                                std::to_string(kMaxUriBytes) + " bytes"));
    if (refused == kManyParams)
      return send_reply(c, error_reply(414, "more than " + std::to_string(kMaxQueryParams) +
                                                " query parameters"));
    // Checked before any body is read: the API is read-only and takes no request bodies.
    const char* length = header(c, "Content-Length");
    if (header(c, "Transfer-Encoding") != nullptr ||
        (length != nullptr && std::string_view(length) != "0"))
      return send_reply(c, error_reply(413, "request bodies are not accepted"));
    return MHD_YES;
  }

  static void on_completed(void* cls, MHD_Connection* c, void** con_cls,
                           MHD_RequestTerminationCode) {
    if (!is_uri_tag(*con_cls)) delete static_cast<Exchange*>(*con_cls);
    *con_cls = nullptr;
    if (Conn* conn = conn_of(c)) {  // the next request's headers are due from now
      std::lock_guard<std::mutex> lock(static_cast<Impl*>(cls)->conns_mu);
      conn->in_request = false;
      conn->waiting_since = Clock::now();
    }
  }

  // Called on libmicrohttpd's thread, before it closes the socket (CLOSED): a descriptor in
  // `conns` is always the connection's own.
  static void on_connection(void* cls, MHD_Connection* c, void** socket_context,
                            MHD_ConnectionNotificationCode toe) {
    auto* self = static_cast<Impl*>(cls);
    std::lock_guard<std::mutex> lock(self->conns_mu);
    if (toe == MHD_CONNECTION_NOTIFY_CLOSED) {
      auto* conn = static_cast<Conn*>(*socket_context);
      self->conns.erase(conn);
      delete conn;
      *socket_context = nullptr;
      return;
    }
    if (toe != MHD_CONNECTION_NOTIFY_STARTED) return;
    auto* conn = new Conn{socket_of(c), Clock::now()};
    *socket_context = conn;
    // Small replies go out as soon as they are written (no Nagle delay on keep-alive requests).
    int yes = 1;
    if (conn->fd >= 0) ::setsockopt(conn->fd, IPPROTO_TCP, TCP_NODELAY, &yes, sizeof yes);
    // Near the cap, the connection that has waited longest for its request's headers makes
    // room: slow-header clients cannot keep new ones waiting in the backlog.
    if (self->conns.size() >= self->evict_at) {
      Conn* oldest = nullptr;
      for (Conn* o : self->conns)
        if (!o->in_request && !o->shut &&
            (oldest == nullptr || o->waiting_since < oldest->waiting_since))
          oldest = o;
      if (oldest != nullptr) shut(*oldest);
    }
    self->conns.insert(conn);
  }

  // Wakes libmicrohttpd (the socket reads as closed) and lets it close the connection itself;
  // the descriptor stays open until then, so it is never another connection's.
  static void shut(Conn& conn) {
    if (conn.fd >= 0) ::shutdown(conn.fd, SHUT_RDWR);
    conn.shut = true;
  }

  // Closes connections whose request line and headers take longer than header_timeout_s in
  // all (libmicrohttpd's own timeout restarts with every byte, so a drip never ends).
  void watch_headers() {
    const auto limit = std::chrono::seconds(options.header_timeout_s);
    std::unique_lock<std::mutex> lock(conns_mu);
    while (!stopping) {
      conns_cv.wait_for(lock, std::chrono::milliseconds(250));
      auto now = Clock::now();
      for (Conn* conn : conns)
        if (!conn->in_request && !conn->shut && now - conn->waiting_since > limit) shut(*conn);
    }
  }

  MHD_Result route(MHD_Connection* c, Exchange* ex, const std::string& path,
                   const std::string& method) {
    if (method != "GET" && method != "HEAD") {
      Reply r = error_reply(405, "the mlprof API is read-only");
      r.headers.emplace_back("Allow", "GET, HEAD");
      return send_reply(c, r);
    }
    const char* host = header(c, "Host");
    if (!hosts.allows(host != nullptr ? host : "")) {
      return send_reply(c, error_reply(StatusCode::kPermissionDenied,
                                       "Host '" + std::string(host) +
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
    if (path == "/api/profiler/progress") {  // answered here: never queued behind the load
      const char* trace = query(c, "trace");
      if (trace == nullptr)
        return send_reply(c, error_reply(StatusCode::kInvalidArgument, "missing ?trace=NAME"));
      return send_reply(c, reply_of(store.progress(trace), kJson));
    }
    if (path == "/api/status") {
      JsonWriter w;
      w.begin_object()
          .field("workers", worker_count(options.workers))
          .field("busy_workers", busy.load())
          .field("max_busy_workers", max_busy.load())
          .key("cache")
          .raw(store.cache_json())
          .end_object();
      Reply r;
      r.body = std::make_shared<const std::string>(w.take());
      return send_reply(c, r);
    }
    Job job;
    if (path == "/api/profiler/compare") {
      const char* base = query(c, "base");
      const char* next = query(c, "new");
      if (base == nullptr || next == nullptr)
        return send_reply(c,
                          error_reply(StatusCode::kInvalidArgument, "compare needs ?base=A&new=B"));
      job = [this, b = std::string(base), n = std::string(next)](const StillWanted& wanted) {
        return reply_of(store.compare(b, n, wanted), kJson);
      };
    } else if (path == "/api/ranks/groups") {
      job = [this](const StillWanted& wanted) {
        return reply_of(store.rank_groups(wanted), kJson);
      };
    } else if (path == "/api/profiler/ranks") {
      // ?group=N: the job group of /api/ranks/groups to analyse (default: the first).
      int64_t group = -1;
      if (const char* g = query(c, "group")) {
        char* end = nullptr;
        long long v = std::strtoll(g, &end, 10);
        if (*g == '\0' || *end != '\0' || v < 0 || v > 1'000'000)
          return send_reply(c, error_reply(StatusCode::kInvalidArgument,
                                           "group must be a job group's number (0, 1, ...)"));
        group = v;
      }
      job = [this, group](const StillWanted& wanted) {
        return reply_of(store.ranks(wanted, group), kJson);
      };
    } else if (path == "/api/profiler/timeline/tiles") {
      const char* trace = query(c, "trace");
      if (trace == nullptr)
        return send_reply(c, error_reply(StatusCode::kInvalidArgument, "missing ?trace=NAME"));
      int64_t t0 = 0, t1 = 0, px = 0;
      if (!whole_number(query(c, "t0"), t0) || !whole_number(query(c, "t1"), t1) ||
          !whole_number(query(c, "px"), px) || t1 <= t0 || px < 1 || px > kMaxTilePixels)
        return send_reply(c, error_reply(StatusCode::kInvalidArgument,
                                         "tiles need ?t0=NS&t1=NS (whole ns from the "
                                         "timeline's start, t0 < t1) and ?px=N (1 to " +
                                             std::to_string(kMaxTilePixels) + ")"));
      job = [this, t = std::string(trace), t0, t1, px](const StillWanted& wanted) {
        return reply_of(store.tile(t, t0, t1, static_cast<uint32_t>(px), wanted), kJson);
      };
    } else if (path.starts_with("/api/profiler/")) {
      std::string name = path.substr(std::string_view("/api/profiler/").size());
      bool events = name == "timeline/events";
      if (!events && !is_trace_analysis(name))
        return send_reply(c,
                          error_reply(StatusCode::kNotFound, "no endpoint /api/profiler/" + name));
      const char* trace = query(c, "trace");
      if (trace == nullptr)
        return send_reply(c, error_reply(StatusCode::kInvalidArgument, "missing ?trace=NAME"));
      if (name == "critical_path") {  // ?step=N or ?annotation=NAME[&instance=K]: that window
        std::optional<CriticalPathWindow> window;
        std::string error;
        if (!parse_critical_path_window(query(c, "step"), query(c, "annotation"),
                                        query(c, "instance"), window, error))
          return send_reply(c, error_reply(StatusCode::kInvalidArgument, error));
        if (window)
          return dispatch(c, ex, workers,
                          [this, t = std::string(trace), w = *window](const StillWanted& wanted) {
                            return reply_of(store.critical_path(t, w, wanted), kJson);
                          });
      }
      const char* hta = query(c, "hta_compatible");
      if (hta != nullptr && std::string_view(hta) == "1" && (name == "gpu" || name == "kernels"))
        return dispatch(c, ex, workers,
                        [this, t = std::string(trace), name](const StillWanted& wanted) {
                          return reply_of(store.hta(t, name, wanted), kJson);
                        });
      job = [this, t = std::string(trace), name, events](const StillWanted& wanted) {
        return reply_of(store.get(t, events ? "events" : name, wanted),
                        events ? "application/octet-stream" : kJson);
      };
    } else {
      return send_reply(c, error_reply(StatusCode::kNotFound, "no such page: " + path));
    }
    return dispatch(c, ex, workers, std::move(job));
  }

  Reply traces_reply() const {
    Listing listing = store.list();
    JsonWriter w;
    w.begin_object().field("dir", options.dir);
    if (listing.truncated)  // the page says so: files past the limit are not shown
      w.field("truncated", true)
          .field("max_files", static_cast<uint64_t>(listing.files.size()))
          .field("note", "only the first " + std::to_string(listing.files.size()) +
                             " trace files found are listed; the folder has more (serve a "
                             "subfolder to see the others)");
    w.key("traces").begin_array();
    for (const TraceFileInfo& f : listing.files) {
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
    bool queued = pool.submit([this, c, ex, job = std::move(job), wanted] {
      int now = ++busy;
      for (int seen = max_busy.load(); now > seen && !max_busy.compare_exchange_weak(seen, now);) {
      }
      try {
        ex->reply = job(wanted);
      } catch (const std::exception& e) {
        ex->reply = error_reply(StatusCode::kInternal, std::string("internal error: ") + e.what());
      }
      --busy;
      MHD_resume_connection(c);  // the last use of `ex` here: MHD may free it from now on
    });
    if (!queued) {
      ex->reply = error_reply(StatusCode::kUnavailable, "the server is stopping");
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
  impl_->evict_at = std::max<size_t>(1, size_t{max_connections} * 9 / 10);
  unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_AUTO | MHD_ALLOW_SUSPEND_RESUME;
  if (family == AF_INET6) flags |= MHD_USE_IPv6;
  impl_->daemon = MHD_start_daemon(
      flags, 0, nullptr, nullptr, &Impl::on_request, impl_.get(), MHD_OPTION_LISTEN_SOCKET,
      static_cast<MHD_socket>(fd), MHD_OPTION_CONNECTION_LIMIT, max_connections,
      MHD_OPTION_CONNECTION_TIMEOUT, static_cast<unsigned>(o.client_timeout_s),
      MHD_OPTION_CONNECTION_MEMORY_LIMIT, static_cast<size_t>(o.max_request_bytes),
      MHD_OPTION_NOTIFY_COMPLETED, &Impl::on_completed, impl_.get(), MHD_OPTION_NOTIFY_CONNECTION,
      &Impl::on_connection, impl_.get(), MHD_OPTION_URI_LOG_CALLBACK, &Impl::on_uri, nullptr,
      MHD_OPTION_END);
  if (impl_->daemon == nullptr) {
    ::close(fd);
    error = "cannot start the HTTP server on " + where;
    return -1;
  }
  impl_->watchdog = std::thread([this] { impl_->watch_headers(); });
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
