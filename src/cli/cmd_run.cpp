// `mlprof run [--memory] [--gpu] [--rss MS] [-o OUT.mlprof] -- CMD ARGS...`
//
// Starts CMD with the capture libraries preloaded (LD_PRELOAD for host memory,
// CUDA_INJECTION64_PATH for CUPTI), forwards SIGINT/SIGTERM/SIGHUP/SIGQUIT, samples RSS and NVML
// from this process while it runs, then reads the raw per-process files, symbolizes, builds one
// Trace, saves it and prints the reports. Children of CMD (fork/exec) are followed: the preload
// is inherited, each process writes its own file, and mlprof (a child subreaper) waits for all
// of them. The exit code is CMD's (128+N when it died of signal N).
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "cli/command.h"
#include "cli/run_files.h"
#include "import/capture/gpu_capture.h"
#include "import/capture/memory_capture.h"
#include "mlprof/analyze/heap_stream.h"
#include "mlprof/native_format.h"
#include "record/nvml/nvml_sampler.h"
#include "trace/formats/raw_memory_format.h"
#include "trace/json_writer.h"
#include "trace/output_file.h"
#include "trace/units.h"

namespace mlprof::cli {
namespace {

namespace fs = std::filesystem;

struct RunOptions {
  bool memory = false;
  bool gpu = false;
  int rss_ms = 0;
  int gpu_ms = 100;
  int max_depth = 48;
  std::string out;
  bool keep_raw = false;
  bool events = false;    // keep every malloc/free as a memory row (memory grows with events)
  double max_raw_mb = 0;  // per process; 0 = no limit
  bool quiet = false;
  size_t top = 10;
};

volatile sig_atomic_t g_child_pid = 0;
// After CMD exits, while mlprof waits for the processes it left behind: the signals asking
// mlprof to stop waiting (how many, and the last one).
volatile sig_atomic_t g_waiting_for_orphans = 0;
volatile sig_atomic_t g_stop_requests = 0;
volatile sig_atomic_t g_stop_signal = 0;

// Signals a user sends to mlprof go to the command. A terminal's Ctrl-C already reached the
// whole foreground process group (si_code SI_KERNEL), so it is not sent twice.
void forward_signal(int sig, siginfo_t* info, void*) {
  if (g_waiting_for_orphans) {
    g_stop_signal = sig;
    g_stop_requests = g_stop_requests + 1;
    return;
  }
  if (g_child_pid <= 0) return;
  if (info && info->si_code == SI_KERNEL) return;
  kill(g_child_pid, sig);
}

void install_forwarding() {
  struct sigaction sa {};
  sa.sa_sigaction = forward_signal;
  sa.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&sa.sa_mask);
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT}) sigaction(sig, &sa, nullptr);
}

int64_t mono_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t{ts.tv_sec} * 1000000000 + ts.tv_nsec;
}

std::string self_dir() {
  std::error_code ec;
  fs::path p = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string(".") : p.parent_path().string();
}

// The capture library next to the mlprof binary (build tree) or in ../lib/mlprof (installed).
std::string find_library(const char* file, const char* env_override) {
  if (const char* e = std::getenv(env_override); e && *e) return e;
  std::string dir = self_dir();
  for (const std::string& cand : {dir + "/" + file, dir + "/../lib/mlprof/" + file}) {
    if (access(cand.c_str(), R_OK) == 0) return fs::weakly_canonical(cand).string();
  }
  return {};
}

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

int64_t rss_bytes(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/statm");
  int64_t size = 0, resident = 0;
  if (!(in >> size >> resident)) return -1;
  return resident * sysconf(_SC_PAGESIZE);
}

// Sends `sig` to this process's children (the orphans re-parented to us, a subreaper); returns
// how many there were.
size_t signal_children(int sig) {
  size_t n = 0;
  pid_t self = getpid();
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator("/proc", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::string stat = read_text(entry.path().string() + "/stat");
    size_t paren = stat.rfind(')');
    if (paren == std::string::npos || paren + 4 > stat.size()) continue;
    long ppid = std::strtol(stat.c_str() + paren + 4, nullptr, 10);  // ") S PPID"
    if (ppid != self) continue;
    kill(static_cast<pid_t>(std::stol(name)), sig);
    ++n;
  }
  return n;
}

