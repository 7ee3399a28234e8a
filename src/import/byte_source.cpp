#include "import/byte_source.h"

#include <fcntl.h>
#include <isa-l.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

namespace mlprof::import {

namespace {

// Raw bytes: a file descriptor or a memory range.
class RawInput {
 public:
  virtual ~RawInput() = default;
  virtual ssize_t read(char* dst, size_t n) = 0;  // -1 on error (errno set)
};

class FdInput : public RawInput {
 public:
  explicit FdInput(int fd) : fd_(fd) {}
  ~FdInput() override { ::close(fd_); }
  ssize_t read(char* dst, size_t n) override {
    for (;;) {
      ssize_t r = ::read(fd_, dst, n);
      if (r < 0 && errno == EINTR) continue;
      return r;
    }
  }

 private:
  int fd_;
};

class MemInput : public RawInput {
 public:
  MemInput(const char* p, size_t n) : p_(p), left_(n) {}
  ssize_t read(char* dst, size_t n) override {
    size_t k = n < left_ ? n : left_;
    std::memcpy(dst, p_, k);
    p_ += k;
    left_ -= k;
    return static_cast<ssize_t>(k);
  }

 private:
  const char* p_;
  size_t left_;
};

class PlainSource : public ByteSource {
 public:
  PlainSource(std::unique_ptr<RawInput> in, std::string name, std::string prefix)
      : in_(std::move(in)), name_(std::move(name)), prefix_(std::move(prefix)) {}
  size_t read(char* dst, size_t n) override {
    size_t done = 0;
    if (prefix_pos_ < prefix_.size()) {
      size_t k = std::min(n, prefix_.size() - prefix_pos_);
      std::memcpy(dst, prefix_.data() + prefix_pos_, k);
      prefix_pos_ += k;
      done = k;
    }
    while (done < n) {
      ssize_t r = in_->read(dst + done, n - done);
      if (r < 0) {
        status_ = Status::error(StatusCode::kIo, name_ + ": read error: " + std::strerror(errno));
        return 0;
      }
      if (r == 0) break;
      done += static_cast<size_t>(r);
      consumed_ += static_cast<uint64_t>(r);
    }
    return done;
  }
  uint64_t file_bytes_read() const override { return consumed_ + prefix_pos_; }

 private:
  std::unique_ptr<RawInput> in_;
  std::string name_;
  std::string prefix_;  // bytes already read for detection
  size_t prefix_pos_ = 0;
  uint64_t consumed_ = 0;
};

class GzipSource : public ByteSource {
 public:
  // `input_bytes`: the compressed size when known (0 if not): a small input gets a small
  // buffer (the fuzzer inflates thousands of tiny streams a second).
  GzipSource(std::unique_ptr<RawInput> in, std::string name, std::string prefix,
             uint64_t input_bytes)
      : in_(std::move(in)),
        name_(std::move(name)),
        inbuf_size_(input_bytes
                        ? std::max<size_t>(prefix.size(), std::min<uint64_t>(kInBytes, input_bytes))
                        : kInBytes),
        inbuf_(new char[inbuf_size_]) {
    isal_inflate_init(&state_);
    state_.crc_flag = ISAL_GZIP;
    std::memcpy(inbuf_.get(), prefix.data(), prefix.size());
    in_len_ = prefix.size();
    compressed_read_ = prefix.size();
    state_.next_in = reinterpret_cast<uint8_t*>(inbuf_.get());
    state_.avail_in = static_cast<uint32_t>(in_len_);
  }

  // On an error, returns the bytes inflated before it (the importer keeps the events they
  // hold), and what inflated while the error was found is dropped; the next call returns 0.
  // Inflate is called on whole units of kUnitBytes of output, into the reader's buffer when it
  // has room for a unit and into unit_ otherwise, so where inflate stops on a corrupt stream
  // (and so the text the importer sees) never depends on the sizes the reader asks for.
  size_t read(char* dst, size_t n) override {
    size_t done = 0;
    for (;;) {
      if (unit_pos_ < unit_len_) {
        size_t k = std::min(n - done, unit_len_ - unit_pos_);
        std::memcpy(dst + done, unit_.get() + unit_pos_, k);
        unit_pos_ += k;
        done += k;
      }
      if (done == n || !status_ || finished_) return done;
      if (n - done >= kUnitBytes) {
        size_t got = inflate_unit(dst + done, kUnitBytes);
        done += got;
        if (got < kUnitBytes) return done;  // the end of the stream, or an error
      } else {
        if (!unit_) unit_.reset(new char[kUnitBytes]);
        unit_len_ = inflate_unit(unit_.get(), kUnitBytes);
        unit_pos_ = 0;
        if (unit_len_ == 0) return done;
      }
    }
  }

