// Where the host waits for the compute stream inside a layer (Strategy::host_syncs_before_mlp:
// Megatron-DeepSpeed's torch.tensor scalars before each layer's MLP).
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "sim/engine.h"
#include "spec/presets.h"
#include "workload/build.h"

namespace stepcast::workload {
namespace {

spec::Scenario launch_bound(int pp, bool syncs_before_mlp) {
  spec::Scenario s;
  s.model = spec::model_preset("llama3.1-8b");
  s.cluster = spec::cluster_preset("dgx-h100");
  s.gpus = pp;
  spec::Strategy& st = s.strategy;
  st.tp = 1;
  st.pp = pp;
  st.global_batch = 4;
  st.seq_len = 128;  // kernels far shorter than their launches
  st.recompute = spec::Recompute::kFull;
  st.pipeline_transfers = spec::PipelineTransfers::kStreamOrdered;
  st.host_syncs_before_mlp = syncs_before_mlp;
  return spec::complete_and_validate(s);
}

// For each launch of a layer's first MLP kernel named `task`: whether it started only once the
// compute stream had run everything before it (the kernel before it on its stage).
std::vector<bool> mlp_launches_wait_for_the_stream(bool syncs_before_mlp, const std::string& task) {
  const graph::ExecGraph g = build(launch_bound(1, syncs_before_mlp));
  const sim::Timeline t = sim::run(g);
  std::vector<bool> waited;
  graph::TaskId previous = 0xffffffffu;
  for (graph::TaskId id = 0; id < g.size(); ++id) {
    if (g.task(id).stream != kComputeStream) continue;
    if (g.name(id) == task) {
      const graph::TaskId launch = id + 1;  // a kernel's launch is added right after it
      EXPECT_EQ(g.task(launch).stream, kHostStream);
      waited.push_back(t.spans[launch].start_ns >= t.spans[previous].end_ns);
    }
    previous = id;
  }
  return waited;
}

TEST(BuildHostSync, HostThatSyncsBeforeTheMlpLaunchesItOnlyOnceTheStreamHasRunTheAttention) {
  // Megatron-DeepSpeed's ParallelTransformerLayer.forward makes moe_loss and mlp_bias with
  // torch.tensor(0.0, device=...), a blocking copy: the host waits for the stream in each forward
  // and each recomputation of a layer; a launch-bound eager host otherwise runs ahead.
  for (const char* task : {"mlp_up.fwd", "mlp_up.recompute"}) {
    const std::vector<bool> synced = mlp_launches_wait_for_the_stream(true, task);
    ASSERT_EQ(synced.size(), 32u * 4u) << task;  // every layer of every micro-batch
    for (bool waited : synced) EXPECT_TRUE(waited) << task;
    for (bool waited : mlp_launches_wait_for_the_stream(false, task)) EXPECT_FALSE(waited) << task;
  }
}

// On a middle stage of a pipeline whose receives the compute stream waits for: per forward
// receive, whether the first MLP launch after it started only once the input had arrived.
std::vector<bool> middle_stage_mlp_launches_wait_for_the_input(bool syncs_before_mlp) {
  const graph::ExecGraph g = build(launch_bound(4, syncs_before_mlp));
  const sim::Timeline t = sim::run(g);
  std::vector<bool> waited;
  std::map<std::uint32_t, graph::TaskId> open;  // by stage, its last forward receive not yet followed
  for (graph::TaskId id = 0; id < g.size(); ++id) {
    const graph::Task& task = g.task(id);
    if (task.rank == 0 || task.rank == 3) continue;
    if (g.name(id) == "pp.recv") open[task.rank] = id;
    if (g.name(id) == "mlp_up.fwd" && open.contains(task.rank)) {
      waited.push_back(t.spans[id + 1].start_ns >= t.spans[open[task.rank]].end_ns);
      open.erase(task.rank);
    }
  }
  return waited;
}

TEST(BuildHostSync, MiddleStageLaunchesAtMostHalfALayerBeforeItsInputArrives) {
  // The stream waits for torch.distributed's recv, so the blocking copy before the first MLP waits
  // for the input too: the host cannot launch a pass ahead into the pipeline's bubble.
  const std::vector<bool> synced = middle_stage_mlp_launches_wait_for_the_input(true);
  ASSERT_EQ(synced.size(), 2u * 4u);  // two middle stages, four micro-batches
  for (bool waited : synced) EXPECT_TRUE(waited);
  const std::vector<bool> free = middle_stage_mlp_launches_wait_for_the_input(false);
  EXPECT_TRUE(std::find(free.begin(), free.end(), false) != free.end());
}

}  // namespace
}  // namespace stepcast::workload