// Watches the raw capture while the command runs: says when it passes 1 GiB, 2 GiB, 4 GiB...
// and when the file system holding it has less than 1 GiB left.
class RawVolumeWatch {
 public:
  explicit RawVolumeWatch(std::string dir) : dir_(std::move(dir)) {}
  void check() {
    uint64_t bytes = 0;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(dir_, ec)) {
      std::error_code size_ec;
      uint64_t n = e.file_size(size_ec);
      if (!size_ec) bytes += n;
    }
    if (bytes >= next_report_) {
      std::fprintf(stderr, "mlprof run: the capture has written %s of raw data so far (%s)\n",
                   format_bytes(static_cast<double>(bytes)).c_str(), dir_.c_str());
      while (next_report_ <= bytes) next_report_ *= 2;
    }
    struct statvfs vfs;
    if (!warned_space_ && statvfs(dir_.c_str(), &vfs) == 0 &&
        uint64_t{vfs.f_bavail} * vfs.f_frsize < (uint64_t{1} << 30)) {
      std::fprintf(stderr,
                   "mlprof run: less than 1 GiB left on the file system of %s (TMPDIR): the "
                   "capture may be cut short\n",
                   dir_.c_str());
      warned_space_ = true;
    }
  }

 private:
  std::string dir_;
  uint64_t next_report_ = uint64_t{1} << 30;
  bool warned_space_ = false;
};

std::string default_output(const std::string& cmd, pid_t pid) {
  std::string base = fs::path(cmd).filename().string();
  if (base.empty()) base = "run";
  return base + "." + std::to_string(pid) + ".mlprof";
}

void remove_tree(const std::string& dir) {
  std::error_code ec;
  fs::remove_all(dir, ec);
}

// The capture's events streamed into the heap report (no row per event): see HeapStream.
class HeapSink : public MemoryEventSink {
 public:
  explicit HeapSink(const HeapOptions& o) : options_(o) {}
  void begin(int64_t first_ts, int64_t last_ts, size_t stacks) override {
    stream = std::make_unique<HeapStream>(options_, first_ts, last_ts, stacks);
  }
  void alloc(uint32_t process, uint32_t track, int64_t ts, uint64_t addr, uint64_t bytes,
             uint32_t stack) override {
    stream->alloc(process, track, ts, addr, bytes, stack);
  }
  void free(uint32_t process, uint32_t track, int64_t ts, uint64_t addr) override {
    stream->free(process, track, ts, addr);
  }
  std::unique_ptr<HeapStream> stream;

 private:
  HeapOptions options_;
};

// Summary, host heap, memory and bottlenecks reports from one analysis stage. `heap`: the
// report computed from the capture stream (the trace then holds only the peak's and the leaks'
// rows), handed to the stage instead of being recomputed from the trace.
std::string render_reports(const Trace& trace, const RunOptions& opt, const HeapResult* heap) {
  AnalysisOptions o;
  o.heap.top = opt.top;
  AnalysisSet set(trace, o);
  if (heap) set.provide_heap(*heap);
  std::vector<AnalysisId> ids;
  ids.push_back(AnalysisId::kSummary);
  if (opt.memory) {
    ids.push_back(AnalysisId::kHeap);
    if (!heap) ids.push_back(AnalysisId::kMemory);
  }
  ids.push_back(AnalysisId::kBottlenecks);
  set.compute(ids);
  std::string text;
  for (AnalysisId id : ids) text += "\n" + render_analysis_text(set, id) + "\n";
  return text;
}

