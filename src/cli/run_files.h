// The files `mlprof run` owns outside the trace: where the capture will be saved (checked before
// the command starts, with a fallback when saving fails at the end) and the raw capture
// directory (tagged with its owner, so a run killed with SIGKILL leaves nothing for long: the
// next run removes directories whose owner is gone).
#pragma once

#include <string>

#include "mlprof/status.h"

namespace mlprof::cli {

// Whether the capture can be saved at a path: mlprof::check_output_path (trace/output_file.h),
// the rules every writer follows, checked before the command starts.

// Where to save the capture when `failed` cannot be written: the temporary directory, under the
// same file name when that is free, never an existing file.
std::string fallback_output_path(const std::string& failed);

// A new private directory TMPDIR/mlprof-run-XXXXXX holding an "owner" file (this process's pid
// and start time). Empty on failure, with the reason in `error`.
std::string make_run_dir(std::string& error);

// Removes TMPDIR/mlprof-run-* directories of this user whose owner process no longer runs (a
// run killed before it could clean up). Returns how many were removed.
size_t remove_stale_run_dirs();

}  // namespace mlprof::cli
