// stepcast validate: predict every row of a measured-results table and report the errors.
#include <fmt/format.h>

#include <memory>

#include "cli/commands.h"
#include "core/csv.h"
#include "report/report.h"
#include "spec/presets.h"
#include "validate/validate.h"

namespace stepcast::cli {

Runner add_validate(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("validate", "Compare predictions with measured runs in a CSV file");
  struct Args {
    std::string file;
    std::string cluster;
    std::string engine = "analytic";
    bool json = false;
  };
  auto a = std::make_shared<Args>();
  cmd->add_option("file", a->file,
                  "published_runs.csv or vTrain ground_truth_single/multi.csv schema")
      ->required();
  cmd->add_option("--cluster", a->cluster, "Cluster preset or YAML file for vTrain rows and rows without a cluster cell");
  cmd->add_option("--engine", a->engine, "analytic (closed form) or sim (discrete-event simulation of each row)")
      ->check(CLI::IsMember({"analytic", "sim"}))
      ->capture_default_str();
  cmd->add_flag("--json", a->json, "Print JSON instead of the table");
  return [a] {
    const std::string text = core::read_file(a->file);
    const validate::Engine engine = a->engine == "sim" ? validate::Engine::kSimulation : validate::Engine::kAnalytic;
    validate::Options options;
    if (!a->cluster.empty()) options.cluster = spec::load_cluster(a->cluster);  // a bad one is an error
    const validate::Report r = validate::run(validate::read_table(a->file, text, options), engine);
    if (a->json) {
      fmt::print("{}\n", report::validation_json(r).dump(2));
    } else {
      fmt::print("{}", report::validation_text(r));
    }
    return kExitOk;
  };
}

}  // namespace stepcast::cli
