#include <fstream>
#include <iostream>
#include <sstream>

#include "cli/command.h"
#include "mlprof/analyze/device_peaks.h"

namespace mlprof::cli {
namespace {

MLPROF_REGISTER_COMMAND(
    "roofline",
    "how far each op, kernel, module and step is from the device's roofline (FLOPs and bytes "
    "from recorded shapes over kernel time)",
    [](CLI::App& sub) -> std::function<int()> {
      auto a = std::make_shared<AnalysisArgs>();
      auto o = std::make_shared<AnalysisOptions>();
      auto peaks = std::make_shared<std::string>();
      auto rows = std::make_shared<size_t>(15);
      add_analysis_args(sub, *a);
      sub.add_option("--device", o->roofline.device,
                     "device name to take peaks for (default: the trace's deviceProperties)");
      sub.add_option("--peaks", *peaks,
                     "JSON peaks file ({\"NAME\": {\"tops\": {\"bfloat16\": ...}, "
                     "\"dram_bw_gbs\": ...}}): replaces or adds devices");
      sub.add_option("--top", o->roofline.top, "rows kept per table (JSON)");
      sub.add_option("--rows", *rows, "rows printed per table (text)");
      return [a, o, peaks, rows]() {
        if (!peaks->empty()) {
          std::ifstream in(*peaks, std::ios::binary);
          std::stringstream buf;
          if (in) buf << in.rdbuf();
          if (!in) {
            std::cerr << "mlprof: " << *peaks << ": cannot read the peaks file\n";
            return kExitBadInput;
          }
          auto parsed = parse_device_peaks_json(buf.str(), "--peaks " + *peaks);
          if (!parsed) {
            std::cerr << "mlprof: " << *peaks << ": " << parsed.error() << "\n";
            return kExitBadInput;
          }
          o->roofline.peaks = std::move(parsed.value());
        }
        TextOptions text;
        text.rows = *rows;
        return run_analysis_command(*a, AnalysisId::kRoofline, *o, text);
      };
    });

}  // namespace
}  // namespace mlprof::cli
