#include "trace/file_error.h"

namespace mlprof {

std::string file_error(const std::string& file, const std::string& message) {
  return message.find(file) == std::string::npos ? file + ": " + message : message;
}

}  // namespace mlprof
