// analytic::estimate must sustain >= 1,000,000 evaluations per second on one core (issue 2), and
// validation of all 1,523 measured rows must take < 1 s.
#include <benchmark/benchmark.h>

#include <fstream>
#include <sstream>

#include "analytic/estimate.h"
#include "bench_scenarios.h"
#include "core/csv.h"
#include "spec/presets.h"
#include "validate/validate.h"

namespace stepcast {
namespace {

void BM_AnalyticEstimateLlama405b(benchmark::State& state) {
  const spec::Scenario s = llama3_405b();
  for (auto _ : state) benchmark::DoNotOptimize(analytic::estimate(s));
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_AnalyticEstimateLlama405b);

void BM_AnalyticEstimateMaverickFsdp(benchmark::State& state) {
  const spec::Scenario s = maverick_fsdp();
  for (auto _ : state) benchmark::DoNotOptimize(analytic::estimate(s));
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_AnalyticEstimateMaverickFsdp);

void BM_ValidateAllSharedRows(benchmark::State& state) {
  const std::string dir = STEPCAST_SHARED_DIR "/validation/";
  const std::string published = core::read_file(dir + "published_runs.csv");
  const std::string vtrain = core::read_file(dir + "vtrain_single_node_a100.csv");
  for (auto _ : state) {
    auto a = validate::run(validate::read_table("published_runs.csv", published, {}));
    auto b = validate::run(validate::read_table("vtrain.csv", vtrain, {}));
    benchmark::DoNotOptimize(a);
    benchmark::DoNotOptimize(b);
  }
  state.SetItemsProcessed(state.iterations() * 1523);
}
BENCHMARK(BM_ValidateAllSharedRows)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace stepcast
