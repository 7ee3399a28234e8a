#pragma once

#include <string>

#include "mlprof/analyze/steps.h"
#include "trace/json_writer.h"

namespace mlprof {

std::string render_steps_text(const StepsResult& r, size_t width = 100);
void write_steps_json(JsonWriter& w, const StepsResult& r);

// "3 ProfilerSteps", "1 vLLM iteration", "2 --step-annotation iterations"; other sources
// (none, the trace span) "N iterations": callers that say more about those handle them first.
std::string iteration_count_text(StepSource source, size_t n);

}  // namespace mlprof
