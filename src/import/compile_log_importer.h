// torch.compile structured logs as load_trace reads them: recognised by their first line, read
// from the (decompressed) byte stream load_trace already opened.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "import/byte_source.h"
#include "mlprof/compile_log.h"
#include "mlprof/trace.h"

namespace mlprof::import {

// True when the first non-blank line of `head` is a glog line followed by a JSON object.
bool looks_like_compile_log(std::string_view head);

// Parses one log; `name` is the file's name (its rank_N gives the rank) and the errors' prefix.
Result<CompileLog> import_compile_log(ByteSource& src, const std::string& name);

// The Trace of one or more logs: no events, the logs in rank order (then by source),
// meta.source = `source`, meta.format "torch-compile-log".
Trace compile_logs_trace(std::vector<CompileLog> logs, const std::string& source);

}  // namespace mlprof::import