 private:
  size_t inflate_unit(char* dst, size_t n) {
    if (!status_ || finished_) return 0;
    size_t done = 0;
    while (done < n) {
      if (state_.avail_in == 0 && !input_eof_) {
        ssize_t r = in_->read(inbuf_.get(), inbuf_size_);
        if (r < 0) {
          status_ = Status::error(StatusCode::kIo, name_ + ": read error: " + std::strerror(errno));
          return 0;
        }
        if (r == 0) input_eof_ = true;
        compressed_read_ += static_cast<uint64_t>(r);
        state_.next_in = reinterpret_cast<uint8_t*>(inbuf_.get());
        state_.avail_in = static_cast<uint32_t>(r);
      }
      if (state_.block_state == ISAL_BLOCK_FINISH) {
        // End of one gzip member; concatenated members continue the stream.
        if (state_.avail_in == 0 && input_eof_) {
          finished_ = true;
          break;
        }
        if (state_.avail_in == 0) continue;
        uint8_t* next = state_.next_in;
        uint32_t avail = state_.avail_in;
        isal_inflate_reset(&state_);
        state_.crc_flag = ISAL_GZIP;
        state_.next_in = next;
        state_.avail_in = avail;
      }
      size_t chunk = std::min<size_t>(n - done, 1u << 30);
      state_.next_out = reinterpret_cast<uint8_t*>(dst + done);
      state_.avail_out = static_cast<uint32_t>(chunk);
      uint32_t before_in = state_.avail_in;
      int rc = isal_inflate(&state_);
      size_t produced = chunk - state_.avail_out;
      done += produced;
      if (rc < 0) {
        status_ = Status::error(name_ + ": corrupt gzip data near compressed byte " +
                                std::to_string(compressed_read_ - state_.avail_in) + " (" +
                                describe(rc) + ")");
        return done - produced;  // what came before the bad block is good
      }
      if (produced == 0 && before_in == state_.avail_in &&
          state_.block_state != ISAL_BLOCK_FINISH) {
        if (input_eof_ && state_.avail_in == 0) {
          status_ = Status::error(name_ + ": truncated gzip stream (ends after " +
                                  std::to_string(compressed_read_) + " compressed bytes)");
          return done;  // every byte inflated before the cut is good
        }
      }
    }
    return done;
  }

 public:
  uint64_t file_bytes_read() const override { return compressed_read_; }

 private:
  static std::string describe(int rc) {
    switch (rc) {
      case ISAL_INVALID_BLOCK:
        return "invalid deflate block";
      case ISAL_INVALID_SYMBOL:
        return "invalid deflate symbol";
      case ISAL_INVALID_LOOKBACK:
        return "invalid lookback distance";
      case ISAL_INVALID_WRAPPER:
        return "invalid gzip header";
      case ISAL_UNSUPPORTED_METHOD:
        return "unsupported compression method";
      case ISAL_INCORRECT_CHECKSUM:
        return "checksum mismatch";
      default:
        return "inflate error " + std::to_string(rc);
    }
  }
  static constexpr size_t kInBytes = 1 << 20;
  static constexpr size_t kUnitBytes = 64 << 10;
  std::unique_ptr<char[]> unit_;  // one unit of output, for reads smaller than a unit
  size_t unit_pos_ = 0, unit_len_ = 0;
  std::unique_ptr<RawInput> in_;
  std::string name_;
  size_t inbuf_size_;
  std::unique_ptr<char[]> inbuf_;
  size_t in_len_ = 0;
  inflate_state state_{};
  bool input_eof_ = false;
  bool finished_ = false;
  uint64_t compressed_read_ = 0;
};

// What a failed open() is: a missing file or a path that does not resolve (404 in serve, exit 2),
// one this user may not read (403), else the system refused (a read error, too many open files).
StatusCode open_error_code(int e) {
  if (e == ENOENT || e == ENOTDIR || e == ELOOP || e == ENAMETOOLONG) return StatusCode::kNotFound;
  if (e == EACCES || e == EPERM) return StatusCode::kPermissionDenied;
  return StatusCode::kIo;
}

std::unique_ptr<ByteSource> make_source(std::unique_ptr<RawInput> in, const std::string& name,
                                        uint64_t input_bytes, Status* error) {
  // Read two bytes to detect gzip (1f 8b), then hand them to the chosen source.
  char head[2];
  size_t got = 0;
  while (got < 2) {
    ssize_t r = in->read(head + got, 2 - got);
    if (r < 0) {
      *error = Status::error(StatusCode::kIo, name + ": read error: " + std::strerror(errno));
      return nullptr;
    }
    if (r == 0) break;
    got += static_cast<size_t>(r);
  }
  std::string prefix(head, got);
  if (got == 2 && static_cast<unsigned char>(head[0]) == 0x1f &&
      static_cast<unsigned char>(head[1]) == 0x8b)
    return std::make_unique<GzipSource>(std::move(in), name, prefix, input_bytes);
  return std::make_unique<PlainSource>(std::move(in), name, prefix);
}

}  // namespace

Result<std::unique_ptr<ByteSource>> open_byte_source(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    int e = errno;
    return Status::error(open_error_code(e), path + ": cannot open: " + std::strerror(e));
  }
  struct stat st;
  if (::fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
    ::close(fd);
    return Status::error(path + ": is a directory, expected a trace file");
  }
  ::posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
  uint64_t file_size = static_cast<uint64_t>(st.st_size);
  // gzip's trailer holds the uncompressed size modulo 4 GiB.
  uint32_t isize = 0;
  if (file_size >= 18 && ::pread(fd, &isize, 4, static_cast<off_t>(file_size - 4)) != 4) isize = 0;
  Status err;
  auto src = make_source(std::make_unique<FdInput>(fd), path, file_size, &err);
  if (!src) return err;
  bool gz = dynamic_cast<GzipSource*>(src.get()) != nullptr;
  src->set_size_hint(gz ? std::max<uint64_t>(isize, file_size) : file_size);
  return src;
}

std::unique_ptr<ByteSource> memory_byte_source(const char* data, size_t size,
                                               const std::string& name) {
  Status err;
  return make_source(std::make_unique<MemInput>(data, size), name, size, &err);
}

}  // namespace mlprof::import
