// meta.format of a Trace made of torch.compile logs alone (no events; the importer's
// compile_logs_trace): its compile analysis reads the logs without a trace to join them to, while
// a Kineto trace that carries logs (`mlprof compile LOGS TRACE`) is joined to them.
#pragma once

namespace mlprof {

inline constexpr char kCompileLogFormat[] = "torch-compile-log";

}  // namespace mlprof
