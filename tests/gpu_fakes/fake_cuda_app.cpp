// A CUDA program without CUDA: it does at start what the CUDA driver does at cuInit under a
// profiler (load $CUDA_INJECTION64_PATH and call its InitializeInjection), after loading the
// fake libcupti named by FAKE_CUPTI_LIB so that the injection library binds to the fake (its
// libcupti.so.13 dependency is then already loaded under that soname). The fake delivers its
// scripted records when the injection library flushes at exit.
#include <dlfcn.h>
#include <time.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

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
  // Some host work after "cuInit", long enough for the scripted GPU times (up to 1.2 ms after
  // initialization) to be in the past at exit and for NVML to be sampled a few times.
  timespec req{0, 60 * 1000 * 1000};
  nanosleep(&req, nullptr);
  std::puts("fake_cuda_app: done");
  return 0;
}
