#include "analytic/pipeline_exchanges.h"

#include <gtest/gtest.h>

#include "workload/pipeline_schedule.h"

namespace stepcast::analytic {
namespace {

using spec::Schedule;

spec::Strategy strategy(Schedule schedule, int pp, int vp, int micro_batches,
                        spec::PipelineTransfers transfers = spec::PipelineTransfers::kStreamOrdered) {
  spec::Strategy st;
  st.schedule = schedule;
  st.pp = pp;
  st.vp = vp;
  st.dp = 1;
  st.micro_batch = 1;
  st.global_batch = micro_batches;
  st.pipeline_transfers = transfers;
  return st;
}

// Per micro-batch, the gathers and reduce-scatters beside the sends that the next pass waits for:
// those between the forward/backward pairs of the 1F1B phase (stage_order, 4 stages, 8
// micro-batches: stage s pairs 8 - (3 - s) forwards with backwards).
TEST(PipelineExchanges, OneForwardOneBackwardPairsEachSendWithTheCollectiveOfThePassAcross) {
  const spec::Strategy st = strategy(Schedule::k1F1B, 4, 1, 8);
  const auto at = [&](int stage) { return collectives_beside_sends(st, stage, false); };
  // The first stage sends no gradients: a forward's send, then the backward's first gather.
  EXPECT_DOUBLE_EQ(at(0).gathers, 5.0 / 8);
  EXPECT_DOUBLE_EQ(at(0).scatters, 0);
  // A middle stage: 6 pairs; each backward's send but the last pair's (a cool-down backward
  // follows it) runs beside the backward's last reduce-scatter.
  EXPECT_DOUBLE_EQ(at(1).gathers, 6.0 / 8);
  EXPECT_DOUBLE_EQ(at(1).scatters, 5.0 / 8);
  // The last stage sends no activations: only its backwards' sends, 7 of them before a forward.
  EXPECT_DOUBLE_EQ(at(3).gathers, 0);
  EXPECT_DOUBLE_EQ(at(3).scatters, 7.0 / 8);
}

TEST(PipelineExchanges, AForwardsFirstGatherRunsBesideTheSendBeforeItOnlyWhenNothingWaitsForTheSend) {
  const spec::Strategy st = strategy(Schedule::k1F1B, 4, 1, 8, spec::PipelineTransfers::kAsynchronous);
  const CollectivesBesideSends c = collectives_beside_sends(st, 1, true);
  EXPECT_DOUBLE_EQ(c.gathers, (6.0 + 5.0) / 8);
  EXPECT_DOUBLE_EQ(c.scatters, 5.0 / 8);
}

TEST(PipelineExchanges, GPipeHasNoPairsAndZeroBubbleLeavesTheReduceScatterToTheWeightGradient) {
  const CollectivesBesideSends gpipe = collectives_beside_sends(strategy(Schedule::kGpipe, 4, 1, 8), 1, false);
  EXPECT_DOUBLE_EQ(gpipe.gathers + gpipe.scatters, 0);
  const CollectivesBesideSends zb = collectives_beside_sends(strategy(Schedule::kZeroBubbleH1, 4, 1, 8), 1, false);
  EXPECT_DOUBLE_EQ(zb.gathers, 6.0 / 8);
  EXPECT_DOUBLE_EQ(zb.scatters, 0);
}

TEST(PipelineExchanges, InterleavedLastStageSendsFromItsFirstChunkOnlyForward) {
  // 4 stages, 2 chunks, 8 micro-batches: the last stage pairs its forwards 4-15 with its backwards
  // 0-11; of those forwards only the first chunk's (8-11) send on, and every backward sends back.
  const CollectivesBesideSends c = collectives_beside_sends(strategy(Schedule::kInterleaved, 4, 2, 8), 3, false);
  EXPECT_DOUBLE_EQ(c.gathers, 4.0 / 8);
  EXPECT_DOUBLE_EQ(c.scatters, 11.0 / 8);
}


// The counts follow from the schedule's shape; here they are checked against the passes
// themselves (workload::stage_order, the simulator's order), sends pair by pair, on every
// schedule, stage, chunk count and micro-batch count of a grid, short last groups included.
TEST(PipelineExchanges, CountsEqualAWalkOverTheStagesPasses) {
  using workload::Pass;
  for (const Schedule schedule : {Schedule::kGpipe, Schedule::k1F1B, Schedule::kInterleaved, Schedule::kZeroBubbleH1})
    for (int pp = 1; pp <= 5; ++pp)
      for (int vp = 1; vp <= (schedule == Schedule::kInterleaved ? 3 : 1); ++vp)
        for (int m = 1; m <= 11; ++m)
          for (int stage = 0; stage < pp; ++stage)
            for (const bool async : {false, true}) {
              const auto order = workload::stage_order(schedule, pp, vp, m, stage);
              double gathers = 0, scatters = 0;
              for (std::size_t i = 0; i + 1 < order.size(); ++i) {
                const workload::Slot &slot = order[i], &next = order[i + 1];
                if (!slot.paired || !next.paired) continue;
                const int model_chunk = slot.chunk * pp + stage;
                if (slot.pass == Pass::kForward && model_chunk < pp * vp - 1) gathers += next.pass == Pass::kBackward;
                if (slot.pass == Pass::kBackward && model_chunk > 0) {
                  scatters += schedule != Schedule::kZeroBubbleH1;
                  gathers += next.pass == Pass::kForward && async;
                }
              }
              const CollectivesBesideSends c = collectives_beside_sends(strategy(schedule, pp, vp, m), stage, async);
              EXPECT_DOUBLE_EQ(c.gathers, gathers / m) << "schedule " << static_cast<int>(schedule) << " pp " << pp
                                                       << " vp " << vp << " m " << m << " stage " << stage
                                                       << (async ? " async" : "");
              EXPECT_DOUBLE_EQ(c.scatters, scatters / m) << "schedule " << static_cast<int>(schedule) << " stage " << stage;
            }
}

// The README's interleaved example (4 stages, 2 chunks, 8 micro-batches): the last stage runs the
// last paired backward and three of its four cool-down backwards straight into another backward,
// each send beside a reduce-scatter and a gather; the last goes to the optimizer.
TEST(PipelineExchanges, TheCoolDownsSendsRunBesideAReduceScatterAndTheNextBackwardsGather) {
  const CollectivesBesideSends c = collectives_beside_cool_down_sends(strategy(Schedule::kInterleaved, 4, 2, 8), 3);
  EXPECT_DOUBLE_EQ(c.gathers, 4);
  EXPECT_DOUBLE_EQ(c.scatters, 4);
  // With fewer micro-batches than stages each chunk's backwards wait for the round trip instead.
  EXPECT_DOUBLE_EQ(collectives_beside_cool_down_sends(strategy(Schedule::kInterleaved, 4, 2, 3), 3).gathers, 0);
  EXPECT_DOUBLE_EQ(collectives_beside_cool_down_sends(strategy(Schedule::k1F1B, 4, 1, 8), 1).gathers, 0);
}

// Checked against the passes (workload::stage_order): the sends of backwards a backward follows.
TEST(PipelineExchanges, CoolDownCountsEqualAWalkOverTheStagesPasses) {
  for (int pp = 1; pp <= 5; ++pp)
    for (int vp = 2; vp <= 3; ++vp)
      for (int m = pp; m <= 11; ++m)
        for (int stage = 0; stage < pp; ++stage) {
          const auto order = workload::stage_order(Schedule::kInterleaved, pp, vp, m, stage);
          double sends = 0;
          for (std::size_t i = 0; i + 1 < order.size(); ++i)
            sends += order[i].pass == workload::Pass::kBackward && order[i + 1].pass == workload::Pass::kBackward &&
                     order[i].chunk * pp + stage > 0;
          const CollectivesBesideSends c = collectives_beside_cool_down_sends(strategy(Schedule::kInterleaved, pp, vp, m), stage);
          EXPECT_DOUBLE_EQ(c.gathers, sends) << "pp " << pp << " vp " << vp << " m " << m << " stage " << stage;
          EXPECT_DOUBLE_EQ(c.scatters, sends);
        }
}

}  // namespace
}  // namespace stepcast::analytic
