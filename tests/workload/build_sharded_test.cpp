#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <utility>

#include "analysis/simulate.h"
#include "analytic/estimate.h"
#include "sim/engine.h"
#include "spec/presets.h"
#include "workload/build.h"

namespace stepcast::workload {
namespace {

// Llama 3.1 8B under FSDP2 on 16 A100s (two nodes, the gathers cross the NICs), one micro-batch.
spec::Scenario fsdp2() {
  spec::Scenario s;
  s.model = spec::model_preset("llama3.1-8b");
  s.cluster = spec::cluster_preset("dgx-a100-80g");
  s.gpus = 16;
  spec::Strategy& st = s.strategy;
  st.tp = 1;
  st.zero_stage = 3;
  st.sharded_collectives = spec::ShardedCollectives::kPerParameter;
  st.global_batch = 16;
  st.seq_len = 4096;
  return spec::complete_and_validate(s);
}

// FSDPParamGroup::wait_for_unshard makes FSDP2's all-gather streams wait for a copy out's end: in
// backward for the layer's own, before it prefetches the next layer; in forward the wait is
// deferred to the next layer's (AllGatherState), so a gather waits for the copy out two layers
// before it. A gather therefore runs beside kernels, never beside a copy out.
TEST(BuildSharded, Fsdp2sGathersWaitForTheCopyOutBeforeThemAndRunBesideKernelsOnly) {
  const spec::Scenario s = fsdp2();
  const graph::ExecGraph g = build(s);
  // By layer: the forward's and the backward's copy out (the first of each layer is the forward's).
  std::map<int, std::pair<graph::TaskId, graph::TaskId>> copies;
  for (graph::TaskId id = 0; id < g.size(); ++id) {
    if (g.name(id) != "fsdp.copy_out") continue;
    auto [it, first] = copies.try_emplace(g.task(id).layer, id, graph::TaskId{});
    if (!first) it->second.second = id;
  }
  const int layers = s.model.layers;
  ASSERT_EQ(static_cast<int>(copies.size()), layers);
  std::map<int, int> gathers_seen;
  int checked = 0;
  for (graph::TaskId id = 0; id < g.size(); ++id) {
    if (g.name(id) != "fsdp.all_gather") continue;
    const int layer = g.task(id).layer;
    const bool forward = gathers_seen[layer]++ == 0;
    graph::TaskId waits_for = graph::TaskId{};
    bool expected = false;
    if (forward && layer >= 2) {
      waits_for = copies.at(layer - 2).first;
      expected = true;
    } else if (!forward && layer + 1 < layers) {
      waits_for = copies.at(layer + 1).second;
      expected = true;
    }
    if (!expected) continue;
    ++checked;
    const auto& before = g.predecessors(id);
    EXPECT_NE(std::find(before.begin(), before.end(), waits_for), before.end())
        << layer << (forward ? " forward" : " backward");
  }
  EXPECT_EQ(checked, 2 * layers - 3);
  // Here every gather is shorter than the kernels beside it: none runs beside a copy out.
  const sim::Timeline t = sim::run(g);
  for (graph::TaskId gather = 0; gather < g.size(); ++gather) {
    if (g.name(gather) != "fsdp.all_gather" || g.task(gather).layer < 2) continue;
    for (graph::TaskId copy = 0; copy < g.size(); ++copy) {
      if (g.name(copy) != "fsdp.copy_out") continue;
      const bool overlap = t.spans[gather].start_ns < t.spans[copy].end_ns && t.spans[copy].start_ns < t.spans[gather].end_ns;
      EXPECT_FALSE(overlap) << g.task(gather).layer << " beside the copy out of " << g.task(copy).layer;
    }
  }
  // The closed form exposes the gathers beside the kernels alone too.
  const double closed_form = analytic::estimate(s).breakdown.fsdp_comm_s;
  EXPECT_NEAR(analysis::simulate_metrics(s).breakdown.fsdp_comm_s, closed_form, 0.05 * closed_form);
}

}  // namespace
}  // namespace stepcast::workload
