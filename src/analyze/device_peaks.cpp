#include "mlprof/analyze/device_peaks.h"

#include <simdjson.h>

#include <algorithm>
#include <cctype>

namespace mlprof {

namespace {

// Dense figures only (NVIDIA's datasheets print "with sparsity" figures marked * that are twice
// the dense ones; those are halved here). Names are matched as whole words of the device name,
// most specific first ("H100 NVL" before "H100", "GH200" before "H200").
// Columns: name, fp64, fp32 (vector), tf32, fp16, bf16, fp8, int8, fp32 on matrix units,
// DRAM GB/s, source.
const std::vector<DevicePeaks> kTable = {
    // NVIDIA Blackwell
    {"GB200", 45, 0, 1250, 2500, 2500, 5000, 5000, 0, 8000,
     "NVIDIA GB200 NVL72 datasheet (2024), per GPU (half of the per-superchip figures), dense; "
     "HBM3e 8 TB/s"},
    {"B200", 37, 0, 1100, 2250, 2250, 4500, 4500, 0, 8000,
     "NVIDIA HGX B200 datasheet (2024), per GPU, dense; HBM3e 8 TB/s"},
    // NVIDIA Hopper
    {"GH200", 33.5, 66.9, 494.7, 989.4, 989.4, 1978.9, 1978.9, 0, 4000,
     "NVIDIA GH200 Grace Hopper Superchip datasheet (2023): the H100 SXM5 compute; HBM3 4 TB/s"},
    {"H200 NVL", 30, 60, 417.5, 835.5, 835.5, 1670.5, 1670.5, 0, 4800,
     "NVIDIA H200 NVL datasheet (2024), dense (half of the sparsity figures); HBM3e 4.8 TB/s"},
    {"H200", 33.5, 66.9, 494.7, 989.4, 989.4, 1978.9, 1978.9, 0, 4800,
     "NVIDIA H200 SXM datasheet (2024): H100 SXM5 compute; HBM3e 4.8 TB/s"},
    {"H100 NVL", 30, 60, 417.5, 835.5, 835.5, 1670.5, 1670.5, 0, 3900,
     "NVIDIA H100 NVL datasheet (2023), dense (half of the sparsity figures); HBM3 3.9 TB/s"},
    {"H100 PCIe", 25.6, 51.2, 378, 756, 756, 1513, 1513, 0, 2000,
     "NVIDIA H100 Tensor Core GPU Architecture whitepaper (2022), Table 1, H100 PCIe dense; "
     "HBM2e 2 TB/s (H100 datasheet)"},
    {"H100", 33.5, 66.9, 494.7, 989.4, 989.4, 1978.9, 1978.9, 0, 3350,
     "NVIDIA H100 Tensor Core GPU Architecture whitepaper (2022), Table 1, H100 SXM5 dense; "
     "HBM3 3.35 TB/s (H100 datasheet)"},
    // NVIDIA Ada
    {"L40S", 0, 91.6, 183, 362, 362, 733, 733, 0, 864,
     "NVIDIA L40S datasheet (2023), dense (half of the sparsity figures); GDDR6 864 GB/s"},
    {"L40", 0, 90.5, 90.5, 181, 181, 362, 362, 0, 864,
     "NVIDIA L40 datasheet (2022), dense; GDDR6 864 GB/s"},
    {"L4", 0, 30.3, 60, 121, 121, 242.5, 242.5, 0, 300,
     "NVIDIA L4 datasheet (2023), dense (half of the sparsity figures); GDDR6 300 GB/s"},
    // NVIDIA Ampere
    {"A100 80GB PCIe", 9.7, 19.5, 156, 312, 312, 0, 624, 0, 1935,
     "NVIDIA A100 datasheet (2021), dense; A100 80GB PCIe HBM2e 1,935 GB/s"},
    {"A100-PCIE-40GB", 9.7, 19.5, 156, 312, 312, 0, 624, 0, 1555,
     "NVIDIA A100 datasheet (2020), dense; A100 40GB PCIe HBM2 1,555 GB/s"},
    {"A100-SXM4-40GB", 9.7, 19.5, 156, 312, 312, 0, 624, 0, 1555,
     "NVIDIA A100 datasheet (2020), dense; A100 40GB SXM HBM2 1,555 GB/s"},
    {"A100", 9.7, 19.5, 156, 312, 312, 0, 624, 0, 2039,
     "NVIDIA A100 datasheet (2021), dense; A100 80GB SXM HBM2e 2,039 GB/s"},
    {"A10", 0, 31.2, 62.5, 125, 125, 0, 250, 0, 600,
     "NVIDIA A10 datasheet (2021), dense (half of the sparsity figures); GDDR6 600 GB/s"},
    // NVIDIA Volta / Turing
    {"V100S", 8.2, 16.4, 0, 130, 0, 0, 0, 0, 1134, "NVIDIA V100S PCIe datasheet (2019)"},
    {"V100-PCIE", 7, 14, 0, 112, 0, 0, 0, 0, 900, "NVIDIA V100 datasheet (2018), PCIe"},
    {"V100", 7.8, 15.7, 0, 125, 0, 0, 0, 0, 900, "NVIDIA V100 datasheet (2018), SXM2"},
    {"T4", 0, 8.1, 0, 65, 0, 0, 130, 0, 320, "NVIDIA T4 datasheet (2019); GDDR6 320 GB/s"},
    // AMD CDNA (AMD Instinct datasheets: peak dense figures, "with structured sparsity" excluded)
    {"MI355X", 78.6, 157.3, 0, 2516.6, 2516.6, 5033.2, 5033.2, 157.3, 8000,
     "AMD Instinct MI355X datasheet (2025), dense; HBM3E 8 TB/s"},
    {"MI350X", 72.1, 144.2, 0, 2306.9, 2306.9, 4613.7, 4613.7, 144.2, 8000,
     "AMD Instinct MI350X datasheet (2025), dense; HBM3E 8 TB/s"},
    {"MI325X", 81.7, 163.4, 653.7, 1307.4, 1307.4, 2614.9, 2614.9, 163.4, 6000,
     "AMD Instinct MI325X datasheet (2024), dense; HBM3E 6 TB/s"},
    {"MI300X", 81.7, 163.4, 653.7, 1307.4, 1307.4, 2614.9, 2614.9, 163.4, 5300,
     "AMD Instinct MI300X datasheet (2023), dense; HBM3 5.3 TB/s"},
    {"MI300A", 61.3, 122.6, 490.3, 980.6, 980.6, 1961.2, 1961.2, 122.6, 5300,
     "AMD Instinct MI300A datasheet (2023), dense; HBM3 5.3 TB/s"},
    {"MI250X", 47.9, 47.9, 0, 383, 383, 0, 383, 95.7, 3276.8,
     "AMD Instinct MI250X datasheet (2021); HBM2e 3.2768 TB/s"},
    {"MI250", 45.3, 45.3, 0, 362.1, 362.1, 0, 362.1, 90.5, 3276.8,
     "AMD Instinct MI250 datasheet (2021); HBM2e 3.2768 TB/s"},
    {"MI210", 22.6, 22.6, 0, 181, 181, 0, 181, 45.3, 1638.4,
     "AMD Instinct MI210 datasheet (2022); HBM2e 1.6384 TB/s"},
    {"MI100", 11.5, 23.1, 0, 184.6, 92.3, 0, 184.6, 46.1, 1228.8,
     "AMD Instinct MI100 datasheet (2020); HBM2 1.2288 TB/s"},
};

bool alnum(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }

char lower(char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); }

// `key` occurs in `name` as whole words (case-insensitive): "A10" is not in "A100", "H200" is
// not in "GH200".
bool word_match(std::string_view name, std::string_view key) {
  if (key.empty() || key.size() > name.size()) return false;
  for (size_t i = 0; i + key.size() <= name.size(); ++i) {
    bool eq = true;
    for (size_t k = 0; k < key.size() && eq; ++k) eq = lower(name[i + k]) == lower(key[k]);
    if (!eq) continue;
    bool left = i == 0 || !alnum(name[i - 1]);
    bool right = i + key.size() == name.size() || !alnum(name[i + key.size()]);
    if (left && right) return true;
  }
  return false;
}

}  // namespace

