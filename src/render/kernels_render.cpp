#include "mlprof/render/kernels_render.h"

namespace mlprof {

std::string render_kernels_text(const KernelsResult&, size_t, size_t) { return {}; }
void write_kernels_json(JsonWriter& w, const KernelsResult&) { w.begin_object().end_object(); }

}  // namespace mlprof
