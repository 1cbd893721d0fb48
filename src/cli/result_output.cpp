#include "cli/result_output.h"

#include <fmt/format.h>

#include "analytic/operator_costs.h"
#include "report/report.h"

namespace stepcast::cli {

void add_result_options(CLI::App& cmd, ResultOutput& o) {
  cmd.add_flag("--json", o.json, "Print a JSON object instead of the table")->group(kOutputGroup);
  cmd.add_flag("--ops", o.ops, "Also show each operator's time per micro-batch (JSON: operators)")
      ->group(kOutputGroup);
}

void print_result(const ResultOutput& o, const spec::Scenario& s,
                  const std::function<nlohmann::json()>& json,
                  const std::function<std::string()>& text) {
  if (o.json) {
    nlohmann::json j = json();
    if (o.ops) j["operators"] = report::operators_json(analytic::operator_costs(s));
    fmt::print("{}\n", j.dump(2));
    return;
  }
  fmt::print("{}", text());
  if (o.ops) fmt::print("{}", report::operators_text(s, analytic::operator_costs(s)));
}

}  // namespace stepcast::cli