// One `mlprof run`, phase by phase (run_command calls them in order): what a phase finds is
// read by the ones after it.
struct RunSession {
  RunSession(const RunOptions& o, const std::vector<std::string>& c) : opt(o), cmd(c) {}
  const RunOptions& opt;
  const std::vector<std::string>& cmd;
  std::string preload, cupti;  // the capture libraries ("": not asked for, or not built)
  std::unique_ptr<NvmlSampler> nvml;
  std::string out_dir;  // where the default output goes when the current directory is read-only
  std::string run_dir;  // the raw capture files
  pid_t child = -1;
  int64_t start_ns = 0, end_ns = 0;
  int status = 0;  // CMD's, as waitpid gives it
  std::vector<std::pair<int64_t, int64_t>> rss;
  std::unordered_map<int64_t, std::string> maps_fallback;
  MemoryCaptureStats mem_stats;
  GpuCaptureStats gpu_stats;
  std::optional<HeapResult> heap;
  std::string command_line, out;
  int exit_code = 0;
  Trace trace;
  Status saved = Status::ok();
  std::string reports;

  int find_libraries();
  int prepare_output();
  int start_command();
  [[noreturn]] void exec_command(pid_t parent);
  void sample_until_exit();
  void wait_for_orphans();
  void build_trace(Progress& progress);
  void save_trace(Progress& progress);
  std::string summary_text() const;
};

// The preload and CUPTI libraries, and NVML (--gpu: without it the CPU capture goes on).
int RunSession::find_libraries() {
  if (opt.memory) {
    preload = find_library("libmlprof_preload.so", "MLPROF_PRELOAD_LIB");
    if (preload.empty()) {
      std::fprintf(stderr,
                   "mlprof run: libmlprof_preload.so not found next to the mlprof binary (%s)\n",
                   self_dir().c_str());
      return kExitFailure;
    }
  }
  if (opt.gpu) {
    cupti = find_library("libmlprof_cupti.so", "MLPROF_CUPTI_LIB");
    // MLPROF_NVML_LIB: another NVML library (the tests' fake, tests/gpu_fakes/fake_nvml.cpp).
    const char* nvml_lib = std::getenv("MLPROF_NVML_LIB");
    auto s = nvml_lib && *nvml_lib ? NvmlSampler::open(nvml_lib) : NvmlSampler::open();
    if (!s) {
      std::fprintf(stderr, "mlprof run: --gpu: no GPU metrics (%s); CPU capture continues\n",
                   s.error().c_str());
    } else {
      nvml = std::move(s.value());
    }
    if (cupti.empty())
      std::fprintf(stderr,
                   "mlprof run: --gpu: libmlprof_cupti.so was not built (no CUDA toolkit at build "
                   "time); no kernel capture\n");
  }

  return kExitOk;
}

int RunSession::prepare_output() {
  // Where the capture goes, checked before CMD runs: a bad -o stops here, not after the run.
  // The default (CMD.PID.mlprof in the current directory) moves to TMPDIR when the current
  // directory cannot be written.
  if (!opt.out.empty()) {
    if (Status s = check_output_path(opt.out); !s.is_ok()) {
      std::fprintf(stderr, "mlprof run: cannot write the capture: %s\n", s.message().c_str());
      return kExitBadInput;
    }
  } else if (!check_output_path(default_output(cmd[0], getpid())).is_ok()) {
    out_dir = fs::path(fallback_output_path("x")).parent_path().string() + "/";
    std::fprintf(stderr,
                 "mlprof run: the current directory is not writable; the capture goes to %s\n",
                 out_dir.c_str());
  }

  if (size_t stale = remove_stale_run_dirs(); stale && !opt.quiet)
    std::fprintf(stderr, "mlprof run: removed %zu raw capture director%s left by killed runs\n",
                 stale, stale == 1 ? "y" : "ies");
  std::string dir_error;
  run_dir = make_run_dir(dir_error);
  if (run_dir.empty()) {
    std::fprintf(stderr, "mlprof run: %s\n", dir_error.c_str());
    return kExitFailure;
  }

  return kExitOk;
}

int RunSession::start_command() {
  // Orphaned grandchildren are re-parented to us, so we can wait for them to finish writing.
  prctl(PR_SET_CHILD_SUBREAPER, 1);
  std::fflush(nullptr);
  start_ns = mono_ns();
  pid_t parent = getpid();
  child = fork();
  if (child < 0) {
    std::fprintf(stderr, "mlprof run: fork failed: %s\n", std::strerror(errno));
    remove_tree(run_dir);
    return kExitFailure;
  }
  if (child == 0) exec_command(parent);
  g_child_pid = child;
  install_forwarding();
  return kExitOk;
}

