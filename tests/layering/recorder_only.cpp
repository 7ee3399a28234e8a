// A program written against the recorder header alone and linked against mlprof_record alone
// (tests/CMakeLists.txt). ctest `layering_recorder_link` runs it (the trace it writes at exit
// through MLPROF_OUTPUT must be there) and checks that the binary holds no code of the importers,
// the analyses, the renderers, SQL, serve or the web bundle (check_recorder_link.py).
#include <cstdio>

#include "mlprof/mlprof.h"

int main() {
  mlprof::Session& session = mlprof::global();  // started before main() by MLPROF_OUTPUT
  double sum = 0;
  for (int step = 0; step < 3; ++step) {
    MLPROF_STEP("train");
    MLPROF_SCOPE("work");
    for (int i = 0; i < 1000; ++i) sum += i * 0.5;
    mlprof::counter("sum", sum);
  }
  std::printf("recording: %s\n", session.running() ? "yes" : "no");
  return 0;  // the global session is written to MLPROF_OUTPUT at exit
}
