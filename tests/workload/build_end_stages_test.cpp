// What the pipeline's end stages do differently from its middle ones, in both engines.
#include <gtest/gtest.h>

#include <map>

#include "analysis/simulate.h"
#include "analytic/estimate.h"
#include "spec/presets.h"
#include "workload/build.h"
#include "workload/model_size.h"
#include "workload/step_costs.h"

namespace stepcast::workload {
namespace {

spec::Scenario pipeline(const char* model, int pp, int vp, int global_batch) {
  spec::Scenario s;
  s.model = spec::model_preset(model);
  s.cluster = spec::cluster_preset("dgx-a100-80g");
  s.gpus = 8 * pp;
  spec::Strategy& st = s.strategy;
  st.tp = 8;
  st.pp = pp;
  st.vp = vp;
  st.global_batch = global_batch;
  st.seq_len = 2048;
  st.recompute = spec::Recompute::kFull;
  st.host_dispatch_s = 0;  // no host time, which the two engines account differently
  return s;
}

// Megatron-LM's interleaved schedule (2022, schedules.py) sends no output of the last stage's last
// chunk (`output_tensor = None` where is_pipeline_last_stage()) and no input gradient of the first
// stage's first chunk (`input_tensor_grad = None`), and receives nothing for them (recv_next and
// recv_prev False), so each micro-batch's batched exchanges carry one send fewer on the end stages
// than on the middle ones: 2 vp - 1 transfers against 2 vp. The simulation sends so; the closed form
// charged the end stages 2 vp, a transfer per micro-batch more than the simulation on its slowest
// stage, the last (Korthikanti et al.'s GPT-530B on 35 stages: 0.33 s of 44.8).
TEST(BuildEndStages, InterleavedEndStagesMakeOneExchangeFewerPerMicroBatchInBothEngines) {
  // Llama 3.1 8B's 128k-token head makes the last stage the slowest.
  const spec::Scenario s = spec::complete_and_validate(pipeline("llama3.1-8b", 4, 2, 16));
  const graph::ExecGraph g = build(s);
  std::map<std::uint32_t, int> sends;
  for (graph::TaskId id = 0; id < g.size(); ++id)
    if (g.task(id).kind == graph::TaskKind::kSend) ++sends[g.task(id).rank];
  const int m = 16, vp = 2;
  EXPECT_EQ(sends[0], (2 * vp - 1) * m);
  EXPECT_EQ(sends[1], 2 * vp * m);
  EXPECT_EQ(sends[3], (2 * vp - 1) * m);
  const analytic::Estimate e = analytic::estimate(s);
  EXPECT_NEAR(e.breakdown.pp_comm_s, (2 * vp - 1) * m * pp_transfer_s(s), 1e-9);
  EXPECT_NEAR(analysis::simulate_metrics(s).step_time_s, e.step_time_s, 0.005 * e.step_time_s);
}

// Without gradient buckets each stage reduces, gathers and updates its own parameters after its
// last backward: the layers the pipeline lays out on it and its edge, not the model's average stage.
// BLOOM-176B's 70 layers on 12 stages are laid out 5, 6 x 10, 5, so its first stage holds 5 layers
// and the embedding, where the average stage (70/12 layers and the edge) holds 13% more; the
// first stage's tail ends the step, as its last backward ends the drain. Charged the average, the
// closed form was 0.39 s of 88 slower than the simulation on BigScience's run.
TEST(BuildEndStages, EachStageReducesItsOwnLaidOutParametersAfterTheSchedule) {
  spec::Scenario s = pipeline("gpt3-175b", 12, 1, 96);
  s.gpus = 8 * 12 * 2;
  s.model.layers = 70;  // 5, 6 x 10, 5 on 12 stages
  s.strategy.overlap_dp_comm = false;
  s.strategy.zero_stage = 1;
  s = spec::complete_and_validate(s);
  const ParamCounts p = param_counts(s.model);
  const double first = stage_own_params_per_gpu(p, s.model, s.strategy, 0);
  EXPECT_DOUBLE_EQ(first, 5 * layer_params_per_gpu(p, s.model, s.strategy) + embedding_params_per_gpu(p, s.strategy));
  EXPECT_LT(first, stage_params_per_gpu(p, s.model, s.strategy));
  const analytic::Estimate e = analytic::estimate(s);
  EXPECT_NEAR(e.breakdown.dp_comm_s, dp_reduce_s(s, first) + dp_gather_s(s, first) + tied_embedding_sync_s(s), 1e-9);
  EXPECT_NEAR(e.breakdown.optimizer_s, optimizer_s(s, first), 1e-12);
  const auto simulated = analysis::simulate_metrics(s).breakdown;  // 0.191 s in the closed form before
  EXPECT_NEAR(simulated.dp_comm_s, e.breakdown.dp_comm_s, 1e-6);
  EXPECT_NEAR(simulated.optimizer_s, e.breakdown.optimizer_s, 1e-6);
}

}  // namespace
}  // namespace stepcast::workload
