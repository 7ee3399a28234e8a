// `mlprof serve`: the dashboard page and the REST API over one directory of traces.
// HTTP is libmicrohttpd (one event-loop thread, bounded per-connection memory, idle timeouts);
// analyses run on a worker pool while their connection is suspended. docs/serve.md has the
// security model and the measurements behind the choice of library.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace mlprof::serve {

struct ServeOptions {
  std::string dir = ".";
  std::string host = "127.0.0.1";  // loopback unless the user asks otherwise
  int port = 6970;                 // 0 = any free port
  // Request line + headers of one request (libmicrohttpd's per-connection memory); request
  // bodies are refused: the API is read-only.
  size_t max_request_bytes = 64 * 1024;
  int poll_ms = 2000;              // how often the page looks for new or changed traces
  unsigned client_timeout_s = 10;  // a connection silent this long is closed
  unsigned max_connections = 1000;
  unsigned workers = 0;                  // analysis threads; 0 = the cores, at least 2
  size_t cache_bytes = 256u << 20;       // analysis results kept
  std::vector<std::string> allow_hosts;  // Host names answered besides loopback and --host
};

class Server {
 public:
  explicit Server(ServeOptions options);
  ~Server();
  // Binds the socket; returns the port (useful with port 0) or -1 with `error` set.
  int bind(std::string& error);
  // Serves until stop() (blocking).
  void run();
  // Safe from any thread (a signal-waiting thread).
  void stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace mlprof::serve
