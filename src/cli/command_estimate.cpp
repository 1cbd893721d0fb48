// stepcast estimate: the closed-form step-time model for one scenario.
#include <memory>

#include "analytic/estimate.h"
#include "cli/commands.h"
#include "cli/result_output.h"
#include "cli/scenario_options.h"
#include "report/report.h"

namespace stepcast::cli {

Runner add_estimate(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("estimate", "Step time, MFU, memory and breakdown of one scenario");
  auto options = std::make_shared<ScenarioOptions>();
  add_scenario_options(*cmd, *options);
  auto output = std::make_shared<ResultOutput>();
  add_result_options(*cmd, *output);
  return [options, output] {
    const spec::Scenario s = build_scenario(*options);
    const analytic::Estimate e = analytic::estimate(s);
    analytic::require_finite(e);
    print_result(
        *output, s, [&] { return report::estimate_json(s, e); },
        [&] { return report::estimate_text(s, e) + report::closed_form_notes(s); });
    return kExitOk;
  };
}

}  // namespace stepcast::cli
