// Validation against measured runs: predict what each row of a published-results table measured
// and report the signed error, row by row and per source (MAPE, median, P90, worst).
//
//   validate::Report r = validate::run(validate::read_table("runs.csv", text), {});
//   for (const auto& row : r.rows) ...;  r.overall.mape
//
// Two schemas, detected by header: ../shared/validation/published_runs.csv and vTrain's
// ground_truth_single.csv and ground_truth_multi.csv (with or without their leading "Parameters
// (billion)" column). How each row becomes a Scenario, and every default used for a field the
// source leaves out, is listed in the README ("How validation reads a row").
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "spec/scenario.h"

namespace stepcast::validate {

enum class Quantity { kIterationTime, kTokensPerSecond, kTflopsPerGpu, kMfu };

/// One measured row turned into a scenario, or the reason it cannot be.
struct Case {
  std::string source;
  std::string model;
  int line = 0;
  Quantity quantity = Quantity::kTokensPerSecond;
  bool megatron_convention = false;  // TFLOP/s counted with Narayanan et al. Eq. 3
  double measured = 0;
  spec::Scenario scenario;
  bool cluster_given = false;  // the scenario's cluster is Options::cluster: the row names none
  std::string reason;          // non-empty: the row cannot be predicted, and why
};

struct RowResult {
  std::string source, model;
  int line = 0;
  Quantity quantity = Quantity::kTokensPerSecond;
  double measured = 0, predicted = 0;
  double error = 0;    // (predicted - measured) / measured
  std::string reason;  // non-empty when not predicted
  // Predicted memory of the worst-loaded GPU. Every measured run ran, so a row predicted not to
  // fit is an error of the memory model.
  double memory_bytes = 0, capacity_bytes = 0;
  bool fits = true;
};

struct Summary {
  std::string source;  // "all" for the overall summary
  int rows = 0, predicted = 0;
  double mape = 0, median_ape = 0, p90_ape = 0, max_ape = 0;  // fractions
  // Mean of predicted speed / measured speed - 1 (speed: the row's tokens/s, TFLOP/s or MFU, or
  // the inverse of its iteration time): + where the model is optimistic. MAPE says how far off,
  // this says which way, with one sign for every quantity.
  double speed_bias = 0;
  int not_fitting = 0;  // predicted rows whose run the memory model says could not fit
};

struct Report {
  std::vector<RowResult> rows;
  std::vector<Summary> per_source;  // in order of first appearance
  Summary overall;
};

struct Options {
  /// Cluster of vTrain rows and of rows whose cluster cell is empty (none: dgx-a100-80g for
  /// vTrain; published rows then need their own).
  std::optional<spec::ClusterSpec> cluster;
};

/// Reads either schema into cases. Throws Error naming source:line and the column for a missing
/// column or a cell that is not a number where one is required.
std::vector<Case> read_table(std::string_view source_name, std::string_view text, const Options& options);

enum class Engine {
  kAnalytic,    // analytic::estimate, closed form
  kSimulation,  // analysis::simulate_metrics, the discrete-event engine on the step's ExecGraph
};

/// Predicts every case with `engine` and summarises. The simulator runs rows on every core;
/// results do not depend on the number of threads.
Report run(const std::vector<Case>& cases, Engine engine = Engine::kAnalytic);

const char* quantity_name(Quantity q);

}  // namespace stepcast::validate
