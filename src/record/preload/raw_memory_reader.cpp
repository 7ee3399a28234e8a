#include "record/preload/raw_memory_reader.h"

#include <time.h>
#include <x86intrin.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <sstream>

#include "record/preload/raw_format.h"

namespace mlprof {

namespace {

using namespace rawmem;

template <typename T>
T read_at(const std::string& data, size_t off) {
  T v;
  std::memcpy(&v, data.data() + off, sizeof(T));
  return v;
}

int64_t mono_now() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t{ts.tv_sec} * 1000000000 + ts.tv_nsec;
}

// Only one clock pair (a tiny run that was killed): measure the TSC rate here, same machine.
double measure_ns_per_tick() {
  uint64_t t0 = __rdtsc();
  int64_t n0 = mono_now();
  timespec req{0, 20000000};
  nanosleep(&req, nullptr);
  uint64_t t1 = __rdtsc();
  int64_t n1 = mono_now();
  return t1 > t0 ? static_cast<double>(n1 - n0) / static_cast<double>(t1 - t0) : 1.0;
}

}  // namespace

Result<RawMemoryFile> RawMemoryFile::open(const std::string& path) {
  RawMemoryFile f;
  f.path_ = path;
  {
    std::ifstream in(path, std::ios::binary | std::ios::ate);
    if (!in) return Status::error(path + ": cannot open");
    std::streamoff size = in.tellg();
    in.seekg(0);
    f.data_.resize(static_cast<size_t>(std::max<std::streamoff>(size, 0)));
    in.read(f.data_.data(), static_cast<std::streamsize>(f.data_.size()));
    f.data_.resize(static_cast<size_t>(in.gcount()));
  }
  const std::string& d = f.data_;
  std::vector<std::pair<uint64_t, int64_t>> clock;  // (tsc, ns)
  size_t off = 0;
  bool have_header = false;
  while (off + sizeof(ChunkHeader) <= d.size()) {
    auto ch = read_at<ChunkHeader>(d, off);
    size_t body = off + sizeof(ChunkHeader);
    if (body + ch.size > d.size()) break;
    switch (ch.kind) {
      case kFile: {
        if (ch.size < sizeof(FileHeader)) return Status::error(path + ": bad file header");
        auto fh = read_at<FileHeader>(d, body);
        if (fh.magic != kFileMagic || fh.version != kFileVersion)
          return Status::error(path + ": not an mlprof memory capture (bad magic or version)");
        f.pid_ = fh.pid;
        f.ppid_ = fh.ppid;
        f.start_ns_ = fh.mono_ns;
        size_t n = std::min<size_t>(fh.path_len, ch.size - sizeof(FileHeader));
        f.exe_.assign(d.data() + body + sizeof(FileHeader), n);
        clock.emplace_back(fh.tsc, fh.mono_ns);
        have_header = true;
        break;
      }
      case kEvents: {
        if (ch.size < sizeof(EventsHeader)) return Status::error(path + ": bad events chunk");
        auto eh = read_at<EventsHeader>(d, body);
        if (sizeof(EventsHeader) + uint64_t{eh.words} * 8 > ch.size)
          return Status::error(path + ": events chunk larger than its frame");
        clock.emplace_back(eh.tsc, eh.mono_ns);
        f.event_chunks_.emplace_back(body, ch.size);
        f.event_words_ += eh.words;
        break;
      }
      case kStack: {
        if (ch.size < sizeof(StackHeader)) return Status::error(path + ": bad stack chunk");
        auto sh = read_at<StackHeader>(d, body);
        if (sizeof(StackHeader) + uint64_t{sh.depth} * 8 > ch.size)
          return Status::error(path + ": stack chunk larger than its frame");
        if (sh.id >= f.stacks_.size()) f.stacks_.resize(sh.id + 1);
        auto& pcs = f.stacks_[sh.id];
        pcs.resize(sh.depth);
        std::memcpy(pcs.data(), d.data() + body + sizeof(StackHeader), sh.depth * 8);
        break;
      }
      case kMaps:
        f.maps_.assign(d.data() + body, ch.size);
        break;
      case kExit: {
        if (ch.size < sizeof(ExitRecord)) return Status::error(path + ": bad exit record");
        auto er = read_at<ExitRecord>(d, body);
        f.exited_ = true;
        f.exit_ns_ = er.mono_ns;
        clock.emplace_back(er.tsc, er.mono_ns);
        break;
      }
      default:
        return Status::error(path + ": unknown chunk kind " + std::to_string(ch.kind) +
                             " at offset " + std::to_string(off));
    }
    off = body + ch.size;
  }
  f.truncated_bytes_ = d.size() - off;
  if (!have_header) return Status::error(path + ": no file header (not a memory capture?)");
  // Linear fit through the first and last clock pair; TSC is constant-rate on x86-64 Linux.
  f.base_tsc_ = clock.front().first;
  f.base_ns_ = clock.front().second;
  uint64_t dt = clock.back().first - clock.front().first;
  int64_t dn = clock.back().second - clock.front().second;
  if (clock.size() >= 2 && dt > 1000000 && dn > 0) {
    f.ns_per_tick_ = static_cast<double>(dn) / static_cast<double>(dt);
  } else {
    f.ns_per_tick_ = measure_ns_per_tick();
  }
  return f;
}

void RawMemoryFile::for_each_event(const std::function<void(const RawMemoryEvent&)>& fn) const {
  RawMemoryEvent e;
  for (auto [body, size] : event_chunks_) {
    auto eh = read_at<EventsHeader>(data_, body);
    const char* p = data_.data() + body + sizeof(EventsHeader);
    std::vector<uint64_t> w(eh.words);
    std::memcpy(w.data(), p, eh.words * 8ull);
    e.tid = eh.tid;
    size_t i = 0;
    while (i < w.size()) {
      uint64_t kind = w[i] >> kKindShift;
      uint64_t tsc = w[i] & kTscMask;
      size_t need = kind == kAlloc ? 3 : kind == kAllocWide ? 4 : 2;
      if (i + need > w.size()) break;
      e.ts_ns = to_ns(tsc);
      e.addr = w[i + 1];
      if (kind == kFree) {
        e.is_free = true;
        e.size = 0;
        e.stack = 0;
      } else if (kind == kAlloc) {
        e.is_free = false;
        e.size = w[i + 2] & kSizeMask;
        e.stack = static_cast<uint32_t>(w[i + 2] >> kStackShift);
      } else if (kind == kAllocWide) {
        e.is_free = false;
        e.size = w[i + 2];
        e.stack = static_cast<uint32_t>(w[i + 3]);
      } else {
        break;  // corrupt chunk: stop here rather than misread the rest
      }
      fn(e);
      i += need;
    }
  }
}

}  // namespace mlprof
