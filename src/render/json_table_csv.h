// One table of a result's JSON as CSV: the shared mechanism behind `--csv` on the analysis
// subcommands, so a CSV column is always named and valued like the JSON field it comes from.
#pragma once

#include <string>
#include <string_view>

#include "mlprof/status.h"

namespace mlprof {

// The array of objects at `key` of the top-level JSON object as CSV (`key` empty: the first
// field holding an array of objects, or the document itself when it is an array): one row per
// element, columns the union of the elements' fields in first-seen order. Nested objects become
// dotted columns ("phase_ns.forward"), arrays their JSON text, null an empty field. An object in
// place of the array is a one-row table.
Result<std::string> json_table_csv(std::string_view json, std::string_view key);

}  // namespace mlprof
