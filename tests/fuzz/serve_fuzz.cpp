// libFuzzer target for `mlprof serve`'s request handling: each input is sent as raw bytes (a
// request line, headers, maybe a body, maybe several requests) to a real Server running in this
// process on a loopback port, over a directory of small traces. libmicrohttpd parses the request;
// the route, the query arguments, the Host check, the trace-name checks and the analyses are
// mlprof's. Oracles, besides ASan/UBSan: every reply is HTTP ("HTTP/1.x NNN"), one comes within
// 10 s, nothing from outside the directory is ever served (a trace beside it, reachable through
// a symlink inside and "../" names, holds a marker that must never appear in a reply), and the
// Host check itself is also called directly on the input's first line (pure, cheap).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cctype>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <thread>

#include "serve/host_check.h"
#include "serve/server.h"

namespace fs = std::filesystem;

namespace {

constexpr std::string_view kMarker = "OUTSIDE_SERVE_DIR_7c1e";

std::string tiny_trace(const std::string& op) {
  std::string events;
  for (int i = 0; i < 8; ++i) {
    if (i) events += ",";
    events += R"({"ph":"X","cat":"cpu_op","pid":1,"tid":1,"name":")" + op + R"(","ts":)" +
              std::to_string(10 * i) + R"(,"dur":5,"tts":)" + std::to_string(10 * i) +
              R"(,"tdur":3})";
  }
  events += R"(,{"ph":"X","cat":"kernel","pid":0,"tid":7,"name":"k","ts":3,"dur":4})";
  return R"({"traceEvents":[)" + events + "]}";
}

struct Env {
  fs::path root;
  int port = -1;
};

// The server, started once and left running (never destroyed: libFuzzer exits the process).
Env& env() {
  static Env* e = [] {
    auto* e = new Env;
    std::string t = (fs::temp_directory_path() / "mlprof-serve-fuzz-XXXXXX").string();
    if (!::mkdtemp(t.data())) std::abort();
    e->root = t;
    fs::path dir = e->root / "dir";
    fs::create_directories(dir / "sub");
    std::ofstream(dir / "a.json") << tiny_trace("op_a");
    std::ofstream(dir / "sub" / "b.json") << tiny_trace("op_b");
    std::ofstream(dir / ".hidden.json") << tiny_trace("op_hidden");
    std::ofstream(dir / "broken.json") << R"({"traceEvents":[{"ph":)";
    std::ofstream(e->root / "secret.json") << tiny_trace(std::string(kMarker));
    std::error_code ec;
    fs::create_symlink("../secret.json", dir / "link.json", ec);
    mlprof::serve::ServeOptions o;
    o.dir = dir.string();
    o.port = 0;
    o.workers = 2;
    o.client_timeout_s = 5;
    o.cache_bytes = 8u << 20;
    auto* server = new mlprof::serve::Server(o);
    std::string error;
    e->port = server->bind(error);
    if (e->port < 0) {
      std::fprintf(stderr, "serve_fuzz: %s\n", error.c_str());
      std::abort();
    }
    std::thread([server] { server->run(); }).detach();
    return e;
  }();
  return *e;
}

// Whether `reply` holds a whole response (headers, then Content-Length bytes; no body for HEAD).
bool reply_complete(const std::string& reply, bool head) {
  size_t end = reply.find("\r\n\r\n");
  if (end == std::string::npos) return false;
  if (head) return true;
  size_t length = 0;
  for (size_t at = 0; at < end;) {
    size_t eol = reply.find("\r\n", at);
    std::string line = reply.substr(at, eol - at);
    for (char& c : line) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (line.starts_with("content-length:")) length = std::strtoull(line.c_str() + 15, nullptr, 10);
    at = eol + 2;
  }
  return reply.size() >= end + 4 + length;
}

// Sends `request` and reads the reply. A request whose headers are not all there is
// half-closed at once; one that is waits for its reply, and is half-closed after 300 ms of
// silence (serve then abandons the work: the client went away). A reply begun and not ended
// within 10 s is a hang.
std::string exchange(int port, std::string_view request) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) std::abort();
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    std::perror("serve_fuzz: connect");
    std::abort();
  }
  size_t sent = 0;
  while (sent < request.size()) {
    ssize_t n = ::send(fd, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) break;  // the server may close early (a refused request): not a failure
    sent += static_cast<size_t>(n);
  }
  bool whole = request.find("\r\n\r\n") != std::string_view::npos ||
               request.find("\n\n") != std::string_view::npos;
  bool head = request.starts_with("HEAD ");
  bool half_closed = !whole;
  if (half_closed) ::shutdown(fd, SHUT_WR);
  std::string reply;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  char buf[16384];
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                    deadline - std::chrono::steady_clock::now())
                    .count();
    if (left <= 0) {
      std::fprintf(stderr, "serve_fuzz: no end of the exchange within 10 s (%zu bytes)\n",
                   reply.size());
      __builtin_trap();
    }
    pollfd p{fd, POLLIN, 0};
    // An incomplete request gets a reply (an error) at once or not at all: libmicrohttpd may
    // keep a half-closed connection open until its timeout, which is not worth waiting for.
    int ready = ::poll(&p, 1, half_closed ? (reply.empty() ? 50 : static_cast<int>(left)) : 300);
    if (ready == 0) {
      if (half_closed && reply.empty()) break;
      if (!half_closed) ::shutdown(fd, SHUT_WR);
      half_closed = true;
      continue;
    }
    if (ready < 0) continue;
    ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) break;  // closed (or reset after a refused request)
    reply.append(buf, static_cast<size_t>(n));
    if (reply_complete(reply, head)) break;
  }
  ::close(fd);
  return reply;
}

std::string percent_decoded(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    auto hex = [](char c) {
      return c >= '0' && c <= '9'                     ? c - '0'
             : (c | 0x20) >= 'a' && (c | 0x20) <= 'f' ? (c | 0x20) - 'a' + 10
                                                      : -1;
    };
    if (s[i] == '%' && i + 2 < s.size() && hex(s[i + 1]) >= 0 && hex(s[i + 2]) >= 0) {
      out += static_cast<char>(hex(s[i + 1]) * 16 + hex(s[i + 2]));
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in(reinterpret_cast<const char*>(data), size);
  // The Host check on its own, for every binding serve offers.
  std::string_view first = in.substr(0, in.find('\n'));
  static const mlprof::serve::HostCheck checks[] = {
      {"127.0.0.1", {}}, {"::1", {"example.test"}}, {"0.0.0.0", {}}, {"[::]", {"*"}}};
  for (const auto& c : checks) (void)c.allows(first);

  Env& e = env();
  std::string reply = exchange(e.port, in);
  if (!reply.empty() && !(reply.starts_with("HTTP/1.0 ") || reply.starts_with("HTTP/1.1 "))) {
    std::fprintf(stderr, "serve_fuzz: not an HTTP reply: %.80s\n", reply.c_str());
    __builtin_trap();
  }
  // (An input that names the marker itself gets it echoed in an error message.)
  if (reply.find(kMarker) != std::string::npos &&
      percent_decoded(in).find(kMarker) == std::string::npos) {
    std::fprintf(stderr, "serve_fuzz: a reply holds data from outside the served directory\n");
    __builtin_trap();
  }
  return 0;
}
