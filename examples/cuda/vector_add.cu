// A small CUDA program with known GPU work, for `mlprof run --gpu` (scripts/gpu_check.sh):
//   3 memcpys host->device (2 pageable of N floats, 1 pinned), 1 memset,
//   ITER x vector_add kernel launches + ITER x scale kernel launches on the default stream,
//   1 memcpy device->host. It prints the expected counts as JSON on its last line.
// Builds with nvcc without a GPU; at run time without a driver it says so and exits 3.
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

__global__ void vector_add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}

__global__ void scale(float* c, float k, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] *= k;
}

#define CHECK(call)                                                                      \
  do {                                                                                   \
    cudaError_t e_ = (call);                                                             \
    if (e_ != cudaSuccess) {                                                             \
      std::fprintf(stderr, "vector_add: %s failed: %s\n", #call, cudaGetErrorString(e_)); \
      return 3;                                                                          \
    }                                                                                    \
  } while (0)

int main(int argc, char** argv) {
  const int n = 1 << 22;  // 4M floats = 16 MiB per buffer
  const int iters = argc > 1 ? std::atoi(argv[1]) : 20;
  const size_t bytes = size_t(n) * sizeof(float);
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::fprintf(stderr, "vector_add: no CUDA device available\n");
    return 3;
  }
  std::vector<float> a(n, 1.0f), b(n, 2.0f), c(n, 0.0f);
  float* pinned = nullptr;
  CHECK(cudaMallocHost(&pinned, bytes));
  for (int i = 0; i < n; ++i) pinned[i] = 0.5f;
  float *da, *db, *dc;
  CHECK(cudaMalloc(&da, bytes));
  CHECK(cudaMalloc(&db, bytes));
  CHECK(cudaMalloc(&dc, bytes));
  CHECK(cudaMemcpy(da, a.data(), bytes, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(db, b.data(), bytes, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(dc, pinned, bytes, cudaMemcpyHostToDevice));
  CHECK(cudaMemset(dc, 0, bytes));
  const int block = 256, grid = (n + block - 1) / block;
  // The program's own measure of the kernel loop (CUDA events around it), for the GPU check to
  // compare with the span of the kernels the capture recorded.
  cudaEvent_t loop_begin, loop_end;
  CHECK(cudaEventCreate(&loop_begin));
  CHECK(cudaEventCreate(&loop_end));
  CHECK(cudaEventRecord(loop_begin));
  for (int it = 0; it < iters; ++it) {
    vector_add<<<grid, block>>>(da, db, dc, n);
    scale<<<grid, block>>>(dc, 0.5f, n);
  }
  CHECK(cudaEventRecord(loop_end));
  CHECK(cudaGetLastError());
  CHECK(cudaEventSynchronize(loop_end));
  float loop_ms = 0;
  CHECK(cudaEventElapsedTime(&loop_ms, loop_begin, loop_end));
  CHECK(cudaMemcpy(c.data(), dc, bytes, cudaMemcpyDeviceToHost));
  CHECK(cudaDeviceSynchronize());
  bool ok = c[0] == 1.5f && c[n - 1] == 1.5f;
  cudaFree(da), cudaFree(db), cudaFree(dc), cudaFreeHost(pinned);
  std::printf("{\"kernels\": {\"vector_add\": %d, \"scale\": %d}, \"memcpy_htod\": 3, "
              "\"memcpy_dtoh\": 1, \"memsets\": 1, \"bytes_per_copy\": %zu, \"grid\": %d, "
              "\"block\": %d, \"loop_ms\": %.4f, \"result_ok\": %s}\n",
              iters, iters, bytes, grid, block, loop_ms, ok ? "true" : "false");
  return ok ? 0 : 1;
}
