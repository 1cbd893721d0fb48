// analytic::estimate must sustain >= 1,000,000 evaluations per second on one core (issue 2), and
// validation of all 1,523 measured rows must take < 1 s.
#include <benchmark/benchmark.h>

#include <fstream>
#include <sstream>

#include "analytic/estimate.h"
#include "core/csv.h"
#include "spec/presets.h"
#include "validate/validate.h"

namespace stepcast {
namespace {

spec::Scenario llama3_405b() {
  spec::Scenario s;
  s.model = spec::model_preset("llama3.1-405b");
  s.cluster = spec::cluster_preset("llama3-h100-roce");
  s.gpus = 16384;
  s.strategy.tp = 8;
  s.strategy.pp = 16;
  s.strategy.vp = 2;
  s.strategy.zero_stage = 2;
  s.strategy.micro_batch = 1;
  s.strategy.global_batch = 2048;
  s.strategy.seq_len = 8192;
  return spec::complete_and_validate(s);
}

void BM_AnalyticEstimateLlama405b(benchmark::State& state) {
  const spec::Scenario s = llama3_405b();
  for (auto _ : state) benchmark::DoNotOptimize(analytic::estimate(s));
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_AnalyticEstimateLlama405b);

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
