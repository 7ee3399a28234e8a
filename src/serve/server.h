// `mlprof serve`: the dashboard page and the REST API over one directory of traces.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

namespace mlprof::serve {

struct ServeOptions {
  std::string dir = ".";
  std::string host = "127.0.0.1";  // loopback unless the user asks otherwise
  int port = 6970;                 // 0 = any free port
  size_t max_request_bytes = 64 * 1024;
  int poll_ms = 2000;  // how often the page looks for new or changed traces
};

class Server {
 public:
  explicit Server(ServeOptions options);
  ~Server();
  // Binds the socket; returns the port (useful with port 0) or -1 with `error` set.
  int bind(std::string& error);
  // Serves until stop() (blocking).
  void run();
  void stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace mlprof::serve
