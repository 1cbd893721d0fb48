// sim::run must process >= 10 million task events per second on one core so that a step of a
// large job (millions of tasks) simulates in well under a second.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <vector>

#include "graph/exec_graph.h"
#include "sim/engine.h"

namespace stepcast {
namespace {

using graph::TaskId;
using graph::TaskKind;

// Data-parallel backward pass: on each of 64 ranks, blocks of 4 compute kernels on stream 0, each
// block ending in a gradient all-reduce on stream 1 across all ranks; the compute two blocks
// later waits for it, so communication overlaps compute. Durations differ per rank so members
// of a collective become ready at different times. 3,277 blocks give 1,048,640 tasks.
//
// With `shared_links`, the ranks sit on 8 nodes of 8 and each block reduces in 8 collectives
// instead, one per rail (the ranks with the same r % 8, one per node); every member sends over
// its node's link, so each of the 8 links carries all 8 collectives of a block and their shares
// change as the jittered members arrive. Each collective moves an eighth of the data, so 8 at
// once take as long as the single all-reduce without links.
graph::ExecGraph data_parallel_graph(bool shared_links) {
  constexpr std::uint32_t kRanks = 64;
  constexpr std::uint32_t kRanksPerNode = 8;
  constexpr std::uint32_t kComputePerBlock = 4;
  constexpr std::uint32_t kBlocks = 3277;
  constexpr std::int64_t kAllReduceNs = 3000;
  const std::uint32_t groups = shared_links ? kRanksPerNode : 1;
  graph::ExecGraph g;
  std::vector<TaskId> last_compute(kRanks);
  std::vector<std::vector<TaskId>> reduce_of_block(kBlocks, std::vector<TaskId>(kRanks));
  for (std::uint32_t b = 0; b < kBlocks; ++b) {
    std::vector<std::vector<TaskId>> members(groups);
    for (std::uint32_t r = 0; r < kRanks; ++r) {
      for (std::uint32_t i = 0; i < kComputePerBlock; ++i) {
        const auto jitter = static_cast<std::int64_t>((r * 7 + i * 13 + b) % 500);
        const TaskId c = g.add_task(
            {.kind = TaskKind::kCompute, .rank = r, .stream = 0, .duration_ns = 1000 + jitter},
            "bwd");
        if (b > 0 || i > 0) g.add_edge(last_compute[r], c);
        if (i == 0 && b >= 2) g.add_edge(reduce_of_block[b - 2][r], c);
        last_compute[r] = c;
      }
      const TaskId ar = g.add_task({.kind = TaskKind::kCollective,
                                    .rank = r,
                                    .stream = 1,
                                    .duration_ns = 0,
                                    .link = shared_links ? r / kRanksPerNode : graph::kNoLink},
                                   "ar");
      g.add_edge(last_compute[r], ar);
      members[r % groups].push_back(ar);
      reduce_of_block[b][r] = ar;
    }
    for (auto& group : members) g.add_collective(std::move(group), kAllReduceNs / groups);
  }
  g.finalize();
  return g;
}

void run_bench(benchmark::State& state, const graph::ExecGraph& g) {
  for (auto _ : state) {
    const sim::Timeline t = sim::run(g);
    benchmark::DoNotOptimize(t.makespan_ns);
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(g.size()));
  state.counters["tasks"] = static_cast<double>(g.size());
}

void BM_SimRun(benchmark::State& state) { run_bench(state, data_parallel_graph(false)); }
BENCHMARK(BM_SimRun)->Unit(benchmark::kMillisecond);

void BM_SimRunSharedLinks(benchmark::State& state) { run_bench(state, data_parallel_graph(true)); }
BENCHMARK(BM_SimRunSharedLinks)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace stepcast
