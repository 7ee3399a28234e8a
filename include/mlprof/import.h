// Importers: every source format ends in one Trace.
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mlprof/status.h"
#include "mlprof/trace.h"

namespace mlprof {

struct ImportOptions {
  // Threads for the JSON pipeline: inflate + scan on one, parse on the others. 0 = automatic
  // (all cores); 1 = everything on the calling thread.
  unsigned threads = 0;
  // Parsers working on alternate chunks of one file. 0 = automatic: one per core when the
  // file is large enough to be worth splitting (several chunks), else one. With threads == 1
  // the parsers take turns on the calling thread (the same parts and merge, for tests).
  unsigned parse_threads = 0;
  // Bytes of events handed to a parser at a time; 0 = the default (2 MiB). Tests use small
  // chunks to exercise the chunk boundaries and the merge of parallel parsers.
  size_t chunk_bytes = 0;
  // Plain-JSON events read by mlprof's own fast path, the rest by simdjson. Off: everything
  // through simdjson (tests compare the two; MLPROF_SIMDJSON_ONLY=1 turns it off too).
  bool fast_path = true;
  // Any import problem (a truncated file, a skipped or repaired event: ImportStats) fails the
  // load instead of being counted in Trace::meta.import_stats (`--strict`, for CI).
  bool strict = false;
  // When set, the bytes of the file consumed so far are added to it as the import proceeds
  // (compressed bytes for gzip; every file of a rank directory adds to the same counter): what a
  // progress bar shows against the file size.
  std::atomic<uint64_t>* progress_bytes = nullptr;
  // When set, the Chrome JSON events parsed so far are added to it as each chunk is parsed
  // (serve's loading progress; other formats add nothing until they are done).
  std::atomic<uint64_t>* progress_events = nullptr;
  // Bytes of (decompressed) input read at most; past it the load fails with an error naming
  // the limit. 0 = MLPROF_MAX_INPUT_MB (MiB) when set, else the machine's (or container's)
  // memory, at least 1 GiB: a gzip bomb ends in one line, not in the OOM killer.
  uint64_t max_input_bytes = 0;
  // The file's name where the content depends on it (a torch.compile log's rank_N), when
  // `path` is another name for it (serve loads through /proc/self/fd/N). Empty: `path`.
  std::string name;
};

// The limit `options` give (max_input_bytes, MLPROF_MAX_INPUT_MB or the memory size).
uint64_t max_input_bytes(const ImportOptions& options);

// Reads any trace mlprof understands, chosen by content, not by name: gzip (any of the formats
// inside), .mlprof native files, Chrome/Kineto JSON (object or bare array), PyTorch's
// export_memory_timeline raw lists. Errors are one line: "PATH: [byte N: ]what was expected".
Result<Trace> load_trace(const std::string& path, const ImportOptions& options = {});

// One line per kind of problem the import recovered from, for stderr:
// "warning: PATH: byte N: what (K times, the first shown); E events read".
std::vector<std::string> import_warnings(const Trace& trace);

// mlprof's own .mlprof files (mlprof/native_format.h writes them); load_trace() reads them too.
Result<Trace> load_native(const std::string& path);
Result<Trace> load_native_buffer(std::string_view bytes, const std::string& name);

// Chrome trace JSON from memory (tests, fuzzing). `name` is used in error messages.
Result<Trace> import_chrome_json_buffer(std::string_view json, const std::string& name,
                                        const ImportOptions& options = {});

// torch.compile structured logs (TORCH_TRACE): the files of `dir` that are logs (by their first
// line), sorted; and the Trace of several logs (one per rank: no events, Trace::compile_logs in
// rank order), named `source` (a TORCH_TRACE directory). load_trace() reads one log file too.
std::vector<std::string> compile_log_files(const std::string& dir);
Result<Trace> load_compile_logs(const std::vector<std::string>& paths, const std::string& source);

// Which file names count as traces, from the importer registry (src/import/importer_registry.cpp):
// a name ending in an extension of some format (`.json`, `.json.gz`, `.mlprof`, `.pickle`, `.log`,
// ...): what serve lists. `is_rank_trace_name`: of a format that is one rank's trace in a rank
// directory (not a memory snapshot or a compile log): what a rank directory holds.
bool is_trace_name(std::string_view file_name);
bool is_rank_trace_name(std::string_view file_name);

// The trace files of a rank directory (regular files with a rank-trace name), sorted by path;
// an unreadable directory or one without traces is an error.
Result<std::vector<std::string>> list_rank_files(const std::string& dir);

// Loads `files` (one rank each) in parallel on `threads` threads (0 = all cores). Files that fail
// are reported in `errors` ("path: why"), not fatal; none loading is an error naming `dir`.
// `options` apply to each file (its thread count is 1: the files load in parallel instead).
Result<std::vector<Trace>> load_rank_files(const std::vector<std::string>& files,
                                           const std::string& dir, unsigned threads,
                                           std::vector<std::string>& errors,
                                           const ImportOptions& options = {});
// list_rank_files + load_rank_files.
Result<std::vector<Trace>> load_rank_dir(const std::string& dir, unsigned threads,
                                         std::vector<std::string>& errors,
                                         const ImportOptions& options = {});

// What a path is to every consumer (CLI, serve, Python, SQL, MPI, export): one Trace (a file of
// any format load_trace reads, or a TORCH_TRACE directory's torch.compile logs), or a directory of
// rank traces, listed but not loaded: each consumer loads the ranks its own way (streamed into
// summaries, all in memory, sharded over MPI processes).
struct Input {
  std::string path;
  std::optional<Trace> trace;           // set unless a rank directory
  std::vector<std::string> rank_files;  // a rank directory's trace files, sorted
  bool rank_dir() const { return !trace.has_value(); }
};
enum class InputAccept {
  kAny,
  kRankDir,  // only a directory of rank traces (MPI, merged export): anything else is
             // list_rank_files' error, and nothing is loaded
};
// Errors are one line ("PATH: why"); a directory without traces or logs is list_rank_files' error.
Result<Input> open_input(const std::string& path, const ImportOptions& options = {},
                         InputAccept accept = InputAccept::kAny);

}  // namespace mlprof
