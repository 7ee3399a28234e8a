// The importer registry: every input format mlprof reads is one row of importers() (its name,
// the file names a directory listing counts, how it is recognised by content, how it is read).
// load_trace() tries the rows in order; the rank-directory listing, serve's listing and the CLI's
// progress total ask the same rows which file names are traces. Adding a format is one row
// (importer_registry.cpp) plus its reader. docs/architecture.md, "A new input format".
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "import/byte_source.h"
#include "mlprof/import.h"

namespace mlprof::import {

// What a row sees of a file before it is chosen.
struct InputHead {
  std::string_view path;  // the file's path (a format whose content has no magic: its name)
  std::string_view raw;   // up to 4 KiB of the file as stored
  std::string_view text;  // up to 4 KiB of its content: decompressed (gzip), else == raw
  bool compressed = false;
};

// The input handed to the row that claimed it.
struct OpenedInput {
  const std::string& path;  // the file (a row that needs the file itself opens it)
  ByteSource& bytes;        // the content from its first byte, decompressed, limited to
                            // `limit` bytes (past it: load_trace reports the limit)
  const InputHead& head;
  const ImportOptions& options;
  uint64_t limit;  // max_input_bytes(options)
};

struct Importer {
  std::string_view name;        // for messages and docs ("chrome-json")
  std::string_view extensions;  // file names of this format in a directory, space separated
  bool rank_trace;              // such a file in a directory is one rank's trace
  // Claims the file by content. Null: the fallback, tried last (Chrome JSON).
  bool (*sniff)(const InputHead& head);
  Result<Trace> (*load)(OpenedInput& in);
};

// Helpers the rows share (load_trace.cpp).
Result<Trace> import_chrome_stream(ByteSource& src, const std::string& name,
                                   const ImportOptions& options);
std::string mib(uint64_t bytes);  // "12 MiB", rounded up
// The whole (decompressed) content, for readers that need it in memory (SQLite, protobuf). Past
// the limit the source ends early and load_trace reports the limit.
Status read_whole(OpenedInput& in, std::string& bytes);
// The first import problem as an error under --strict (import_warnings.cpp).
Status strict_error(const Trace& t);
Status over_limit_error(const std::string& path, const std::string& what, uint64_t limit);

// The rows, in the order load_trace tries them.
std::span<const Importer> importers();

// True when `file_name` ends in an extension of some row (of a rank-trace row when `rank_only`).
bool has_trace_extension(std::string_view file_name, bool rank_only);

// "*.json, *.json.gz, *.mlprof": the rank-trace extensions, sorted, for messages.
std::string rank_trace_patterns();

}  // namespace mlprof::import
