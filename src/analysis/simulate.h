// One training step through the discrete-event engine: build the Scenario's ExecGraph, simulate
// it, and read the same metrics analytic::estimate gives off the timeline.
//
//   const analysis::Simulation sim = analysis::simulate(scenario);
//   sim.metrics.step_time_s;  sim.critical_path;  report::write_chrome_trace(sim.graph, sim.timeline, out);
//
// metrics.memory takes its stored activations from the peak the schedule actually reaches on
// the most loaded stage (Task::memory_delta) instead of the closed-form in-flight count.
#pragma once

#include <vector>

#include "analysis/timeline_analysis.h"
#include "analytic/estimate.h"
#include "graph/exec_graph.h"
#include "sim/engine.h"
#include "spec/scenario.h"

namespace stepcast::analysis {

struct Simulation {
  analytic::Estimate metrics;
  graph::ExecGraph graph;
  sim::Timeline timeline;
  CriticalPath critical_path;
  std::vector<StreamUse> streams;
};

/// REQUIRES: s passed spec::complete_and_validate.
Simulation simulate(const spec::Scenario& s);

/// Only the metrics (what `validate --engine sim` needs), without keeping the graph.
analytic::Estimate simulate_metrics(const spec::Scenario& s);

}  // namespace stepcast::analysis