// In the child: the capture's environment, then CMD.
void RunSession::exec_command(pid_t parent) {
  // If mlprof is killed (SIGKILL: no handler runs), the command goes too instead of running on
  // unobserved; the check covers mlprof dying before the prctl.
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent) _exit(127);
  setenv(rawmem::kEnvRunDir, run_dir.c_str(), 1);
  setenv(rawmem::kEnvMaxDepth, std::to_string(opt.max_depth).c_str(), 1);
  if (opt.max_raw_mb > 0)
    setenv(rawmem::kEnvMaxRawBytes,
           std::to_string(static_cast<uint64_t>(opt.max_raw_mb * 1048576.0)).c_str(), 1);
  if (!preload.empty()) {
    const char* old = std::getenv("LD_PRELOAD");
    std::string v = preload + (old && *old ? std::string(":") + old : std::string());
    setenv("LD_PRELOAD", v.c_str(), 1);
  }
  if (!cupti.empty()) setenv("CUDA_INJECTION64_PATH", cupti.c_str(), 1);
  std::vector<char*> argv;
  for (const auto& a : cmd) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  execvp(argv[0], argv.data());
  std::fprintf(stderr, "mlprof run: cannot run %s: %s\n", cmd[0].c_str(), std::strerror(errno));
  _exit(127);
}

void RunSession::sample_until_exit() {
  // Sample while it runs: RSS (--rss), NVML (--gpu), and the child's memory map (used to
  // symbolize when it dies before writing its own).
  int tick_ms = 50;
  if (opt.rss_ms > 0) tick_ms = std::min(tick_ms, opt.rss_ms);
  if (nvml) tick_ms = std::min(tick_ms, opt.gpu_ms);
  int64_t next_rss = 0, next_gpu = 0, next_maps = 0, next_disk = 0;
  RawVolumeWatch disk_watch(run_dir);
  bool main_done = false;
  while (!main_done) {
    pid_t r = waitpid(child, &status, WNOHANG);
    if (r == child) break;
    if (r < 0 && errno != EINTR) break;
    int64_t now = mono_ns();
    if (opt.rss_ms > 0 && now >= next_rss) {
      int64_t v = rss_bytes(child);
      if (v >= 0) rss.emplace_back(now, v);
      next_rss = now + int64_t{opt.rss_ms} * 1000000;
    }
    if (nvml && now >= next_gpu) {
      nvml->sample(now);
      next_gpu = now + int64_t{opt.gpu_ms} * 1000000;
    }
    if (opt.memory && now >= next_maps) {
      std::string m = read_text("/proc/" + std::to_string(child) + "/maps");
      if (!m.empty()) maps_fallback[child] = std::move(m);
      next_maps = now + 500000000;
    }
    if (now >= next_disk) {  // a long run must not fill the disk unnoticed
      disk_watch.check();
      next_disk = now + 1000000000;
    }
    timespec req{0, static_cast<long>(tick_ms) * 1000000};
    nanosleep(&req, nullptr);
  }
  g_child_pid = 0;
  end_ns = mono_ns();
}

