// A program with known allocation behaviour, for testing `mlprof run --memory`.
//
// Leaks (never freed), by the function that allocates them:
//   leak_in_static_ctor   1 x   777 B  (before main)
//   leak_site_alpha      10 x  1024 B  (malloc)
//   leak_site_beta        5 x  4096 B  (operator new[])
//   leak_in_thread        4 x   300 B  (one per worker thread)
//   realloc_leak          1 x  8192 B  (end of a realloc chain 16 -> ... -> 8192)
//   leak_aligned          1 x   640 B  (posix_memalign)
//   leak_in_atexit        1 x  2222 B  (in an atexit handler)
//   leak_in_child         2 x  5000 B  (in a forked child process)
// Peak: build_peak holds 64 x 64 KiB = 4 MiB at once, on top of the leaks made before it.
// Temporaries: make_temporaries does 10000 malloc(32)/free pairs.
// `alloc_test --expect` prints these numbers as JSON (the test's independent expectation).
#include <malloc.h>
#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>

namespace {

// Keeps the compiler from removing malloc/free pairs it can see through.
__attribute__((noinline)) void escape(void* p) { asm volatile("" : : "r"(p) : "memory"); }

void* g_sink[64];

__attribute__((noinline)) void leak_in_static_ctor() {
  g_sink[0] = malloc(777);
  escape(g_sink[0]);
}

struct StaticAllocator {
  StaticAllocator() { leak_in_static_ctor(); }
} g_static_allocator;

__attribute__((noinline)) void leak_site_alpha(size_t n) {
  for (int i = 0; i < 10; ++i) escape(malloc(n));
}

__attribute__((noinline)) void leak_site_beta() {
  for (int i = 0; i < 5; ++i) escape(new char[4096]);
}

__attribute__((noinline)) void build_peak() {
  void* blocks[64];
  for (auto& b : blocks) {
    b = malloc(64 * 1024);
    memset(b, 1, 64 * 1024);
  }
  for (auto& b : blocks) free(b);
}

__attribute__((noinline)) void make_temporaries() {
  for (int i = 0; i < 10000; ++i) {
    void* p = malloc(32);
    escape(p);
    free(p);
  }
}

__attribute__((noinline)) void leak_in_thread() { escape(malloc(300)); }

void* thread_worker(void*) {
  void* keep[100];
  for (int round = 0; round < 10; ++round) {
    for (auto& k : keep) k = malloc(48 + round);
    for (auto& k : keep) free(k);
  }
  leak_in_thread();
  return nullptr;
}

__attribute__((noinline)) void realloc_chain() {
  void* p = nullptr;
  for (size_t n = 16; n <= 65536; n *= 2) p = realloc(p, n);
  free(p);
}

__attribute__((noinline)) void realloc_leak() {
  void* p = malloc(16);
  for (size_t n = 32; n <= 8192; n *= 2) p = realloc(p, n);
  escape(p);
}

__attribute__((noinline)) void aligned_family() {
  void* a = aligned_alloc(64, 256);
  void* b = memalign(128, 512);
  void* c = valloc(1000);
  void* d = calloc(10, 100);
  escape(a), escape(b), escape(c), escape(d);
  free(a), free(b), free(c), free(d);
}

__attribute__((noinline)) void leak_aligned() {
  void* p = nullptr;
  if (posix_memalign(&p, 64, 640) == 0) escape(p);
}

__attribute__((noinline)) void leak_in_atexit() { escape(malloc(2222)); }

void atexit_handler() { leak_in_atexit(); }

__attribute__((noinline)) void leak_in_child() {
  escape(malloc(5000));
  escape(malloc(5000));
}

void print_expectation() {
  std::printf(
      "{\"leaks\": {\"leak_in_static_ctor\": [1, 777], \"leak_site_alpha\": [10, 10240],"
      " \"leak_site_beta\": [5, 20480], \"leak_in_thread\": [4, 1200],"
      " \"realloc_leak\": [1, 8192], \"leak_aligned\": [1, 640], \"leak_in_atexit\": [1, 2222]},"
      " \"child_leaks\": {\"leak_in_child\": [2, 10000]},"
      " \"peak_min\": %d, \"temporaries_min\": 10000, \"threads\": 4}\n",
      64 * 64 * 1024);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && std::strcmp(argv[1], "--expect") == 0) {
    print_expectation();
    return 0;
  }
  leak_site_alpha(1024);
  leak_site_beta();
  build_peak();
  make_temporaries();
  pthread_t threads[4];
  for (auto& t : threads) pthread_create(&t, nullptr, thread_worker, nullptr);
  for (auto& t : threads) pthread_join(t, nullptr);
  realloc_chain();
  realloc_leak();
  aligned_family();
  leak_aligned();
  std::fflush(stdout);
  pid_t child = fork();
  if (child == 0) {
    leak_in_child();
    std::exit(0);
  }
  int status = 0;
  waitpid(child, &status, 0);
  std::atexit(atexit_handler);  // after the fork: only the parent runs it
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
