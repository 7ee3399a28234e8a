#include "import/capture/capture_status.h"

#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <sstream>

#include "trace/formats/raw_memory_format.h"

namespace mlprof {

std::optional<CaptureStatus> parse_capture_status(const std::string& text) {
  std::istringstream in(text);
  std::string word;
  if (!(in >> word) || word != rawmem::kStatusVersion) return std::nullopt;
  CaptureStatus s;
  bool have_exit = false;
  while (in >> word) {
    size_t eq = word.find('=');
    if (eq != 1) return std::nullopt;
    char key = word[0];
    std::string value = word.substr(2);
    if (key == 's') {
      s.stage = value.size() == 1 && value[0] != '-' ? value[0] : 0;
      continue;
    }
    char* end = nullptr;
    unsigned long long v = std::strtoull(value.c_str(), &end, 10);
    if (value.empty() || *end) return std::nullopt;
    switch (key) {
      case 'e':
        s.error = static_cast<int>(v);
        break;
      case 'a':
        s.lost_allocations = v;
        break;
      case 'f':
        s.lost_frees = v;
        break;
      case 'r':
        s.reopened = v;
        break;
      case 'x':
        s.exited = v == 1, have_exit = true;
        break;
      case 'p': {
        s.ppid = static_cast<int64_t>(v);
        std::getline(in, s.exe);  // the rest: the executable (may hold spaces)
        if (!s.exe.empty() && s.exe[0] == ' ') s.exe.erase(0, 1);
        return have_exit ? std::optional<CaptureStatus>(s) : std::nullopt;
      }
      default:
        break;  // a later field: ignored
    }
  }
  if (!have_exit) return std::nullopt;
  return s;
}

std::map<std::string, CaptureStatus> read_capture_statuses(const std::string& dir) {
  namespace fs = std::filesystem;
  std::map<std::string, CaptureStatus> out;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    std::string name = entry.path().filename().string();
    const std::string suffix = ".status";
    if (name.rfind("mem.", 0) != 0 || name.size() <= suffix.size() + 4 ||
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0)
      continue;
    std::error_code lec;
    fs::path target = fs::read_symlink(entry.path(), lec);
    if (lec) continue;
    if (auto s = parse_capture_status(target.string()))
      out[name.substr(0, name.size() - suffix.size())] = *s;
  }
  return out;
}

std::string capture_status_note(int64_t pid, const CaptureStatus& s, int64_t kept_allocations) {
  std::string who = "pid " + std::to_string(pid);
  std::string why = s.error ? std::strerror(s.error) : "";
  std::string lost = std::to_string(s.lost_allocations) + " allocations and " +
                     std::to_string(s.lost_frees) + " frees";
  std::string partial = s.exited ? "" : " (it did not reach its exit: at least that many)";
  std::string note;
  if (s.stage == 'o') {
    if (!s.exe.empty()) who += " (" + std::filesystem::path(s.exe).filename().string() + ")";
    if (!s.exited)
      return who + " could not create its capture file (" + why +
             ") and ended without running its exit handlers (killed, _exit or exec): what it "
             "allocated is not in the capture and was not counted";
    return who + " could not create its capture file (" + why + "): its " + lost +
           " were counted, not recorded, and are not in the capture";
  }
  if (s.reopened)
    note = who + " closed the memory tracker's capture file " + std::to_string(s.reopened) +
           (s.reopened == 1 ? " time" : " times") +
           " (closefrom or the daemon pattern): the tracker reopened it each time" +
           (s.stage == 'r' || s.stage == 'w' ? "" : ", nothing was lost");
  if (s.stage == 'w' || s.stage == 'r') {
    if (!note.empty()) note += "; ";
    note += who +
            (s.stage == 'w' ? ": writing its capture file failed ("
                            : ": the tracker could not reopen its capture file (") +
            why + ") after " +
            (kept_allocations >= 0 ? std::to_string(kept_allocations) : std::string("?")) +
            " allocations: the " + lost +
            " after that were counted, not recorded; heap and leak figures cover only the "
            "first part" +
            partial;
  }
  return note;
}

}  // namespace mlprof
