#include "mlprof/analyze/device_table.h"

#include <algorithm>
#include <cstdio>

#include "mlprof/analyze/kernel_class.h"

namespace mlprof {

namespace {

constexpr uint32_t F16 = kMatFp16, BF16 = kMatBf16, TF32 = kMatTf32, FP8 = kMatFp8, FP4 = kMatFp4,
                   I8 = kMatInt8;

// One row per architecture whose matrix-unit data types differ from its predecessor's. A device
// takes the row of the highest architecture at or below its own (sm_87 Orin -> sm_86,
// sm_103 -> sm_100).
const std::vector<DeviceTableRow> kRows = {
    // NVIDIA: compute capability -> tensor-core input types, from NVIDIA's architecture
    // whitepapers (the dtype lists of each generation's "Tensor Core" section) and the CUDA C++
    // Programming Guide's table of compute capabilities.
    {DeviceVendor::kNvidia, "sm_60", "Pascal", "", 0,
     "NVIDIA Tesla P100 whitepaper (2016): no tensor cores before Volta"},
    {DeviceVendor::kNvidia, "sm_70", "Volta", "tensor cores", F16,
     "NVIDIA Tesla V100 GPU Architecture whitepaper (2017): FP16 multiply, FP32 accumulate only"},
    {DeviceVendor::kNvidia, "sm_75", "Turing", "tensor cores", F16 | I8,
     "NVIDIA Turing GPU Architecture whitepaper (2018): FP16, INT8, INT4"},
    {DeviceVendor::kNvidia, "sm_80", "Ampere", "tensor cores", F16 | BF16 | TF32 | I8,
     "NVIDIA A100 Tensor Core GPU Architecture whitepaper (2020): adds BF16 and TF32"},
    {DeviceVendor::kNvidia, "sm_86", "Ampere (GA10x)", "tensor cores", F16 | BF16 | TF32 | I8,
     "NVIDIA Ampere GA102 GPU Architecture whitepaper (2020)"},
    {DeviceVendor::kNvidia, "sm_89", "Ada Lovelace", "tensor cores", F16 | BF16 | TF32 | FP8 | I8,
     "NVIDIA Ada GPU Architecture whitepaper (2022): adds FP8 (E4M3/E5M2); cuBLASLt FP8 "
     "matmul needs compute capability 8.9"},
    {DeviceVendor::kNvidia, "sm_90", "Hopper", "tensor cores", F16 | BF16 | TF32 | FP8 | I8,
     "NVIDIA H100 Tensor Core GPU Architecture whitepaper (2022)"},
    {DeviceVendor::kNvidia, "sm_100", "Blackwell", "tensor cores",
     F16 | BF16 | TF32 | FP8 | FP4 | I8,
     "NVIDIA Blackwell Architecture Technical Brief (2024): adds FP6/FP4 (NVFP4, MXFP4); PTX "
     "ISA tcgen05.mma kinds f8f6f4/mxf4"},
    {DeviceVendor::kNvidia, "sm_120", "Blackwell (RTX)", "tensor cores",
     F16 | BF16 | TF32 | FP8 | FP4 | I8, "NVIDIA RTX Blackwell GPU Architecture whitepaper (2025)"},
    // AMD: gfx target -> MFMA/WMMA input types, from ROCm's "Data types and precision support"
    // page (rocm.docs.amd.com, reference/precision-support) and the CDNA/RDNA ISA guides.
    {DeviceVendor::kAmd, "gfx908", "CDNA1 (MI100)", "matrix cores (MFMA)", F16 | BF16 | I8,
     "AMD Instinct MI100 CDNA1 ISA reference guide"},
    {DeviceVendor::kAmd, "gfx90a", "CDNA2 (MI200)", "matrix cores (MFMA)", F16 | BF16 | I8,
     "AMD Instinct MI200 CDNA2 ISA reference guide"},
    {DeviceVendor::kAmd, "gfx942", "CDNA3 (MI300)", "matrix cores (MFMA)",
     F16 | BF16 | TF32 | FP8 | I8,
     "AMD Instinct MI300 CDNA3 ISA reference guide: adds FP8 and XF32"},
    {DeviceVendor::kAmd, "gfx950", "CDNA4 (MI350)", "matrix cores (MFMA)",
     F16 | BF16 | FP8 | FP4 | I8, "AMD Instinct CDNA4 ISA reference guide: adds FP6/FP4 (MXFP4)"},
    {DeviceVendor::kAmd, "gfx1030", "RDNA2", "", 0, "AMD RDNA2 ISA guide: no matrix instructions"},
    {DeviceVendor::kAmd, "gfx1100", "RDNA3", "WMMA", F16 | BF16 | I8, "AMD RDNA3 ISA guide (WMMA)"},
    {DeviceVendor::kAmd, "gfx1200", "RDNA4", "WMMA", F16 | BF16 | FP8 | I8,
     "AMD RDNA4 ISA guide: WMMA adds FP8"},
    // MTIA: Meta's accelerator; its dot-product engines run INT8, FP16 and BF16 (MTIA v1,
    // ISCA 2023 "MTIA: First Generation Silicon Targeting Meta's Recommendation Systems"; MTIA
    // v2, Meta's 2024 "next generation MTIA" announcement). Kineto names its kernels by job,
    // not by instruction, so matrix-engine use is not measurable from the trace.
    {DeviceVendor::kMtia, "MTIA", "MTIA", "dot-product engines", F16 | BF16 | I8,
     "Meta MTIA v1 (ISCA 2023) and MTIA v2 (2024) descriptions"},
};

const DeviceTableRow* find_row(DeviceVendor v, std::string_view key) {
  for (const DeviceTableRow& r : kRows)
    if (r.vendor == v && r.key == key) return &r;
  return nullptr;
}

bool contains(std::string_view s, std::string_view p) {
  return s.find(p) != std::string_view::npos;
}

void fill(DeviceCaps& c, const DeviceTableRow* r) {
  if (r == nullptr) return;
  c.family = std::string(r->family);
  c.matrix_unit = std::string(r->matrix_unit);
  c.matrix_dtypes = r->dtypes;
  c.source = std::string(r->source);
}

// The AMD gfx target from Kineto's computeMajor/Minor (hipDeviceProp major/minor) and the name.
std::string_view amd_row_key(const DeviceInfo& d) {
  if (d.compute_major == 9) {
    if (d.compute_minor >= 5) return "gfx950";
    if (d.compute_minor >= 4) return "gfx942";
    return contains(d.name, "MI100") ? "gfx908" : "gfx90a";
  }
  if (d.compute_major >= 12) return "gfx1200";
  if (d.compute_major == 11) return "gfx1100";
  if (d.compute_major == 10) return "gfx1030";
  // No usable numbers: the product name.
  if (contains(d.name, "MI35")) return "gfx950";
  if (contains(d.name, "MI30") || contains(d.name, "MI325")) return "gfx942";
  if (contains(d.name, "MI100")) return "gfx908";
  if (contains(d.name, "MI2")) return "gfx90a";
  return "";
}

bool is_mtia_name(std::string_view n) { return contains(n, "MTIA") || contains(n, "ARTEMIS"); }

}  // namespace

std::string_view device_vendor_name(DeviceVendor v) {
  switch (v) {
    case DeviceVendor::kNvidia:
      return "NVIDIA";
    case DeviceVendor::kAmd:
      return "AMD";
    case DeviceVendor::kMtia:
      return "MTIA";
    case DeviceVendor::kUnknown:
      break;
  }
  return "unknown";
}

int DeviceCaps::sm() const {
  if (vendor != DeviceVendor::kNvidia || arch.size() < 4) return 0;
  return std::atoi(arch.c_str() + 3);
}

const std::vector<DeviceTableRow>& device_table() { return kRows; }

DeviceCaps device_caps(const DeviceInfo& d) {
  DeviceCaps c;
  c.name = d.name;
  if (is_mtia_name(d.name)) {
    c.vendor = DeviceVendor::kMtia;
    c.arch = "MTIA";
    fill(c, find_row(DeviceVendor::kMtia, "MTIA"));
    return c;
  }
  if (is_amd_device(d)) {
    c.vendor = DeviceVendor::kAmd;
    std::string_view key = amd_row_key(d);
    c.arch = std::string(key);
    fill(c, find_row(DeviceVendor::kAmd, key));
    c.matrix_use_measurable = !c.arch.empty();
    return c;
  }
  if (d.compute_major <= 0) return c;  // no compute capability: not a CUDA device we know
  c.vendor = DeviceVendor::kNvidia;
  int sm = d.compute_major * 10 + std::clamp(d.compute_minor, 0, 9);
  c.arch = "sm_" + std::to_string(sm);
  // The highest row at or below the device's architecture.
  const DeviceTableRow* best = nullptr;
  int best_sm = -1;
  for (const DeviceTableRow& r : kRows) {
    if (r.vendor != DeviceVendor::kNvidia) continue;
    int rsm = std::atoi(std::string(r.key.substr(3)).c_str());
    if (rsm <= sm && rsm > best_sm) {
      best = &r;
      best_sm = rsm;
    }
  }
  fill(c, best);
  if (best == nullptr) c.source = "before the first row (sm_60): no tensor cores";
  c.matrix_use_measurable = true;
  return c;
}

DeviceCaps trace_device_caps(const Trace& t) {
  for (const DeviceInfo& d : t.meta.devices) {
    DeviceCaps c = device_caps(d);
    if (c.vendor != DeviceVendor::kUnknown) return c;
  }
  // MTIA traces may carry no deviceProperties; their events say what ran them.
  if (t.strings.find("mtia_ccp_events") != StringPool::kNotFound ||
      t.strings.find("mtia_runtime") != StringPool::kNotFound) {
    DeviceCaps c;
    c.vendor = DeviceVendor::kMtia;
    c.arch = "MTIA";
    c.name = "MTIA";
    fill(c, find_row(DeviceVendor::kMtia, "MTIA"));
    return c;
  }
  DeviceCaps c;
  if (!t.meta.devices.empty()) c.name = t.meta.devices.front().name;
  return c;
}

std::string matrix_dtypes_text(uint32_t m) {
  std::string out;
  auto add = [&](uint32_t bit, const char* n) {
    if (!(m & bit)) return;
    if (!out.empty()) out += ", ";
    out += n;
  };
  add(kMatFp16, "fp16");
  add(kMatBf16, "bf16");
  add(kMatTf32, "tf32");
  add(kMatFp8, "fp8");
  add(kMatFp4, "fp4");
  add(kMatInt8, "int8");
  return out.empty() ? "none" : out;
}

}  // namespace mlprof
