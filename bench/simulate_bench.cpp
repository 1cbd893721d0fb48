// Issue 3: Llama 3.1 405B on 16,384 H100 (TP 8, PP 16 interleaved, DP 128, 16M-token batch)
// must simulate in under 1 s and 1 GiB, and its Chrome trace must write in under 2 s. A step of
// millions of tasks must build, run and be analysed in time linear in its size.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <fstream>

#include "analysis/simulate.h"
#include "bench_scenarios.h"
#include "report/chrome_trace.h"

namespace stepcast {
namespace {

void BM_Simulate405B(benchmark::State& state) {
  const spec::Scenario s = llama3_405b();
  for (auto _ : state) {
    const analysis::Simulation sim = analysis::simulate(s);
    benchmark::DoNotOptimize(sim.metrics.step_time_s);
    state.counters["tasks"] = static_cast<double>(sim.graph.size());
  }
}
BENCHMARK(BM_Simulate405B)->Unit(benchmark::kMillisecond);

void BM_SimulateMegatron530B(benchmark::State& state) {
  const spec::Scenario s = megatron_530b();
  double tasks = 0;
  for (auto _ : state) {
    const analysis::Simulation sim = analysis::simulate(s);
    benchmark::DoNotOptimize(sim.metrics.step_time_s);
    tasks = static_cast<double>(sim.graph.size());
  }
  state.counters["tasks"] = tasks;
  state.SetItemsProcessed(static_cast<std::int64_t>(tasks) * state.iterations());
}
BENCHMARK(BM_SimulateMegatron530B)->Unit(benchmark::kMillisecond);

void BM_ChromeTrace405B(benchmark::State& state) {
  const analysis::Simulation sim = analysis::simulate(llama3_405b());
  for (auto _ : state) {
    std::ofstream out("/dev/null", std::ios::binary);
    report::write_chrome_trace(sim.graph, sim.timeline, out);
  }
}
BENCHMARK(BM_ChromeTrace405B)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace stepcast
