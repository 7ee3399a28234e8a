// The cost of the hardened file I/O (docs/hardening.md), each against its baseline in the same
// run, best of N:
//   load: load_native (read() into memory: a file that shrinks meanwhile gives an error) against
//         the mmap it replaced (SIGBUS when the file shrinks under the mapping), in CPU time of
//         the loading thread, the two alternated in both orders;
//   save: save_native in full (encode, compress, exclusive temporary file, fsync, rename), and
//         the share the fsync takes (the same bytes written with stdio, with and without fsync).
// usage: native_io_tool FILE.mlprof [RUNS]
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "mlprof/import.h"
#include "mlprof/native_format.h"

using Clock = std::chrono::steady_clock;

static double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// CPU time of this thread (user + system: the kernel's copy in read() and page faults count):
// steadier than wall time on a shared machine, and the loads are single-threaded.
static double thread_cpu() {
  timespec ts{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + ts.tv_nsec / 1e9;
}

static mlprof::Result<mlprof::Trace> load_mapped(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  struct stat st {};
  ::fstat(fd, &st);
  size_t size = static_cast<size_t>(st.st_size);
  void* m = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);
  ::madvise(m, size, MADV_SEQUENTIAL);
  auto r = mlprof::load_native_buffer(std::string_view(static_cast<const char*>(m), size), path);
  ::munmap(m, size);
  return r;
}

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: native_io_tool FILE.mlprof [RUNS]\n");
    return 2;
  }
  std::string path = argv[1];
  int runs = argc > 2 ? std::atoi(argv[2]) : 5;
  double best_map = 1e9, best_read = 1e9;
  size_t slices = 0;
  for (int i = 0; i < runs; ++i) {  // alternated, in both orders: drift and order hit both
    for (int k = 0; k < 2; ++k) {
      bool mapped = (i + k) % 2 == 0;
      double c0 = thread_cpu();
      auto r = mapped ? load_mapped(path) : mlprof::load_native(path);
      double t = thread_cpu() - c0;
      if (!r) {
        std::fprintf(stderr, "load failed: %s\n", r.error().c_str());
        return 1;
      }
      (mapped ? best_map : best_read) = std::min(mapped ? best_map : best_read, t);
      slices = r->slices.size();
    }
  }
  struct stat st {};
  ::stat(path.c_str(), &st);
  std::printf("load %s (%.1f MB, %zu slices), best of %d\n", path.c_str(), st.st_size / 1e6, slices,
              runs);
  std::printf("  mmap (baseline)    %.3f s CPU\n  read (load_native) %.3f s CPU  ratio %.3f\n",
              best_map, best_read, best_read / best_map);

  // Saving: save_native (temporary file, fsync, rename) in full, and the part fsync takes: the
  // same bytes written with stdio, with and without an fsync before close.
  auto trace = mlprof::load_native(path);
  std::string out = path + ".bench-out.mlprof";
  std::string bytes;
  double best_save = 1e9, best_write = 1e9, best_write_sync = 1e9;
  for (int i = 0; i < runs; ++i) {
    auto t0 = Clock::now();
    if (!mlprof::save_native(*trace, out)) return 1;
    best_save = std::min(best_save, seconds_since(t0));
    if (bytes.empty()) {
      FILE* in = std::fopen(out.c_str(), "rb");
      char buf[1 << 16];
      size_t n;
      while ((n = std::fread(buf, 1, sizeof buf, in)) > 0) bytes.append(buf, n);
      std::fclose(in);
    }
    for (int sync = 0; sync < 2; ++sync) {
      std::string plain = out + ".plain";
      t0 = Clock::now();
      FILE* o = std::fopen(plain.c_str(), "wb");
      std::fwrite(bytes.data(), 1, bytes.size(), o);
      std::fflush(o);
      if (sync) ::fsync(::fileno(o));
      std::fclose(o);
      double t = seconds_since(t0);
      (sync ? best_write_sync : best_write) = std::min(sync ? best_write_sync : best_write, t);
      ::unlink(plain.c_str());
    }
  }
  ::unlink(out.c_str());
  double fsync_cost = std::max(0.0, best_write_sync - best_write);
  std::printf(
      "save %.1f MB, best of %d\n  save_native (encode, compress, temp, fsync, rename) "
      "%.3f s\n  of which fsync (write+fsync %.3f s - write %.3f s) %.3f s = %.1f%%\n",
      bytes.size() / 1e6, runs, best_save, best_write_sync, best_write, fsync_cost,
      100.0 * fsync_cost / best_save);
  return 0;
}
