// The command-line options that describe a Scenario, shared by estimate (and later simulate and
// search): model, cluster, GPU count and every strategy field.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <utility>
#include <vector>

#include "spec/scenario.h"

namespace stepcast::cli {

struct ScenarioOptions {
  std::string model = "llama3.1-8b";
  std::string cluster = "dgx-h100";
  int gpus = 8;
  spec::Strategy strategy;
  std::string recompute = "none";
  std::string dtype = "bf16";
  std::string schedule;  // empty: 1f1b, or interleaved when --vp > 1
  std::string attention = "flash";
  std::string elementwise = "fused";
  std::string pipeline_transfers = "host-sync";
  std::string sharded_collectives = "layer";
  std::string grad_sync = "ready";
  std::string cp_exchange = "ring";
  std::string grad_dtype = "bf16";
  std::string optimizer_step = "master-weights";
  std::string grad_accumulation = "separate";
  long long global_batch_tokens = 0;
  std::string placement = "tp,cp,ep,dp,pp";
  std::string host_dispatch;  // empty: the Strategy default
};

void add_scenario_options(CLI::App& cmd, ScenarioOptions& o);

/// Loads the model and cluster (preset, YAML or config.json), applies the strategy and validates.
/// Throws Error for unknown presets, bad files and impossible strategies.
spec::Scenario build_scenario(const ScenarioOptions& o);

/// The cluster `--cluster NAME` names; an error that has no place of its own (an unknown preset)
/// is put in the option, "--cluster: unknown cluster preset ...".
spec::ClusterSpec cluster_option(const std::string& name_or_path);

/// The options, each as its name without dashes and a value (a flag: "true"), from which
/// build_scenario builds `s` again, its model and cluster given as `model` and `cluster` (a
/// preset name or a file): what a scenario file (cli/scenario_file.h) holds to run `s` again.
std::vector<std::pair<std::string, std::string>> scenario_settings(const spec::Scenario& s,
                                                                   const std::string& model,
                                                                   const std::string& cluster);

}  // namespace stepcast::cli