const std::vector<DevicePeaks>& device_peaks_table() { return kTable; }

std::optional<DevicePeaks> find_device_peaks(std::string_view device_name,
                                             const std::vector<DevicePeaks>& extra) {
  // A --peaks row named as the whole device name, or as a word of it, wins over the table.
  // PyTorch's keys carry the vendor ("AMD MI300X" for "AMD Instinct MI300X"): also without it.
  for (const DevicePeaks& p : extra) {
    std::string_view key = p.name;
    if (key == device_name || word_match(device_name, key)) return p;
    for (std::string_view vendor : {"NVIDIA ", "AMD ", "AMD Instinct "})
      if (key.starts_with(vendor) && word_match(device_name, key.substr(vendor.size()))) return p;
  }
  for (const DevicePeaks& p : kTable)
    if (word_match(device_name, p.name)) return p;
  return std::nullopt;
}

double peak_tflops(const DevicePeaks& p, std::string_view dtype, bool matrix) {
  if (dtype == "fp64") return p.fp64;
  if (!matrix) return p.fp32;  // vector ALUs: the fp32 (non-tensor) peak
  if (dtype == "bf16") return p.bf16;
  if (dtype == "fp16") return p.fp16;
  if (dtype == "fp8") return p.fp8 > 0 ? p.fp8 : 0;
  if (dtype == "int8") return p.int8;
  if (dtype == "fp32") return p.fp32_matrix > 0 ? p.fp32_matrix : p.fp32;
  return 0;
}

