// stepcast simulate: one scenario through the ExecGraph builder and the discrete-event engine.
#include <fmt/format.h>

#include <fstream>
#include <memory>
#include <string>

#include "analysis/simulate.h"
#include "cli/commands.h"
#include "cli/result_output.h"
#include "cli/scenario_options.h"
#include "core/csv.h"
#include "core/error.h"
#include "report/chrome_trace.h"
#include "report/report.h"

namespace stepcast::cli {

Runner add_simulate(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand(
      "simulate", "Simulate one step event by event: the metrics of estimate, the critical path, a timeline");
  auto options = std::make_shared<ScenarioOptions>();
  add_scenario_options(*cmd, *options);
  auto output = std::make_shared<ResultOutput>();
  auto trace = std::make_shared<std::string>();
  add_result_options(*cmd, *output);
  cmd->add_option("--chrome-trace", *trace, "Write the timeline as Chrome trace events (Perfetto, chrome://tracing)")
      ->type_name("FILE")
      ->check(kPathToWrite)
      ->group(kOutputGroup);
  return [options, output, trace] {
    const spec::Scenario s = build_scenario(*options);
    const analysis::Simulation sim = analysis::simulate(s);
    if (!trace->empty()) {
      const Error cannot_write(ErrorKind::kIo, fmt::format("cannot write the Chrome trace to {}", *trace),
                               "check that the directory exists and is writable, and that its disk is not full");
      core::require_writable_path(*trace, "the Chrome trace");
      std::ofstream out(*trace, std::ios::binary);
      if (!out) throw cannot_write;
      try {
        report::write_chrome_trace(sim.graph, sim.timeline, out, analysis::memory_over_time(sim.graph, sim.timeline));
      } catch (const Error& e) {
        if (e.kind() != ErrorKind::kIo) throw;
        throw cannot_write;  // the writer's stream failed part-way: a full disk
      }
      out.close();  // a full disk shows only when the last of it is flushed
      if (!out) throw cannot_write;
    }
    print_result(
        *output, s, [&] { return report::simulation_json(s, sim); },
        [&] {
          std::string text = report::simulation_text(s, sim);
          if (!trace->empty()) text += fmt::format("timeline written to {}\n", *trace);
          return text;
        });
    return kExitOk;
  };
}

}  // namespace stepcast::cli
