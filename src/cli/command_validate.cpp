// stepcast validate: predict every row of a measured-results table and report the errors.
#include <fmt/format.h>

#include <filesystem>
#include <memory>

#include "cli/commands.h"
#include "cli/scenario_options.h"
#include "core/csv.h"
#include "core/error.h"
#include "core/utf8.h"
#include "report/report.h"
#include "spec/yaml_writer.h"
#include "validate/validate.h"

namespace stepcast::cli {

namespace {

// The directory --scenarios names, created before the run so that a bad one is refused before
// a long simulation rather than after.
void create_scenario_directory(const std::string& dir) {
  std::error_code failed;
  std::filesystem::create_directories(dir, failed);
  if (failed || !std::filesystem::is_directory(dir, failed)) {
    throw Error(ErrorKind::kIo, "cannot create the directory " + dir + ": " +
                                    (failed ? failed.message() : std::string("a file of that name is in the way")))
        .with_hint("give --scenarios a directory that can be created or written");
  }
}

// Each predicted row as a scenario file that `estimate --config` and `simulate --config` run again
// (line-N.yaml), beside the row's model (line-N.model.yaml); the cluster named as the row named it,
// or as --cluster gave it.
void write_scenarios(const std::string& dir, const std::vector<validate::Case>& cases,
                     const validate::Report& report, const std::string& cluster_option,
                     const std::string& command) {
  for (size_t i = 0; i < cases.size(); ++i) {
    const validate::Case& c = cases[i];
    if (!c.reason.empty()) continue;
    const std::string stem = "line-" + std::to_string(c.line);
    const std::filesystem::path model = std::filesystem::path(dir) / (stem + ".model.yaml");
    const std::filesystem::path scenario = std::filesystem::path(dir) / (stem + ".yaml");
    // Comments end at a line break: text from the table or a path that holds one is escaped, as
    // the rest of it would be read as YAML.
    const auto comment = [](std::string_view text) { return core::escape_controls(text, false); };
    core::write_file(model.string(),
                     spec::model_yaml(c.scenario.model, fmt::format("# {}, line {}\n", comment(c.source), c.line)),
                     "the model file");
    const validate::RowResult& row = report.rows[i];
    const std::string header = fmt::format(
        "# {}, line {}: {}\n# measured {} {:.6g}, predicted {:.6g}\n"
        "# stepcast {} --config {}\n",
        comment(c.source), c.line, comment(c.model), validate::quantity_name(row.quantity), row.measured,
        row.predicted, command, comment(scenario.string()));
    const std::string cluster = c.cluster_given ? cluster_option : c.scenario.cluster.name;
    core::write_file(scenario.string(),
                     spec::settings_yaml(scenario_settings(c.scenario, model.string(), cluster), header),
                     "the scenario file");
  }
}

}  // namespace

Runner add_validate(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("validate", "Compare predictions with measured runs in a CSV file");
  struct Args {
    std::string file;
    std::string cluster;
    std::string engine = "analytic";
    std::string scenarios;
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
  cmd->add_option("--scenarios", a->scenarios,
                  "Also write each predicted row to DIR as a scenario file, line-N.yaml, that "
                  "estimate --config and simulate --config run again (its model beside it, "
                  "line-N.model.yaml)")
      ->type_name("DIR")
      ->check(kPathToWrite);
  return [a] {
    const std::string text = core::read_file(a->file);
    const validate::Engine engine = a->engine == "sim" ? validate::Engine::kSimulation : validate::Engine::kAnalytic;
    validate::Options options;
    if (!a->cluster.empty()) options.cluster = cluster_option(a->cluster);  // a bad one is an error
    const std::vector<validate::Case> cases = validate::read_table(a->file, text, options);
    if (!a->scenarios.empty()) create_scenario_directory(a->scenarios);
    const validate::Report r = validate::run(cases, engine);
    if (a->json) {
      fmt::print("{}\n", report::validation_json(r).dump(2));
    } else {
      fmt::print("{}", report::validation_text(r));
    }
    if (!a->scenarios.empty()) {
      write_scenarios(a->scenarios, cases, r, a->cluster, a->engine == "sim" ? "simulate" : "estimate");
    }
    return kExitOk;
  };
}

}  // namespace stepcast::cli