Result<std::vector<DevicePeaks>> parse_device_peaks_json(std::string_view json,
                                                         std::string_view source) {
  namespace dom = simdjson::dom;
  dom::parser parser;
  simdjson::padded_string padded(json);
  dom::element root;
  if (parser.parse(padded).get(root) != simdjson::SUCCESS) return Status::error("not valid JSON");
  dom::object obj;
  if (root.get_object().get(obj) != simdjson::SUCCESS)
    return Status::error("expected an object of devices ({\"NVIDIA H100\": {\"tops\": ...}})");
  std::vector<DevicePeaks> out;
  for (auto [key, value] : obj) {
    if (key.empty() || key.front() == '_') continue;  // comments
    dom::object dev;
    if (value.get_object().get(dev) != simdjson::SUCCESS)
      return Status::error("device \"" + std::string(key) + "\": expected an object");
    DevicePeaks p;
    p.name = std::string(key);
    p.source = std::string(source);
    dom::object tops;
    if (dev["tops"].get_object().get(tops) == simdjson::SUCCESS) {
      for (auto [dt, v] : tops) {
        double x = 0;
        if (v.get_double().get(x) != simdjson::SUCCESS) {
          int64_t i = 0;
          if (v.get_int64().get(i) != simdjson::SUCCESS)
            return Status::error("device \"" + p.name + "\": tops." + std::string(dt) +
                                 " is not a number");
          x = static_cast<double>(i);
        }
        if (x < 0) return Status::error("device \"" + p.name + "\": negative peak");
        if (dt == "float64")
          p.fp64 = x;
        else if (dt == "float32")
          p.fp32 = x;
        else if (dt == "float32_matrix")
          p.fp32_matrix = x;
        else if (dt == "tf32")
          p.tf32 = x;
        else if (dt == "float16")
          p.fp16 = x;
        else if (dt == "bfloat16")
          p.bf16 = x;
        else if (dt == "float8" || dt.starts_with("float8_"))
          p.fp8 = std::max(p.fp8, x);
        else if (dt == "int8")
          p.int8 = x;
      }
    }
    dom::element bw;
    if (dev["dram_bw_gbs"].get(bw) == simdjson::SUCCESS) {
      double x = 0;
      int64_t i = 0;
      if (bw.get_double().get(x) == simdjson::SUCCESS)
        p.mem_gbs = x;
      else if (bw.get_int64().get(i) == simdjson::SUCCESS)
        p.mem_gbs = static_cast<double>(i);
      else
        return Status::error("device \"" + p.name + "\": dram_bw_gbs is not a number");
    }
    if (p.mem_gbs <= 0 && p.bf16 <= 0 && p.fp32 <= 0)
      return Status::error("device \"" + p.name + "\": no tops and no dram_bw_gbs");
    out.push_back(std::move(p));
  }
  if (out.empty()) return Status::error("no devices");
  return out;
}

}  // namespace mlprof
