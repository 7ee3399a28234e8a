// Records 3 steps of nested scopes and saves them: record_scopes OUT.mlprof
#include <cstdio>

#include "mlprof/mlprof.h"
#include "mlprof/native_format.h"

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  mlprof::Session session;
  if (!session.start().is_ok()) return 1;
  volatile double sum = 0;
  for (int step = 0; step < 3; ++step) {
    MLPROF_STEP("train");
    {
      MLPROF_SCOPE("forward");
      for (int i = 0; i < 100000; ++i) sum = sum + i * 0.5;
    }
    {
      MLPROF_SCOPE("backward");
      for (int i = 0; i < 200000; ++i) sum = sum + i * 0.25;
    }
  }
  mlprof::Trace trace = session.stop();
  mlprof::Status saved = mlprof::save_native(trace, argv[1]);
  if (!saved.is_ok()) {
    std::fprintf(stderr, "save: %s\n", saved.message().c_str());
    return 1;
  }
  std::printf("recorded %s\n", argv[1]);
  return 0;
}
