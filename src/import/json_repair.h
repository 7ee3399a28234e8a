// Repairs the two defects of hand-written or cut-and-pasted Chrome traces that Perfetto and
// Chrome's viewer read anyway: a trailing comma before ']' or '}', and raw control characters
// (a newline, a tab) inside strings. Anything else that is not JSON is located, not repaired:
// the caller skips the value and reports the first bad byte.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace mlprof::import {

struct JsonRepair {
  bool valid = false;     // the text, with the repairs below, is exactly one JSON value
  size_t bad_at = 0;      // !valid: the first byte that is not JSON
  const char* what = "";  // !valid: what is wrong there
  size_t trailing_commas = 0;
  size_t control_characters = 0;
  size_t first_trailing_comma_at = 0;     // byte of the first ',' dropped (when there is one)
  size_t first_control_character_at = 0;  // byte of the first one escaped (when there is one)
  std::string fixed;                      // the repaired text (when there was something to repair)
  bool repaired() const { return trailing_commas + control_characters > 0; }
};

// Checks `text` (one JSON value, surrounding whitespace allowed) and repairs what it can.
JsonRepair repair_json_value(std::string_view text);

}  // namespace mlprof::import
