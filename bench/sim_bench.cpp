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
graph::ExecGraph data_parallel_graph() {
  constexpr std::uint32_t kRanks = 64;
  constexpr std::uint32_t kComputePerBlock = 4;
  constexpr std::uint32_t kBlocks = 3277;
  graph::ExecGraph g;
  std::vector<TaskId> last_compute(kRanks);
  std::vector<std::vector<TaskId>> reduce_of_block(kBlocks);
  for (std::uint32_t b = 0; b < kBlocks; ++b) {
    std::vector<TaskId> members;
    members.reserve(kRanks);
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
      const TaskId ar = g.add_task(
          {.kind = TaskKind::kCollective, .rank = r, .stream = 1, .duration_ns = 0}, "ar");
      g.add_edge(last_compute[r], ar);
      members.push_back(ar);
    }
    reduce_of_block[b] = members;
    g.add_collective(std::move(members), 3000);
  }
  g.finalize();
  return g;
}

void BM_SimRun(benchmark::State& state) {
  const graph::ExecGraph g = data_parallel_graph();
  for (auto _ : state) {
    const sim::Timeline t = sim::run(g);
    benchmark::DoNotOptimize(t.makespan_ns);
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(g.size()));
  state.counters["tasks"] = static_cast<double>(g.size());
}
BENCHMARK(BM_SimRun)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace stepcast
