// stepcast estimate: the closed-form step-time model for one scenario.
#include <fmt/format.h>

#include <memory>

#include "analytic/estimate.h"
#include "cli/commands.h"
#include "cli/scenario_options.h"
#include "report/report.h"

namespace stepcast::cli {

Runner add_estimate(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("estimate", "Step time, MFU, memory and breakdown of one scenario");
  auto options = std::make_shared<ScenarioOptions>();
  add_scenario_options(*cmd, *options);
  auto json = std::make_shared<bool>(false);
  cmd->add_flag("--json", *json, "Print a JSON object instead of the table");
  return [options, json] {
    const spec::Scenario s = build_scenario(*options);
    const analytic::Estimate e = analytic::estimate(s);
    analytic::require_finite(e);
    if (*json) {
      fmt::print("{}\n", report::estimate_json(s, e).dump(2));
    } else {
      fmt::print("{}", report::estimate_text(s, e));
    }
    return kExitOk;
  };
}

}  // namespace stepcast::cli
