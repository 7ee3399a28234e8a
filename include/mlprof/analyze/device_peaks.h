// What an accelerator can do at most: dense peak FLOP/s per data type and DRAM (HBM / GDDR)
// bandwidth, one row per product with the datasheet it comes from. The roofline's ceilings.
// Sparsity figures are not peaks: every row is the dense figure. `--peaks FILE` (JSON, the
// schema of PyTorch's torch/_inductor/analysis/device_info.py) replaces or adds rows.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mlprof/status.h"
#include "mlprof/trace.h"

namespace mlprof {

struct DevicePeaks {
  std::string name;  // "H100 SXM", "MI300X"
  // Dense TFLOP/s (int8: TOP/s) of the matrix units per input type; fp32 / fp64: the vector
  // (non-tensor) peak. 0 = the device has no such path or the figure is unknown.
  double fp64 = 0, fp32 = 0, tf32 = 0, fp16 = 0, bf16 = 0, fp8 = 0, int8 = 0;
  double fp32_matrix = 0;  // FP32 on matrix units (AMD CDNA MFMA); 0 = none
  double mem_gbs = 0;      // DRAM bandwidth, GB/s (1e9 bytes/s)
  std::string source;      // the datasheet (or "--peaks FILE")
};

// The built-in table, most specific names first.
const std::vector<DevicePeaks>& device_peaks_table();

// The row whose name the device name contains ("NVIDIA H100 80GB HBM3" -> "H100 SXM");
// `extra` rows (from --peaks) are tried first. nullopt when nothing matches.
std::optional<DevicePeaks> find_device_peaks(std::string_view device_name,
                                             const std::vector<DevicePeaks>& extra = {});

// The compute ceiling in TFLOP/s for work of this dtype ("bf16", "fp32", ...) on matrix units
// or vector ALUs; 0 when unknown. fp32 matrix work uses fp32_matrix where the device has it.
double peak_tflops(const DevicePeaks& p, std::string_view dtype, bool matrix);

// Parses a --peaks file: {"DEVICE NAME": {"tops": {"bfloat16": 989.4, "float32": 67, ...},
// "dram_bw_gbs": 3350}, ...} (PyTorch's device_info.py schema; keys starting with "_" are
// comments). Each row's name is the key, matched as a substring of the trace's device name.
Result<std::vector<DevicePeaks>> parse_device_peaks_json(std::string_view json,
                                                         std::string_view source);

}  // namespace mlprof
