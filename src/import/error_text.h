// Input text quoted in error messages: control bytes escaped and long text cut, so an error
// stays one line whatever the file holds.
#pragma once

#include <cstdio>
#include <string>
#include <string_view>

namespace mlprof::import {

inline std::string printable(std::string_view s, size_t max_len = 40) {
  std::string out;
  for (size_t i = 0; i < s.size() && i < max_len; ++i) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x20 || c == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    } else {
      out.push_back(static_cast<char>(c));
    }
  }
  if (s.size() > max_len) out += "...";
  return out;
}

}  // namespace mlprof::import
