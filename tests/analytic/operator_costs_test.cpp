#include "analytic/operator_costs.h"

#include <gtest/gtest.h>

#include "analytic/estimate.h"
#include "spec/presets.h"

namespace stepcast::analytic {
namespace {

spec::Scenario one_stage(const char* model, int gpus, int tp, spec::Recompute recompute) {
  spec::Scenario s;
  s.model = spec::model_preset(model);
  s.cluster = spec::cluster_preset("dgx-h100");
  s.gpus = gpus;
  s.strategy.tp = tp;
  s.strategy.dp = 1;
  s.strategy.micro_batch = 1;
  s.strategy.global_batch = 4;
  s.strategy.seq_len = 4096;
  s.strategy.recompute = recompute;
  return spec::complete_and_validate(s);
}

double group_kernel_s(const std::vector<OperatorCost>& ops, OperatorGroup group) {
  double seconds = 0;
  for (const OperatorCost& c : ops) {
    if (c.group == group) seconds += c.kernel_s();
  }
  return seconds;
}

// On one pipeline stage without data parallelism nothing overlaps the kernels, so the estimate's
// compute is every operator's time: each layer's once per layer, the edges' once, per micro-batch.
TEST(OperatorCosts, KernelTimesAddUpToTheEstimatesComputeOnOneStage) {
  for (spec::Recompute recompute :
       {spec::Recompute::kNone, spec::Recompute::kSelective, spec::Recompute::kFull}) {
    const spec::Scenario s = one_stage("llama3.1-8b", 1, 1, recompute);
    const std::vector<OperatorCost> ops = operator_costs(s);
    const double per_micro_batch = s.model.layers * group_kernel_s(ops, OperatorGroup::kLayer) +
                                   group_kernel_s(ops, OperatorGroup::kEmbedding) +
                                   group_kernel_s(ops, OperatorGroup::kHead);
    const double compute = estimate(s).breakdown.compute_s;
    EXPECT_NEAR(s.strategy.micro_batches() * per_micro_batch, compute, 1e-9 * compute)
        << spec::name(recompute);
  }
}

TEST(OperatorCosts, MoeModelsListTheirDenseAndMoeLayersApart) {
  const spec::Scenario s = one_stage("mixtral-8x7b", 1, 1, spec::Recompute::kNone);
  const std::vector<OperatorCost> ops = operator_costs(s);
  const int moe_layers = s.model.layers - s.model.moe.dense_layers;
  const double per_micro_batch =
      (s.model.layers - moe_layers) * group_kernel_s(ops, OperatorGroup::kLayer) +
      moe_layers * group_kernel_s(ops, OperatorGroup::kMoeLayer) +
      group_kernel_s(ops, OperatorGroup::kEmbedding) + group_kernel_s(ops, OperatorGroup::kHead);
  const double compute = estimate(s).breakdown.compute_s;
  EXPECT_NEAR(s.strategy.micro_batches() * per_micro_batch, compute, 1e-9 * compute);
  ASSERT_FALSE(ops.empty());
  EXPECT_EQ(ops.front().group, OperatorGroup::kLayer);
  EXPECT_EQ(ops.back().group, OperatorGroup::kHead);
}

TEST(OperatorCosts, SelectiveRecomputationReRunsOnlyTheCoreAttentionForward) {
  for (const OperatorCost& c :
       operator_costs(one_stage("llama3.1-8b", 1, 1, spec::Recompute::kSelective))) {
    const bool core_attention =
        c.group == OperatorGroup::kLayer && c.kind == workload::OpKind::kAttention;
    EXPECT_DOUBLE_EQ(c.recompute_s, core_attention ? c.fwd_s : 0) << c.name;
  }
}

TEST(OperatorCosts, GemmsReportTheirForwardAndBackwardFlops) {
  const spec::Scenario s = one_stage("llama3.1-8b", 8, 8, spec::Recompute::kNone);
  for (const OperatorCost& c : operator_costs(s)) {
    if (c.name != std::string_view("mlp_down")) continue;
    // The down projection: tokens x ffn/tp x hidden, twice as many FLOPs backward as forward.
    const double forward =
        2.0 * s.strategy.seq_len * (s.model.ffn / s.strategy.tp) * s.model.hidden;
    EXPECT_DOUBLE_EQ(c.flops, 3 * forward);
    EXPECT_GT(c.fwd_s, 0);
    EXPECT_GT(c.host_s, 0);
    return;
  }
  ADD_FAILURE() << "no mlp_down operator";
}

}  // namespace
}  // namespace stepcast::analytic
