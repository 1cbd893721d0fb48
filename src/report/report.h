// Renders results for people (aligned text tables) and machines (JSON, via nlohmann::json).
// Computes nothing: every number comes from analytic::Estimate, analysis::Simulation or
// validate::Report.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "analysis/simulate.h"
#include "analytic/estimate.h"
#include "analytic/operator_costs.h"
#include "validate/validate.h"

namespace stepcast::report {

/// The scenario summary, headline metrics, time breakdown and memory breakdown as a table.
std::string estimate_text(const spec::Scenario& s, const analytic::Estimate& e);

/// Notes on where the closed form's reading of `s` is known to be loose, for `estimate`'s text:
/// interleaved chunks of unequal layers inside the stages; pipeline transfers or CP ring steps on
/// the links of the ZeRO-3 group's collectives. Empty where none applies.
std::string closed_form_notes(const spec::Scenario& s);

/// step_time_s, tokens_per_s, tflops_per_gpu, mfu, hfu, megatron_tflops_per_gpu,
/// memory{per_gpu_gib, capacity_gib, fits, <category>_gib...}, breakdown{<category>_s...},
/// scenario{...}. Keys are sorted (nlohmann::json's object order).
nlohmann::json estimate_json(const spec::Scenario& s, const analytic::Estimate& e);

/// `ops` (analytic::operator_costs(s)) as one table per group: each operator's forward, backward
/// and recomputed milliseconds per micro-batch, its share of the group's kernel time, and the rate
/// it runs at (TFLOP/s for GEMMs and attention, GB/s for memory-bound kernels).
std::string operators_text(const spec::Scenario& s, const std::vector<analytic::OperatorCost>& ops);

/// [{group, name, kind, fwd_s, bwd_s, recompute_s, host_s, flops, bytes}], one per operator.
nlohmann::json operators_json(const std::vector<analytic::OperatorCost>& ops);

/// estimate_text of the simulated metrics, then the graph's size, the critical path by category
/// and the mean utilisation of each stream over the stages.
std::string simulation_text(const spec::Scenario& s, const analysis::Simulation& sim);

/// estimate_json's keys plus graph{tasks, ranks, collectives}, critical_path{tasks, length_s,
/// wait_s, seconds{<category>}}, streams[{rank, stream, name, busy_s, utilisation}].
nlohmann::json simulation_json(const spec::Scenario& s, const analysis::Simulation& sim);

/// Every row (measured, predicted, signed error, or the reason it was not predicted), then the
/// summary per source and overall.
std::string validation_text(const validate::Report& r);

/// {"rows": [{source, model, line, quantity, measured, predicted, error | reason}],
///  "summary": {rows, predicted, mape, median_ape, p90_ape, max_ape}, "per_source": [...]}.
nlohmann::json validation_json(const validate::Report& r);

}  // namespace stepcast::report
