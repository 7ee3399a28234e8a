// Protobuf wire-format walking over a byte span, with libprotobuf's CodedInputStream doing the
// decoding: the XSpace and Perfetto readers list the fields they read by number and skip the
// rest. A malformed message (truncated varint, length past the end, bad wire type) is reported
// with its byte offset, never read past.
#pragma once

#include <google/protobuf/io/coded_stream.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace mlprof::import {

struct ProtoSpan {
  const uint8_t* data = nullptr;
  size_t size = 0;
  std::string_view str() const { return {reinterpret_cast<const char*>(data), size}; }
};

// One field: its number, wire type and value (varint / fixed, or the bytes of a
// length-delimited field).
struct ProtoField {
  uint32_t number = 0;
  uint32_t wire_type = 0;
  uint64_t u = 0;
  ProtoSpan bytes;
  uint64_t offset = 0;  // where `bytes` start in the file (nested messages' error offsets)
  int64_t i64() const { return static_cast<int64_t>(u); }
  double as_double() const {
    double d;
    std::memcpy(&d, &u, sizeof d);
    return d;
  }
};

// Calls f(const ProtoField&) for every field of the message in `msg`; false (with `error` set to
// "byte N: what", N from `base`) when the message is malformed.
template <typename F>
bool for_each_field(ProtoSpan msg, uint64_t base, std::string& error, F&& f) {
  if (msg.size > static_cast<size_t>(INT32_MAX)) {  // CodedInputStream counts in int
    error = "byte " + std::to_string(base) + ": a message over 2 GiB";
    return false;
  }
  google::protobuf::io::CodedInputStream in(msg.data, static_cast<int>(msg.size));
  while (true) {
    uint64_t at = base + static_cast<uint64_t>(in.CurrentPosition());
    uint32_t tag = in.ReadTag();
    if (tag == 0) {
      if (static_cast<size_t>(in.CurrentPosition()) == msg.size) return true;
      error = "byte " + std::to_string(at) + ": bad field tag";
      return false;
    }
    ProtoField fld;
    fld.number = tag >> 3;
    fld.wire_type = tag & 7;
    bool ok = false;
    switch (fld.wire_type) {
      case 0:
        ok = in.ReadVarint64(&fld.u);
        break;
      case 1:
        ok = in.ReadLittleEndian64(&fld.u);
        break;
      case 5: {
        uint32_t v = 0;
        ok = in.ReadLittleEndian32(&v);
        fld.u = v;
        break;
      }
      case 2: {
        uint32_t len = 0;
        if (!in.ReadVarint32(&len)) break;
        size_t pos = static_cast<size_t>(in.CurrentPosition());
        if (len > msg.size - pos) {
          error = "byte " + std::to_string(at) + ": field " + std::to_string(fld.number) + " is " +
                  std::to_string(len) + " bytes long, past the end of its message";
          return false;
        }
        fld.bytes = ProtoSpan{msg.data + pos, len};
        ok = in.Skip(static_cast<int>(len));
        fld.offset = base + pos;
        break;
      }
      default:
        error = "byte " + std::to_string(at) + ": wire type " + std::to_string(fld.wire_type) +
                " (field " + std::to_string(fld.number) + ") is not one protobuf encodes";
        return false;
    }
    if (!ok) {
      error = "byte " + std::to_string(at) + ": field " + std::to_string(fld.number) + " cut short";
      return false;
    }
    f(fld);
  }
}

}  // namespace mlprof::import
