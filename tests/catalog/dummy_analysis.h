// A dummy analysis added to the catalogue in a test build only (analysis_catalog_dummy_test in
// tests/CMakeLists.txt): proves that a new analysis is one row plus its own files. Included by
// mlprof/analysis_catalog.h through MLPROF_EXTRA_ANALYSES_HEADER.
#pragma once

#include <cstdint>

namespace mlprof {

struct DummyOptions {
  int64_t scale = 1;
};
struct DummyResult {
  uint64_t slices = 0;  // the trace's slices times options.scale
  uint64_t steps = 0;   // from the steps result it needs
};

}  // namespace mlprof

#define MLPROF_EXTRA_ANALYSES(X)                                                              \
  X(Dummy, dummy, DummyResult, DummyOptions, (kSteps), kNothing, true, 14, 13, "Dummy count", \
    "counts", 1)
