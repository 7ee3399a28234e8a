#include "mlprof/trace.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace mlprof {

// Every event table is exactly its declared column list (mlprof/table_schema.h).
static_assert(
    [] {
      bool ok = true;
      Trace::for_each_table([&](std::string_view, auto member) {
        ok = ok && schema::well_formed<typename schema::MemberOf<decltype(member)>::Type>();
      });
      return ok;
    }(),
    "a Trace table declares a member outside its MLPROF_*_COLUMNS list, or lists a computed "
    "column before an input column");

std::optional<int64_t> Arg::as_int() const {
  switch (type) {
    case ArgType::kInt:
      return i;
    case ArgType::kUInt:
      if (u <= static_cast<uint64_t>(INT64_MAX)) return static_cast<int64_t>(u);
      return std::nullopt;
    case ArgType::kBool:
      return b ? 1 : 0;
    case ArgType::kDouble:
      if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 9.2e18)
        return static_cast<int64_t>(d);
      return std::nullopt;
    default:
      return std::nullopt;
  }
}

std::optional<double> Arg::as_double() const {
  switch (type) {
    case ArgType::kInt:
      return static_cast<double>(i);
    case ArgType::kUInt:
      return static_cast<double>(u);
    case ArgType::kDouble:
      return d;
    case ArgType::kBool:
      return b ? 1.0 : 0.0;
    default:
      return std::nullopt;
  }
}

const Arg* Trace::find_arg(uint32_t begin, uint32_t count, StringId key) const {
  for (uint32_t i = begin; i < begin + count; ++i)
    if (args[i].key == key) return &args[i];
  return nullptr;
}

const Arg* Trace::find_arg(uint32_t begin, uint32_t count, std::string_view key) const {
  StringId id = strings.find(key);
  if (id == StringPool::kNotFound) return nullptr;
  return find_arg(begin, count, id);
}

const Arg* Trace::slice_arg(size_t i, std::string_view key) const {
  return find_arg(slices.args_begin[i], slices.args_count[i], key);
}

const Arg* Trace::instant_arg(size_t i, std::string_view key) const {
  return find_arg(instants.args_begin[i], instants.args_count[i], key);
}

std::string Trace::arg_text(const Arg& a) const {
  char buf[64];
  switch (a.type) {
    case ArgType::kNull:
      return "null";
    case ArgType::kBool:
      return a.b ? "true" : "false";
    case ArgType::kInt:
      return std::to_string(a.i);
    case ArgType::kUInt:
      return std::to_string(a.u);
    case ArgType::kDouble:
      std::snprintf(buf, sizeof buf, "%.17g", a.d);
      return buf;
    case ArgType::kString:
    case ArgType::kJson:
      return std::string(str(a.s));
  }
  return {};
}

int32_t Trace::enclosing_slice(uint32_t track, int64_t t) const {
  if (track + 1 >= track_slice_begin.size()) return -1;
  uint32_t b = track_slice_begin[track], e = track_slice_begin[track + 1];
  // Last slice starting at or before t; the deepest enclosing slice is it or an ancestor.
  auto it = std::upper_bound(slices.ts.begin() + b, slices.ts.begin() + e, t);
  if (it == slices.ts.begin() + b) return -1;
  int32_t i = static_cast<int32_t>(it - slices.ts.begin()) - 1;
  while (i >= 0 && slices.end(i) < t) i = slices.parent[i];
  return i;
}

std::string Trace::track_label(uint32_t track) const {
  const Track& tr = tracks[track];
  const Process& p = processes[tr.process];
  std::string out;
  if (tr.kind == TrackKind::kGpuStream) {
    out = "GPU " + std::to_string(tr.device) + " stream " + std::to_string(tr.stream);
    return out;
  }
  std::string pid = p.label ? std::string(str(p.label)) : std::to_string(p.pid);
  std::string tid = tr.label ? std::string(str(tr.label)) : std::to_string(tr.tid);
  if (tr.name) out = std::string(str(tr.name)) + " ";
  out += "(pid " + pid + " tid " + tid + ")";
  return out;
}

}  // namespace mlprof