void RunSession::wait_for_orphans() {
  // Descendants that outlive CMD: wait for them, they are still writing their files. A signal
  // (Ctrl-C, SIGTERM...) stops the wait: it is passed on to them, and those still running 2 s
  // later (or at a second signal) are killed, so the capture is written.
  bool said_waiting = false;
  g_waiting_for_orphans = 1;
  int handled_requests = 0;
  int64_t kill_at = 0;
  bool killing = false;
  for (;;) {
    int st = 0;
    pid_t r = waitpid(-1, &st, WNOHANG);
    if (r > 0) continue;
    if (r < 0) break;  // ECHILD: none left
    if (!said_waiting && !opt.quiet) {
      std::fprintf(stderr,
                   "mlprof run: waiting for processes started by %s to exit (Ctrl-C to stop "
                   "them)...\n",
                   cmd[0].c_str());
      said_waiting = true;
    }
    if (int requests = g_stop_requests; requests != handled_requests) {
      if (handled_requests == 0) {
        size_t n = signal_children(g_stop_signal);
        std::fprintf(stderr,
                     "mlprof run: interrupted: sent signal %d to %zu process(es) started by %s; "
                     "killing any left in 2 s\n",
                     static_cast<int>(g_stop_signal), n, cmd[0].c_str());
        kill_at = mono_ns() + 2000000000;
      } else {
        killing = true;
      }
      handled_requests = requests;
    }
    if (kill_at && mono_ns() >= kill_at) killing = true;
    if (killing) signal_children(SIGKILL);  // again each turn: their children come to us
    timespec req{0, 20000000};
    nanosleep(&req, nullptr);
  }
  g_waiting_for_orphans = 0;
}

// The raw files (memory, CUPTI), the samples and the command's lifetime into one Trace.
void RunSession::build_trace(Progress& progress) {
  TraceBuilder b;
  HeapOptions heap_options;
  heap_options.top = opt.top;
  HeapSink heap_sink(heap_options);
  if (opt.memory) {
    Status s = add_memory_captures(run_dir, b, maps_fallback, mem_stats,
                                   opt.events ? nullptr : &heap_sink);
    if (!s.is_ok()) {
      progress.clear();
      std::fprintf(stderr, "mlprof run: %s\n", s.message().c_str());
    }
    if (heap_sink.stream) heap_sink.stream->add_rows(b);
  }
  if (!cupti.empty()) {
    Status s = add_gpu_captures(run_dir, b, gpu_stats);
    if (!s.is_ok()) {
      progress.clear();
      std::fprintf(stderr, "mlprof run: %s\n", s.message().c_str());
    }
  }
  uint32_t main_proc = b.process(child);
  if (b.trace().processes[main_proc].name == 0)
    b.trace().processes[main_proc].name = b.intern(fs::path(cmd[0]).filename().string());
  if (!opt.memory) {  // still give the run an anchor: the command's lifetime
    b.add_slice(b.thread_track(main_proc, child), start_ns, end_ns - start_ns,
                b.intern("process " + fs::path(cmd[0]).filename().string()),
                b.intern("mlprof.run"));
  }
  if (!rss.empty()) {
    uint32_t series = b.counter_series(main_proc, b.intern("rss"));
    b.trace().counter_series[series].unit = b.intern("bytes");
    for (auto [ts, v] : rss) b.add_counter(series, ts, static_cast<double>(v));
  }
  if (nvml) nvml->add_to_trace(b, b.process_labeled("GPU metrics (NVML)"));
  for (const auto& a : cmd) command_line += (command_line.empty() ? "" : " ") + a;
  out = opt.out.empty() ? out_dir + default_output(cmd[0], child) : opt.out;
  trace = std::move(b).finish();
  trace.meta.dropped_events += mem_stats.dropped;  // the summary warns of them
  // Counted by trackers that could not write (their status symlinks): the notes say why.
  trace.meta.dropped_events += mem_stats.lost_allocations + mem_stats.lost_frees;
  if (heap_sink.stream) {
    heap = heap_sink.stream->result(trace);
    mem_stats.unmatched_frees = mem_stats.frees - heap->frees;  // the raw frees, until here
    mem_stats.frees = heap->frees;
    heap_sink.stream.reset();  // its live blocks are in the report and the rows now
  }
  trace.meta.source = out;
  trace.meta.format = "mlprof";
  {
    std::string json_cmd;  // arguments need not be UTF-8: escape() makes the JSON valid
    JsonWriter::escape(json_cmd, command_line);
    trace.meta.extra.emplace_back("command", json_cmd);
    trace.meta.extra.emplace_back("exit_code", std::to_string(exit_code));
    if (heap)  // which memory rows the file holds (docs/run.md)
      trace.meta.extra.emplace_back("mlprof_memory_rows", "\"peak and exit\"");
    if (!cupti.empty()) {  // what the GPU capture lost, kept with the trace
      trace.meta.dropped_events += gpu_stats.dropped_records;  // the summary warns of it
      trace.meta.extra.emplace_back("gpu_dropped_records",
                                    std::to_string(gpu_stats.dropped_records));
      trace.meta.extra.emplace_back("gpu_bad_timestamps", std::to_string(gpu_stats.bad_timestamps));
    }
  }
}

