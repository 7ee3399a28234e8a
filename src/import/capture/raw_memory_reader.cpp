#include "import/capture/raw_memory_reader.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

#include <algorithm>
#include <cstring>

#include "trace/formats/raw_memory_format.h"

namespace mlprof {

namespace {

using namespace rawmem;

template <typename T>
T read_at(const char* data, size_t off) {
  T v;
  std::memcpy(&v, data + off, sizeof(T));
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

Result<RawMemoryFile> RawMemoryFile::open(const std::string& path, bool populate) {
  RawMemoryFile f;
  f.path_ = path;
  {
    // Mapped, not read: the file was just written and sits in the page cache, so this costs no
    // copy and no fresh (zeroed) pages; MAP_POPULATE maps it in one go instead of per fault.
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return Status::error(path + ": cannot open");
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
      ::close(fd);
      return Status::error(path + ": cannot stat");
    }
    size_t size = static_cast<size_t>(std::max<off_t>(st.st_size, 0));
    if (size > 0) {
      void* p =
          ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE | (populate ? MAP_POPULATE : 0), fd, 0);
      if (p == MAP_FAILED) {
        ::close(fd);
        return Status::error(path + ": cannot map");
      }
      f.mapping_ = std::shared_ptr<const void>(
          p, [size](const void* q) { ::munmap(const_cast<void*>(q), size); });
      f.data_ = static_cast<const char*>(p);
      f.size_ = size;
    }
    ::close(fd);
  }
  const char* d = f.data_;
  const size_t dsize = f.size_;
  std::vector<std::pair<uint64_t, int64_t>> clock;  // (tsc, ns)
  size_t off = 0;
  bool have_header = false;
  // Unpopulated: what the walk mapped in (a page-cache folio is mapped whole) goes again every
  // few MiB, so reading the headers does not hold the file in memory.
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  size_t released = 0;
  while (off + sizeof(ChunkHeader) <= dsize) {
    if (!populate && off - released >= (size_t{8} << 20)) {
      size_t upto = off & ~(page - 1);
      ::madvise(const_cast<char*>(d) + released, upto - released, MADV_DONTNEED);
      released = upto;
    }
    auto ch = read_at<ChunkHeader>(d, off);
    size_t body = off + sizeof(ChunkHeader);
    if (body + ch.size > dsize) break;
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
        f.exe_.assign(d + body + sizeof(FileHeader), n);
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
        f.event_chunks_.push_back(
            RawEventChunk{eh.tid, d + body + sizeof(EventsHeader), eh.words, eh.events});
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
        if (sh.depth > 0)  // an empty stack: no pcs to copy (and data() may be null)
          std::memcpy(pcs.data(), d + body + sizeof(StackHeader), sh.depth * 8);
        break;
      }
      case kMaps:
        f.maps_.assign(d + body, ch.size);
        break;
      case kExit: {
        if (ch.size < sizeof(ExitRecord)) return Status::error(path + ": bad exit record");
        auto er = read_at<ExitRecord>(d, body);
        f.exited_ = true;
        f.exit_ns_ = er.mono_ns;
        f.dropped_ = er.dropped;
        clock.emplace_back(er.tsc, er.mono_ns);
        break;
      }
      default:
        return Status::error(path + ": unknown chunk kind " + std::to_string(ch.kind) +
                             " at offset " + std::to_string(off));
    }
    off = body + ch.size;
  }
  f.truncated_bytes_ = dsize - off;
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

void RawMemoryFile::release_pages(size_t begin, size_t end) const {
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  end = std::min(end, size_);
  begin = (begin + page - 1) & ~(page - 1);
  if (end != size_) end &= ~(page - 1);  // the mapping's end may be mid-page
  if (data_ && end > begin) ::madvise(const_cast<char*>(data_) + begin, end - begin, MADV_DONTNEED);
}

size_t RawMemoryFile::event_count() const {
  size_t n = 0;
  for (const RawEventChunk& c : event_chunks_) {
    if (c.events != 0) {  // counted by the writer; at most one event per two words
      n += std::min<size_t>(c.events, c.count / 2);
      continue;
    }
    for (size_t i = 0; i < c.count;) {
      uint64_t w0;
      std::memcpy(&w0, c.words + i * 8, 8);
      uint64_t kind = w0 >> kKindShift;
      size_t need = kind == kAlloc ? 3 : kind == kAllocWide ? 4 : kind == kFree ? 2 : 0;
      if (need == 0 || i + need > c.count) break;  // as decode(): the rest is skipped
      ++n;
      i += need;
    }
  }
  return n;
}

void RawMemoryFile::for_each_event(const std::function<void(const RawMemoryEvent&)>& fn) const {
  RawMemoryEvent e;
  for (const RawEventChunk& c : event_chunks_) {
    e.tid = c.tid;
    for (size_t i = 0, n; (n = decode(c, i, e)) != 0; i += n) fn(e);
  }
}

}  // namespace mlprof
