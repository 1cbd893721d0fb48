// Renders results for people (aligned text tables) and machines (JSON, via nlohmann::json).
// Computes nothing: every number comes from analytic::Estimate or validate::Report.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "analytic/estimate.h"
#include "validate/validate.h"

namespace stepcast::report {

/// The scenario summary, headline metrics, time breakdown and memory breakdown as a table.
std::string estimate_text(const spec::Scenario& s, const analytic::Estimate& e);

/// step_time_s, tokens_per_s, tflops_per_gpu, mfu, hfu, megatron_tflops_per_gpu,
/// memory{per_gpu_gib, capacity_gib, fits, <category>_gib...}, breakdown{<category>_s...},
/// scenario{...}. Keys are sorted (nlohmann::json's object order).
nlohmann::json estimate_json(const spec::Scenario& s, const analytic::Estimate& e);

/// Every row (measured, predicted, signed error, or the reason it was not predicted), then the
/// summary per source and overall.
std::string validation_text(const validate::Report& r);

/// {"rows": [{source, model, line, quantity, measured, predicted, error | reason}],
///  "summary": {rows, predicted, mape, median_ape, p90_ape, max_ape}, "per_source": [...]}.
nlohmann::json validation_json(const validate::Report& r);

}  // namespace stepcast::report
