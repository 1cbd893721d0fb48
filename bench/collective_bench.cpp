// cost::collective_time_s is called ~20 times per analytic::estimate, which must run >= 1,000,000
// times per second on one core: one call should cost well under 50 ns.
#include <benchmark/benchmark.h>

#include "cost/collective.h"

namespace stepcast {
namespace {

// Three levels like the llama3-h100-roce preset: NVLink nodes of 8, RoCE pods of 3,072 GPUs,
// a 1:7 oversubscribed spine between pods.
spec::ClusterSpec three_level_cluster() {
  spec::ClusterSpec c;
  c.name = "bench-h100-roce";
  c.levels.push_back({"nvlink", 8, 450e9, 1e-6, 1});
  c.levels.push_back({"roce-pod", 3072, 50e9, 3e-6, 1});
  c.levels.push_back({"inter-pod", 0, 50e9, 5e-6, 7});
  return c;
}

void BM_CollectiveTime(benchmark::State& state) {
  const spec::ClusterSpec cluster = three_level_cluster();
  // The groups one estimate prices: TP inside a node, CP/EP across a few nodes, PP and DP
  // spanning pods.
  const cost::GroupLayout groups[] = {{8, 1}, {2, 8}, {16, 16}, {128, 128}};
  const cost::CollectiveKind kinds[] = {
      cost::CollectiveKind::kAllReduce, cost::CollectiveKind::kAllGather,
      cost::CollectiveKind::kReduceScatter, cost::CollectiveKind::kAllToAll,
      cost::CollectiveKind::kSendRecv};
  double bytes = 64e6;
  for (auto _ : state) {
    for (const cost::GroupLayout& g : groups) {
      for (cost::CollectiveKind kind : kinds) {
        benchmark::DoNotOptimize(cost::collective_time_s(kind, bytes, g, cluster));
      }
    }
    bytes = bytes < 1e9 ? bytes * 1.5 : 64e6;
  }
  state.SetItemsProcessed(state.iterations() * 20);
}
BENCHMARK(BM_CollectiveTime);

}  // namespace
}  // namespace stepcast