void RunSession::save_trace(Progress& progress) {
  // The file is written on a second thread while the reports are computed: both only read the
  // trace, and on a big capture each takes a good share of the post-processing.
  progress.stage(opt.quiet ? "saving the trace" : "saving the trace and computing the reports");
  std::thread saver([&] { saved = save_native(trace, out); });
  if (!opt.quiet) reports = render_reports(trace, opt, heap ? &*heap : nullptr);
  saver.join();
  progress.done();
  bool keep_raw = opt.keep_raw;
  if (!saved.is_ok()) {  // the path went bad during the run (disk full, directory removed...)
    std::string fallback = fallback_output_path(out);
    Status again = save_native(trace, fallback);
    if (again.is_ok()) {
      std::fprintf(stderr, "mlprof run: cannot save %s: %s; saved the capture to %s instead\n",
                   out.c_str(), saved.message().c_str(), fallback.c_str());
      out = fallback;
      saved = again;
    } else {
      std::fprintf(stderr, "mlprof run: cannot save %s: %s (nor %s: %s)\n", out.c_str(),
                   saved.message().c_str(), fallback.c_str(), again.message().c_str());
      keep_raw = true;  // the raw files are then the only copy of the capture
    }
  }
  if (keep_raw) {
    std::fprintf(stderr, "mlprof run: raw capture files kept in %s\n", run_dir.c_str());
  } else {
    remove_tree(run_dir);
  }
}

std::string RunSession::summary_text() const {
  std::string text;
  text += "\n== mlprof run: " + command_line + " (exit code " + std::to_string(exit_code) + ", " +
          format_duration_ns(static_cast<double>(end_ns - start_ns)) + ")\n";
  if (saved.is_ok()) text += "   trace: " + out + "\n";
  if (opt.memory) {
    text += "   memory capture: " + std::to_string(mem_stats.files) + " process(es), " +
            std::to_string(mem_stats.allocations) + " allocations, " +
            std::to_string(mem_stats.frees) + " frees, " + std::to_string(mem_stats.stacks) +
            " distinct stacks";
    if (mem_stats.lost_allocations || mem_stats.lost_frees)
      text += "; NOT recorded: " + std::to_string(mem_stats.lost_allocations) + " allocations, " +
              std::to_string(mem_stats.lost_frees) + " frees (see the notes)";
    text += "\n";
    text += "   raw capture: " + format_bytes(static_cast<double>(mem_stats.raw_bytes)) +
            " written by the program's tracker";
    if (heap)
      text += "; the trace keeps the " + std::to_string(trace.memory.size()) +
              " rows of the blocks live at the peak and at exit (--events: every event)";
    text += "\n";
    if (mem_stats.unmatched_frees)
      text += "   (" + std::to_string(mem_stats.unmatched_frees) +
              " frees of blocks allocated before tracking started were ignored)\n";
  }
  if (!cupti.empty()) {
    text += "   GPU capture: " + std::to_string(gpu_stats.kernels) + " kernels, " +
            std::to_string(gpu_stats.memcpys) + " memcpys, " + std::to_string(gpu_stats.memsets) +
            " memsets, " + std::to_string(gpu_stats.syncs) + " syncs, " +
            std::to_string(gpu_stats.api_calls) + " CUDA API calls, " +
            std::to_string(gpu_stats.flows) + " launch->GPU links";
    if (gpu_stats.dropped_records)
      text += ", " + std::to_string(gpu_stats.dropped_records) + " records dropped by CUPTI";
    text += "\n";
  }
  if (nvml)
    text += "   NVML: " + std::to_string(nvml->samples()) + " samples of " +
            std::to_string(nvml->device_count()) + " GPU(s)\n";
  for (const auto& n : mem_stats.notes) text += "   note: " + n + "\n";
  for (const auto& n : gpu_stats.notes) text += "   note: " + n + "\n";
  text += reports;
  return text;
}

