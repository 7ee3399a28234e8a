// The one-line error that names the file it is about (docs/hardening.md: "FILE: what is wrong").
#pragma once

#include <string>

namespace mlprof {

// "FILE: message", unless the message already names the file (an importer's errors do).
std::string file_error(const std::string& file, const std::string& message);

}  // namespace mlprof
