// An allocation-heavy program for measuring host-memory tracking overhead: THREADS threads,
// each doing OPS malloc/free pairs of mixed sizes (16 B .. 4 KiB, 1 in 64 of 64 KiB) through a
// few call sites at different depths, with a window of 256 live blocks per thread.
// Prints the in-process time, so wrappers' start-up and post-processing can be told apart.
// Usage: alloc_heavy_tool [THREADS=4] [OPS_PER_THREAD=1000000]
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

namespace {

__attribute__((noinline)) void* alloc_small(size_t n) { return malloc(n); }
__attribute__((noinline)) void* alloc_medium(size_t n) { return alloc_small(n); }
__attribute__((noinline)) void* alloc_large(size_t n) { return alloc_medium(n); }
__attribute__((noinline)) char* alloc_new(size_t n) { return new char[n]; }

void worker(uint64_t seed, size_t ops, uint64_t* checksum) {
  constexpr size_t kWindow = 256;
  void* live[kWindow] = {};
  bool is_new[kWindow] = {};
  uint64_t x = seed * 0x9e3779b97f4a7c15ull + 1;
  uint64_t sum = 0;
  for (size_t i = 0; i < ops; ++i) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;  // xorshift
    size_t slot = x % kWindow;
    if (live[slot]) {
      if (is_new[slot]) {
        delete[] static_cast<char*>(live[slot]);
      } else {
        free(live[slot]);
      }
    }
    size_t size = (x >> 20) % 64 == 0 ? 65536 : 16 + (x >> 32) % 4080;
    switch ((x >> 40) % 4) {
      case 0:
        live[slot] = alloc_small(size), is_new[slot] = false;
        break;
      case 1:
        live[slot] = alloc_medium(size), is_new[slot] = false;
        break;
      case 2:
        live[slot] = alloc_large(size), is_new[slot] = false;
        break;
      default:
        live[slot] = alloc_new(size), is_new[slot] = true;
        break;
    }
    static_cast<char*>(live[slot])[0] = static_cast<char>(i);
    sum += reinterpret_cast<uintptr_t>(live[slot]) & 0xff;
  }
  for (size_t s = 0; s < kWindow; ++s) {
    if (!live[s]) continue;
    if (is_new[s]) {
      delete[] static_cast<char*>(live[s]);
    } else {
      free(live[s]);
    }
  }
  *checksum = sum;
}

}  // namespace

int main(int argc, char** argv) {
  int threads = argc > 1 ? std::atoi(argv[1]) : 4;
  size_t ops = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 1000000;
  auto t0 = std::chrono::steady_clock::now();
  std::vector<std::thread> pool;
  std::vector<uint64_t> sums(threads);
  for (int t = 0; t < threads; ++t) pool.emplace_back(worker, t + 1, ops, &sums[t]);
  for (auto& t : pool) t.join();
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  uint64_t total = 0;
  for (uint64_t s : sums) total += s;
  std::printf("alloc_heavy: %d threads x %zu malloc/free pairs in %.3f s (checksum %llu)\n",
              threads, ops, secs, static_cast<unsigned long long>(total));
  return 0;
}
