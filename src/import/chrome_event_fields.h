// What the Chrome event parser's two paths (the plain-JSON fast path and simdjson's On-Demand
// path) share: which event field a key names, and how string ids are read.
#pragma once

#include <cstdint>
#include <string_view>

namespace mlprof::import {

enum class FieldKind {
  kPh,
  kName,
  kCat,
  kPid,
  kTid,
  kTs,
  kDur,
  kTts,   // thread (CPU) clock at the event, as ts
  kTdur,  // thread (CPU) time of an 'X' event, as dur
  kId,
  kBp,
  kScope,
  kArgs,
  kId2,
  kBindId,  // flow v2: the flow this slice starts, continues or ends
  kFlowIn,
  kFlowOut,
  kOther
};

inline FieldKind classify(std::string_view k) {
  switch (k.size()) {
    case 2:
      if (k == "ph") return FieldKind::kPh;
      if (k == "ts") return FieldKind::kTs;
      if (k == "id") return FieldKind::kId;
      if (k == "bp") return FieldKind::kBp;
      break;
    case 1:
      if (k == "s") return FieldKind::kScope;
      break;
    case 3:
      if (k == "pid") return FieldKind::kPid;
      if (k == "tid") return FieldKind::kTid;
      if (k == "cat") return FieldKind::kCat;
      if (k == "dur") return FieldKind::kDur;
      if (k == "tts") return FieldKind::kTts;
      if (k == "id2") return FieldKind::kId2;
      break;
    case 4:
      if (k == "name") return FieldKind::kName;
      if (k == "args") return FieldKind::kArgs;
      if (k == "tdur") return FieldKind::kTdur;
      break;
    case 7:
      if (k == "bind_id") return FieldKind::kBindId;
      if (k == "flow_in") return FieldKind::kFlowIn;
      break;
    case 8:
      if (k == "flow_out") return FieldKind::kFlowOut;
      break;
  }
  return FieldKind::kOther;
}

// A flow id written as a string: "0x1f" is hex, digits are decimal, anything else is hashed.
uint64_t id_from_text(std::string_view s);

}  // namespace mlprof::import
