// What the recording's accelerator can do: its vendor, architecture (sm_XX, gfxNNN, MTIA) and
// which data types its matrix units (NVIDIA tensor cores, AMD matrix cores, MTIA's dot-product
// engines) run. Read from the trace's deviceProperties (Kineto) and, for MTIA, its categories.
// Advice reads it so that it never recommends a data type the device does not have (bf16/TF32
// below sm_80, fp8 below sm_89). Each row of the table cites its source (device_table.cpp).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "mlprof/trace.h"

namespace mlprof {

enum class DeviceVendor : uint8_t { kUnknown, kNvidia, kAmd, kMtia };
std::string_view device_vendor_name(DeviceVendor v);  // "NVIDIA", "AMD", "MTIA", "unknown"

// Data types a matrix unit runs (bits).
enum MatrixDtype : uint32_t {
  kMatFp16 = 1u << 0,
  kMatBf16 = 1u << 1,
  kMatTf32 = 1u << 2,  // NVIDIA TF32; AMD xf32 (gfx942)
  kMatFp8 = 1u << 3,   // e4m3/e5m2
  kMatFp4 = 1u << 4,   // fp4 / mxfp4 / nvfp4 block-scaled
  kMatInt8 = 1u << 5,
};

struct DeviceCaps {
  DeviceVendor vendor = DeviceVendor::kUnknown;
  std::string name;         // "Tesla V100-SXM2-32GB"
  std::string arch;         // "sm_70", "gfx942", "MTIA"; empty when unknown
  std::string family;       // "Volta", "CDNA3", ...
  std::string matrix_unit;  // "tensor cores", "matrix cores (MFMA)", ...; empty: none
  uint32_t matrix_dtypes = 0;
  std::string source;  // where the row comes from
  // Whether mlprof can tell tensor/matrix-core kernels from the others by kernel name on this
  // device (NVIDIA and AMD: yes; MTIA and unknown devices: no).
  bool matrix_use_measurable = false;

  bool has(uint32_t dtype_bit) const { return (matrix_dtypes & dtype_bit) != 0; }
  int sm() const;  // NVIDIA compute capability as 70, 80, 89, ...; 0 otherwise
};

// One device from Kineto's deviceProperties.
DeviceCaps device_caps(const DeviceInfo& device);
// The recording's device: the first GPU in deviceProperties, else MTIA when the trace has MTIA
// categories (MTIA traces may carry no deviceProperties), else unknown.
DeviceCaps trace_device_caps(const Trace& trace);
// The dtypes as "fp16, bf16, tf32, fp8" (empty: "none").
std::string matrix_dtypes_text(uint32_t dtypes);

// Every row of the table, for docs and tests: (arch or name pattern, family, dtypes, source).
struct DeviceTableRow {
  DeviceVendor vendor;
  std::string_view key;  // "sm_80", "gfx942", "MTIA"
  std::string_view family;
  std::string_view matrix_unit;
  uint32_t dtypes;
  std::string_view source;
};
const std::vector<DeviceTableRow>& device_table();

}  // namespace mlprof
