// A CUDA program without CUDA: it does at start what the CUDA driver does at cuInit under a
// profiler (load $CUDA_INJECTION64_PATH and call its InitializeInjection), after loading the
// fake libcupti named by FAKE_CUPTI_LIB so that the injection library binds to the fake (its
// libcupti.so.13 dependency is then already loaded under that soname). The fake delivers its
// scripted records when the injection library flushes at exit.
// FAKE_APP_CLOSEFROM=PATH: after "cuInit", close fds 3..1023 (the daemon / closefrom pattern) and
// open PATH for writing (it gets fd 3, the tracer's old number), kept open through exit, when the
// injection library writes its records.
// FAKE_APP_SECOND_CLIENT=1: after "cuInit", register a second client's activity buffer callbacks
// with the fake CUPTI, as torch.profiler (Kineto) does when it starts: the second client ignores
// buffers it did not allocate ("bufferCompleted called with unknown buffer", the H100 run).
#include <cupti.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {
uint8_t g_second_buffer[1 << 16];
void CUPTIAPI second_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *buffer = g_second_buffer;
  *size = sizeof g_second_buffer;
  *max_records = 0;
}
void CUPTIAPI second_completed(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t) {
  if (buffer != g_second_buffer) std::fputs("second client: unknown buffer\n", stderr);
}
}  // namespace

int main() {
  const char* injection = std::getenv("CUDA_INJECTION64_PATH");
  const char* fake = std::getenv("FAKE_CUPTI_LIB");
  if (injection && *injection) {
    if (fake && *fake && !dlopen(fake, RTLD_NOW | RTLD_GLOBAL)) {
      std::fprintf(stderr, "fake_cuda_app: %s\n", dlerror());
      return 3;
    }
    void* lib = dlopen(injection, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      std::fprintf(stderr, "fake_cuda_app: %s\n", dlerror());
      return 3;
    }
    auto init = reinterpret_cast<int (*)()>(dlsym(lib, "InitializeInjection"));
    if (!init || init() != 1) return 4;
  }
  if (const char* second = std::getenv("FAKE_APP_SECOND_CLIENT"); second && *second == '1') {
    using Register =
        CUptiResult (*)(CUpti_BuffersCallbackRequestFunc, CUpti_BuffersCallbackCompleteFunc);
    auto reg = reinterpret_cast<Register>(dlsym(RTLD_DEFAULT, "cuptiActivityRegisterCallbacks"));
    if (!reg || reg(second_requested, second_completed) != CUPTI_SUCCESS) return 6;
  }
  if (const char* data = std::getenv("FAKE_APP_CLOSEFROM"); data && *data) {
    for (int fd = 3; fd < 1024; ++fd) close(fd);
    int fd = open(data, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd != 3 || write(fd, "the app's data\n", 15) != 15) return 5;
  }
  // Some host work after "cuInit", long enough for the scripted GPU times (up to 1.2 ms after
  // initialization) to be in the past at exit and for NVML to be sampled a few times.
  timespec req{0, 60 * 1000 * 1000};
  nanosleep(&req, nullptr);
  std::puts("fake_cuda_app: done");
  return 0;
}
