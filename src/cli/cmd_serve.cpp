#include <signal.h>
#include <sys/stat.h>

#include <cstdio>
#include <thread>

#include "cli/command.h"
#include "cli/graph_captures.h"
#include "serve/server.h"

namespace mlprof::cli {
namespace {

int run_serve(serve::ServeOptions o, const std::vector<std::string>& captures) {
  struct stat st {};
  if (::stat(o.dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    std::fprintf(stderr, "mlprof serve: %s: not a directory\n", o.dir.c_str());
    return kExitBadInput;
  }
  // Loaded once, joined to every trace's replays (a capture_traces/ in the directory is named in
  // a note, as the other commands do, and not loaded unasked).
  GraphsOptions graphs;
  if (!load_graph_captures(o.dir + "/.", captures, graphs)) return kExitBadInput;
  o.graph_captures = std::move(graphs.captures);
  // Ctrl-C and SIGTERM stop the server cleanly: a thread waits for them (no work in a handler).
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  serve::Server server(o);
  std::string error;
  int port = server.bind(error);
  if (port < 0) {
    std::fprintf(stderr, "mlprof serve: %s\n", error.c_str());
    return kExitFailure;
  }
  std::string shown_host = o.host.find(':') != std::string::npos ? "[" + o.host + "]" : o.host;
  std::fprintf(stderr, "mlprof serve: http://%s:%d/ serving traces in %s\n", shown_host.c_str(),
               port, o.dir.c_str());
  if (o.host != "127.0.0.1" && o.host != "localhost" && o.host != "::1")
    std::fprintf(stderr,
                 "mlprof serve: warning: listening beyond loopback (%s): anyone who can "
                 "reach it can read these traces\n",
                 o.host.c_str());
  std::fflush(stderr);
  std::thread waiter([&server, set]() {
    int sig = 0;
    sigwait(&set, &sig);
    server.stop();
  });
  server.run();  // returns once the waiter has called stop()
  waiter.join();
  return kExitOk;
}

MLPROF_REGISTER_COMMAND("serve", "Dashboard and REST API (/api/...) for the traces in a directory",
                        [](CLI::App& sub) -> std::function<int()> {
                          auto o = std::make_shared<serve::ServeOptions>();
                          auto captures = std::make_shared<std::vector<std::string>>();
                          sub.add_option("dir", o->dir, "directory of traces (default .)");
                          sub.add_option("--capture", *captures,
                                         "graph capture pass (a capture_traces/ DIR or a FILE, "
                                         "repeatable) joined to every trace's CUDA/HIP graph "
                                         "replays")
                              ->allow_extra_args(false);
                          sub.add_option("--port", o->port, "TCP port (0 = any free port)")
                              ->check(CLI::Range(0, 65535));
                          sub.add_option("--host", o->host,
                                         "address to listen on (default 127.0.0.1, loopback only)");
                          sub.add_option("--allow-host", o->allow_hosts,
                                         "also answer requests whose Host header is NAME "
                                         "(repeatable; '*' = any; default: loopback names and "
                                         "--host only, against DNS rebinding)")
                              ->allow_extra_args(false);
                          sub.add_option("--client-timeout", o->client_timeout_s,
                                         "seconds a silent connection is kept (default 10)")
                              ->check(CLI::Range(1u, 3600u));
                          sub.add_option("--header-timeout", o->header_timeout_s,
                                         "seconds a request's line and headers may take in all, "
                                         "however slowly they arrive (default 10)")
                              ->check(CLI::Range(1u, 3600u));
                          sub.add_option("--max-connections", o->max_connections,
                                         "connections at once (default 1000); near it, the one "
                                         "waiting longest for its headers is closed")
                              ->check(CLI::Range(2u, 1000000u));
                          sub.add_option_function<uint64_t>(
                                 "--max-input-mb",
                                 [o](uint64_t mb) { o->max_input_bytes = mb << 20; },
                                 "decompressed MiB of one trace file read at most; larger "
                                 "files answer 413 (default 512, or MLPROF_MAX_INPUT_MB)")
                              ->check(CLI::Range(uint64_t{1}, uint64_t{1} << 30));
                          sub.add_option_function<size_t>(
                                 "--cache-mb", [o](size_t mb) { o->cache_bytes = mb << 20; },
                                 "analysis results and timeline tiles kept in memory, MiB, "
                                 "least recently used dropped first (default 256)")
                              ->check(CLI::Range(size_t{1}, size_t{1} << 20));
                          sub.add_option("--tiles-above", o->tiles_above,
                                         "the Timeline tab draws level-of-detail tiles for traces "
                                         "with more slices than this (default 200000; 0 = always)");
                          return [o, captures]() { return run_serve(*o, *captures); };
                        });

}  // namespace
}  // namespace mlprof::cli