int run_command(const RunOptions& opt, const std::vector<std::string>& cmd) {
  if (cmd.empty()) {
    std::fprintf(stderr,
                 "mlprof run: no command given (usage: mlprof run [options] -- CMD ARGS...)\n");
    return kExitBadInput;
  }
  RunSession run(opt, cmd);
  if (int rc = run.find_libraries(); rc != kExitOk) return rc;
  if (int rc = run.prepare_output(); rc != kExitOk) return rc;
  if (int rc = run.start_command(); rc != kExitOk) return rc;
  run.sample_until_exit();
  run.wait_for_orphans();
  const int status = run.status;
  run.exit_code = WIFEXITED(status)     ? WEXITSTATUS(status)
                  : WIFSIGNALED(status) ? 128 + WTERMSIG(status)
                                        : 1;
  if (run.nvml) run.nvml->sample(mono_ns());
  Progress progress("reading the capture");
  run.build_trace(progress);
  run.save_trace(progress);
  if (!opt.quiet) {
    std::fputs(run.summary_text().c_str(), stdout);
    std::fflush(stdout);
  }
  return run.exit_code;
}

std::function<int()> setup_run(CLI::App& sub) {
  auto opt = std::make_shared<RunOptions>();
  sub.add_flag("--memory", opt->memory,
               "Track host allocations (malloc/free/new/delete) with stacks (default when "
               "--gpu is not given)");
  sub.add_flag("--gpu", opt->gpu, "Capture CUDA kernels/memcpys (CUPTI) and GPU metrics (NVML)");
  sub.add_option("--rss", opt->rss_ms, "Sample the command's resident memory every MS ms")
      ->check(CLI::Range(1, 60000));
  sub.add_option("--gpu-interval", opt->gpu_ms, "NVML sampling interval in ms (default 100)")
      ->check(CLI::Range(1, 60000));
  sub.add_option("--max-depth", opt->max_depth, "Frames recorded per allocation (default 48)")
      ->check(CLI::Range(1, 64));
  sub.add_option("-o,--output", opt->out, "Output .mlprof file (default CMD.PID.mlprof)");
  sub.add_flag("--keep-raw", opt->keep_raw, "Keep the raw per-process capture files");
  sub.add_option("--max-raw", opt->max_raw_mb,
                 "Raw capture limit per process in MiB: events past it are counted, not written "
                 "(default: no limit)")
      ->check(CLI::NonNegativeNumber);
  sub.add_flag("--events", opt->events,
               "Keep every malloc/free in the trace (for the timeline and mlprof memory; memory "
               "and file size grow with the events)");
  sub.add_flag("-q,--quiet", opt->quiet, "Do not print the reports");
  sub.add_option("--top", opt->top, "Rows per report table (default 10)");
  // Everything from the first positional on is the command, options included.
  auto cmd = std::make_shared<std::vector<std::string>>();
  sub.add_option("command", *cmd, "CMD ARGS... (after --)");
  sub.prefix_command();
  return [opt, cmd, &sub]() {
    if (!opt->memory && !opt->gpu) opt->memory = true;
    std::vector<std::string> argv = *cmd;
    std::vector<std::string> rest = sub.remaining();
    // CLI11 hands back the "--" that ended mlprof's options; the command's own are kept.
    if (!rest.empty() && rest.front() == "--") rest.erase(rest.begin());
    argv.insert(argv.end(), rest.begin(), rest.end());
    if (!argv.empty() && argv.front() == "--") argv.erase(argv.begin());
    return run_command(*opt, argv);
  };
}

}  // namespace

MLPROF_REGISTER_COMMAND("run", "Run a command and capture host memory, CUDA kernels, GPU metrics",
                        setup_run);

}  // namespace mlprof::cli
