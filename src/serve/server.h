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

#include "mlprof/analyze/graphs.h"

namespace mlprof::serve {

// serve's own default input limit: one request parses one trace (two for compare) of at most
// this much JSON, 0.7 to 1.3 bytes of memory per byte (docs/serve.md#limits).
constexpr uint64_t kDefaultMaxInputBytes = uint64_t{512} << 20;

struct ServeOptions {
  std::string dir = ".";
  std::string host = "127.0.0.1";  // loopback unless the user asks otherwise
  int port = 6970;                 // 0 = any free port
  // Request line + headers of one request (libmicrohttpd's per-connection memory); request
  // bodies are refused: the API is read-only.
  size_t max_request_bytes = 64 * 1024;
  int poll_ms = 2000;              // how often the page looks for new or changed traces
  unsigned client_timeout_s = 10;  // a connection silent this long is closed
  // A request's line and headers must arrive within this many seconds of the connection (or of
  // the previous reply on a keep-alive connection), however steadily they trickle in.
  unsigned header_timeout_s = 10;
  // Connections at once. Near the cap (9 in 10 taken) a new connection closes the one that has
  // waited longest for its request headers, so slow clients cannot take every slot.
  unsigned max_connections = 1000;
  // Decompressed bytes of one trace file read at most (413 past it); 0 = MLPROF_MAX_INPUT_MB
  // when set, else kDefaultMaxInputBytes (or the machine's memory when smaller).
  uint64_t max_input_bytes = 0;
  unsigned workers = 0;             // analysis threads; 0 = the cores, at least 2
  size_t cache_bytes = 256u << 20;  // analysis results kept (JSON and timeline tiles)
  // The dashboard's timeline draws level-of-detail tiles (/api/profiler/timeline/tiles) for a
  // trace with more slices than this, instead of receiving every slice.
  uint64_t tiles_above = 200'000;
  std::vector<std::string> allow_hosts;  // Host names answered besides loopback and --host
  // `--capture DIR|FILE`: graph capture passes joined to every trace's graph replays (each tab,
  // the CUDA graphs one included, charges a matched replay's kernels to the captured ops).
  std::vector<GraphCaptureInput> graph_captures;
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
