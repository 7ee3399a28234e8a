// What `mlprof --version` prints: "mlprof X.Y.Z (commit C)". Defined in a source generated at
// build time (cmake/version.cmake), so a new commit relinks the binary and recompiles one file.
#pragma once

namespace mlprof::cli {

const char* version_string();  // "mlprof 0.1.0 (commit 4c40048abcde)"
const char* version_number();  // "0.1.0"

}  // namespace mlprof::cli
