#include "import/proton_importer.h"

#include <simdjson.h>

#include <cmath>
#include <cstdlib>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "import/import_report.h"

namespace mlprof::import {

namespace {

using simdjson::dom::array;
using simdjson::dom::element;
using simdjson::dom::object;

// A metric as a number (Proton writes ints and floats; device ids as strings).
std::optional<double> number(element e) {
  double d;
  if (e.get_double().get(d) == simdjson::SUCCESS) return d;
  int64_t i;
  if (e.get_int64().get(i) == simdjson::SUCCESS) return static_cast<double>(i);
  uint64_t u;
  if (e.get_uint64().get(u) == simdjson::SUCCESS) return static_cast<double>(u);
  std::string_view s;
  if (e.get_string().get(s) == simdjson::SUCCESS && !s.empty()) {
    char* end = nullptr;
    std::string t(s);
    double v = std::strtod(t.c_str(), &end);
    if (end && *end == '\0') return v;
  }
  return std::nullopt;
}

// The device a Proton arch names, for the peak table (device_peaks.h): CUDA compute capability
// "90" with 132 SMs is an H100 SXM; HIP "gfx942" an MI300X. Ambiguous archs (sm_89: L4, L40,
// L40S, RTX 4090) keep a generic name: pass --device.
std::string device_name(std::string_view type, const std::string& arch, int64_t sms) {
  if (type == "CUDA") {
    if (arch == "80") return "NVIDIA A100 (sm_80)";
    if (arch == "90")
      return sms == 114   ? "NVIDIA H100 PCIe (sm_90)"
             : sms == 132 ? "NVIDIA H100 SXM (sm_90)"
                          : "NVIDIA sm_90 GPU";
    if (arch == "100") return "NVIDIA B200 (sm_100)";
    return "NVIDIA sm_" + arch + " GPU";
  }
  if (type == "HIP") {
    if (arch == "gfx942")
      return sms == 228 ? "AMD Instinct MI300A (gfx942)" : "AMD Instinct MI300X (gfx942)";
    if (arch == "gfx950") return "AMD Instinct MI355X (gfx950)";
    if (arch == "gfx90a") return "AMD Instinct MI250X (gfx90a)";
    return "AMD " + arch + " GPU";
  }
  return std::string(type) + " " + arch;
}

struct Kernel {
  std::string name, scope;
  int64_t device = 0;
  double count = 0, time_ns = 0, flops = 0, bytes = -1;
  std::string dtype;  // the width of most of its FLOPs
};

struct Walker {
  const std::string& file;
  std::vector<Kernel> kernels;
  std::string error;

