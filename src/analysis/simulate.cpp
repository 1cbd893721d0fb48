#include "analysis/simulate.h"

#include <algorithm>

#include "workload/build.h"
#include "workload/memory.h"

namespace stepcast::analysis {
namespace {

analytic::Estimate metrics(const spec::Scenario& s, const graph::ExecGraph& g, const sim::Timeline& t) {
  analytic::Estimate e;
  e.step_time_s = t.makespan_ns * 1e-9;
  const workload::ParamCounts params = workload::param_counts(s.model);
  analytic::set_rates(s, params, e);
  e.breakdown = breakdown(g, t);
  const std::vector<double> peaks = peak_memory(g, t);
  e.memory =
      workload::memory_per_gpu(s, params, peaks.empty() ? 0 : *std::max_element(peaks.begin(), peaks.end()));
  return e;
}

}  // namespace

Simulation simulate(const spec::Scenario& s) {
  Simulation out{{}, workload::build(s), {}, {}, {}};
  out.timeline = sim::run(out.graph);
  out.metrics = metrics(s, out.graph, out.timeline);
  out.critical_path = critical_path(out.graph, out.timeline);
  out.streams = stream_use(out.graph, out.timeline);
  return out;
}

analytic::Estimate simulate_metrics(const spec::Scenario& s) {
  const graph::ExecGraph g = workload::build(s);
  return metrics(s, g, sim::run(g));
}

}  // namespace stepcast::analysis