  bool walk(element node, const std::string& scope, int depth) {
    if (depth > 256) return fail("the call tree is deeper than 256 frames");
    object o;
    if (node.get_object().get(o) != simdjson::SUCCESS) return fail("a tree node is not an object");
    std::string_view name;
    element frame;
    if (o["frame"].get(frame) != simdjson::SUCCESS ||
        frame["name"].get_string().get(name) != simdjson::SUCCESS)
      return fail("a tree node has no frame name");
    object metrics;
    if (o["metrics"].get_object().get(metrics) != simdjson::SUCCESS)
      return fail("frame \"" + std::string(name) + "\" has no metrics");
    array children;
    bool has_children =
        o["children"].get_array().get(children) == simdjson::SUCCESS && children.size() > 0;
    std::string path = scope.empty() ? std::string(name) : scope + "/" + std::string(name);
    if (has_children) {
      for (element c : children)
        if (!walk(c, depth == 0 ? std::string() : path, depth + 1)) return false;
      return true;
    }
    Kernel k;
    k.name = std::string(name);
    k.scope = scope;
    double best = 0;
    for (auto [key, value] : metrics) {
      auto v = number(value);
      if (key == "device_type") continue;
      if (!v) {
        if (key == "time (ns)" || key == "count" || key == "bytes" || key.starts_with("flops"))
          return fail("frame \"" + k.name + "\": metric \"" + std::string(key) +
                      "\" is not a number");
        continue;
      }
      if (!std::isfinite(*v) || *v < 0)
        return fail("frame \"" + k.name + "\": metric \"" + std::string(key) +
                    "\" is negative or not finite");
      if (key == "time (ns)")
        k.time_ns = *v;
      else if (key == "count")
        k.count = *v;
      else if (key == "bytes")
        k.bytes = *v;
      else if (key == "device_id")
        k.device = static_cast<int64_t>(*v);
      else if (key.starts_with("flops")) {
        // flops8 / flops16 / flops32 / flops64: FLOPs at that operand width.
        k.flops += *v;
        if (*v > best) {
          best = *v;
          std::string_view w = key.substr(5);
          k.dtype = w == "8"    ? "fp8"
                    : w == "16" ? "bf16"
                    : w == "32" ? "fp32"
                    : w == "64" ? "fp64"
                                : "";
        }
      }
    }
    if (k.time_ns > 0) kernels.push_back(std::move(k));
    return true;
  }
  bool fail(std::string why) {
    error = file + ": not a Proton profile this mlprof reads: " + std::move(why);
    return false;
  }
};

}  // namespace

bool looks_like_proton(std::string_view head) {
  size_t i = head.find_first_not_of(" \t\r\n");
  if (i == std::string_view::npos || head[i] != '[') return false;
  size_t j = head.find_first_not_of(" \t\r\n", i + 1);
  if (j == std::string_view::npos || head[j] != '{') return false;
  // A Chrome trace may also be a JSON array of objects: those carry "ph", Proton's "frame".
  size_t f = head.find("\"frame\"", j), m = head.find("\"metrics\"", j);
  size_t ph = head.find("\"ph\"", j);
  return f != std::string_view::npos && m != std::string_view::npos &&
         (ph == std::string_view::npos || ph > f);
}

Result<Trace> import_proton(std::string json, const std::string& name) {
  simdjson::dom::parser parser;
  simdjson::padded_string padded(json);
  json.clear();
  json.shrink_to_fit();
  element doc;
  if (auto err = parser.parse(padded).get(doc); err)
    return Status::error(name + ": not readable Proton JSON: " + simdjson::error_message(err));
  array top;
  if (doc.get_array().get(top) != simdjson::SUCCESS || top.size() == 0)
    return Status::error(name + ": not a Proton profile (expected [tree, devices])");
  Walker w{name, {}, {}};
  if (!w.walk(top.at(0).value_unsafe(), "", 0)) return Status::error(w.error);
  if (w.kernels.empty()) return Status::error(name + ": a Proton profile without kernel time");

  TraceBuilder b;
  ImportReport report;
  // Devices: {"CUDA": {"0": {"arch": "90", "num_sms": 132, ...}}, "HIP": {...}}.
  if (top.size() > 1) {
    object types;
    if (top.at(1).get_object().get(types) == simdjson::SUCCESS) {
      for (auto [type, devs] : types) {
        object d;
        if (devs.get_object().get(d) != simdjson::SUCCESS) continue;
        for (auto [id, props] : d) {
          char* end = nullptr;
          std::string ids(id);
          long long dev = std::strtoll(ids.c_str(), &end, 10);
          if (ids.empty() || !end || *end != '\0') continue;
          std::string arch;
          std::string_view as;
          int64_t ai = 0;
          if (props["arch"].get_string().get(as) == simdjson::SUCCESS)
            arch = std::string(as);
          else if (props["arch"].get_int64().get(ai) == simdjson::SUCCESS)
            arch = std::to_string(ai);
          int64_t sms = 0;
          if (props["num_sms"].get_int64().get(sms) != simdjson::SUCCESS) sms = 0;
          DeviceInfo info;
          info.id = static_cast<int32_t>(dev);
          info.name = device_name(type, arch, sms);
          info.num_sms = static_cast<int32_t>(sms);
          if (type == "CUDA" && arch.size() >= 2) {
            info.compute_major = std::atoi(arch.substr(0, arch.size() - 1).c_str());
            info.compute_minor = arch.back() - '0';
          }
          b.trace().meta.devices.push_back(std::move(info));
        }
      }
    }
  }
  StringId k_kernel = b.intern("kernel"), k_flop = b.intern("kernel_flop"),
           k_gb = b.intern("kernel_num_gb"), k_dtype = b.intern("kernel_flop_dtype"),
           k_count = b.intern("count"), k_scope = b.intern("Proton scope"),
           k_device = b.intern("device"), k_stream = b.intern("stream");
  // No timestamps in a Proton profile: each device's kernels are laid end to end in tree order,
  // each lasting its total time over all its invocations.
  std::map<int64_t, std::pair<uint32_t, int64_t>> track_of;  // device -> (track, next ts)
  for (const Kernel& k : w.kernels) {
    report.read("kernels");
    auto it = track_of.find(k.device);
    if (it == track_of.end()) {
      uint32_t p = b.process(k.device);
      Process& pr = b.trace().processes[p];
      pr.is_gpu = true;
      pr.name = b.intern("GPU " + std::to_string(k.device));
      uint32_t t = b.thread_track(p, 0);
      b.mark_gpu_track(t, static_cast<int32_t>(k.device), 0);
      b.trace().tracks[t].name = b.intern("stream 0");
      it = track_of.emplace(k.device, std::pair<uint32_t, int64_t>{t, 0}).first;
    }
    int64_t dur = std::max<int64_t>(1, std::llround(k.time_ns));
    uint32_t mark = b.args_mark();
    b.arg_int(k_device, k.device);
    b.arg_int(k_stream, 0);
    b.arg_int(k_count, static_cast<int64_t>(std::llround(k.count)));
    b.arg_double(k_flop, k.flops);
    if (k.bytes >= 0) b.arg_double(k_gb, k.bytes / 1e9);
    if (!k.dtype.empty()) b.arg_string(k_dtype, b.intern(k.dtype));
    if (!k.scope.empty()) b.arg_string(k_scope, b.intern(k.scope));
    b.add_slice(it->second.first, it->second.second, dur, b.intern(k.name), k_kernel,
                b.args_since(mark));
    it->second.second += dur;
  }
  ImportStats stats = b.trace().meta.import_stats;
  Trace t = std::move(b).finish();
  t.meta.import_stats = stats;
  t.meta.format = "proton";
  t.meta.source = name;
  report.store(t, "proton");
  return t;
}

}  // namespace mlprof::import
