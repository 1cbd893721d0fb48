#include "workload/pipeline_schedule.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <tuple>
#include <utility>

#include "graph/exec_graph.h"
#include "sim/engine.h"
#include "spec/presets.h"
#include "spec/scenario.h"

namespace stepcast::workload {
namespace {

using spec::Schedule;

std::string text(const std::vector<Slot>& order) {
  std::string out;
  for (const Slot& s : order) {
    if (!out.empty()) out += ' ';
    out += s.pass == Pass::kForward ? 'F' : s.pass == Pass::kBackward ? 'B' : 'W';
    out += std::to_string(s.micro_batch);
    if (s.chunk > 0) {
      out += '.';
      out += std::to_string(s.chunk);
    }
  }
  return out;
}

TEST(PipelineSchedule, OneFOneBWarmsUpThenAlternatesThenDrains) {
  EXPECT_EQ(text(stage_order(Schedule::k1F1B, 4, 1, 8, 0)),
            "F0 F1 F2 F3 B0 F4 B1 F5 B2 F6 B3 F7 B4 B5 B6 B7");
  EXPECT_EQ(text(stage_order(Schedule::k1F1B, 4, 1, 8, 3)),
            "F0 B0 F1 B1 F2 B2 F3 B3 F4 B4 F5 B5 F6 B6 F7 B7");
}

TEST(PipelineSchedule, GradientsStreamFromTheLastBackwardOrStartAlignedStagePassesLater) {
  spec::Strategy st;
  st.pp = 4;
  for (int stage : {0, 2}) {
    const std::vector<Slot> order = stage_order(Schedule::k1F1B, 4, 1, 8, stage);
    const GradSyncSlots ready = grad_sync_slots(order, st, stage);
    EXPECT_EQ(ready.streams, std::vector<std::size_t>{order.size() - 1});  // B7, the last pass
    EXPECT_EQ(ready.starts_after, std::vector<std::size_t>{order.size()});
  }
  st.grad_sync = spec::GradSync::kAligned;
  // Under 1F1B the first stage streams as before; the others start after their last pass.
  const std::vector<Slot> first = stage_order(Schedule::k1F1B, 4, 1, 8, 0);
  EXPECT_EQ(grad_sync_slots(first, st, 0).streams, std::vector<std::size_t>{first.size() - 1});
  const std::vector<Slot> third = stage_order(Schedule::k1F1B, 4, 1, 8, 2);
  const GradSyncSlots aligned = grad_sync_slots(third, st, 2);
  EXPECT_EQ(aligned.streams, std::vector<std::size_t>{third.size()});
  EXPECT_EQ(aligned.starts_after, std::vector<std::size_t>{third.size() - 1});
}

// torch.distributed.pipelining with FSDP2 reduces every chunk's gradients after the stage's last
// backward, whatever the stage, the chunk or the schedule.
TEST(PipelineSchedule, AfterBackwardSyncStartsEveryChunkAfterTheStagesLastBackward) {
  spec::Strategy st;
  st.pp = 4;
  st.grad_sync = spec::GradSync::kAfterBackward;
  for (const auto& [schedule, vp] : {std::pair{Schedule::k1F1B, 1}, std::pair{Schedule::kInterleaved, 2}}) {
    st.vp = vp;
    for (int stage : {0, 2}) {
      const std::vector<Slot> order = stage_order(schedule, 4, vp, 8, stage);
      std::size_t last_backward = 0;
      for (std::size_t i = 0; i < order.size(); ++i)
        if (order[i].pass == Pass::kBackward) last_backward = i;
      const GradSyncSlots after = grad_sync_slots(order, st, stage);
      const auto chunks = static_cast<std::size_t>(vp);
      EXPECT_EQ(after.streams, std::vector<std::size_t>(chunks, order.size())) << stage;
      EXPECT_EQ(after.starts_after, std::vector<std::size_t>(chunks, last_backward)) << stage;
    }
  }
}

TEST(PipelineSchedule, DeepSpeedStepsAlternateDirectionAndRunTheOneFOneBOrder) {
  // Stage 1 of 4 with 3 micro-batches, step by step (idle steps as "-"), from TrainSchedule's
  // formulas worked by hand: forwards on odd steps, backwards on even ones.
  std::string stage1;
  for (const DeepSpeedStep& step : deepspeed_train_steps(4, 3, 1)) {
    if (step.micro_batch < 0) {
      stage1 += "- ";
      continue;
    }
    stage1 += step.forward ? 'F' : 'B';
    stage1 += std::to_string(step.micro_batch);
    stage1 += ' ';
  }
  EXPECT_EQ(stage1, "- F0 - F1 - F2 B0 - B1 - B2 - ");
  for (int p = 1; p <= 8; ++p) {
    for (int m = 1; m <= 12; ++m) {
      for (int stage = 0; stage < p; ++stage) {
        const std::vector<DeepSpeedStep> steps = deepspeed_train_steps(p, m, stage);
        ASSERT_EQ(steps.size(), static_cast<std::size_t>(2 * (m + p - 1)));
        std::vector<Slot> passes;
        for (std::size_t t = 0; t < steps.size(); ++t) {
          EXPECT_EQ(steps[t].forward, t % 2 == static_cast<std::size_t>(stage % 2));
          if (steps[t].micro_batch >= 0) {
            passes.push_back(
                {steps[t].forward ? Pass::kForward : Pass::kBackward, 0, steps[t].micro_batch});
          }
        }
        EXPECT_EQ(text(passes), text(stage_order(Schedule::k1F1B, p, 1, m, stage)))
            << "p " << p << " m " << m << " stage " << stage;
      }
    }
  }
}

TEST(PipelineSchedule, GpipeRunsEveryForwardBeforeAnyBackward) {
  EXPECT_EQ(text(stage_order(Schedule::kGpipe, 2, 1, 3, 1)), "F0 F1 F2 B2 B1 B0");
}

TEST(PipelineSchedule, ZeroBubbleDefersWeightGradientsByTheStageIndex) {
  EXPECT_EQ(text(stage_order(Schedule::kZeroBubbleH1, 2, 1, 2, 0)), "F0 F1 B0 W0 B1 W1");
  EXPECT_EQ(text(stage_order(Schedule::kZeroBubbleH1, 2, 1, 2, 1)), "F0 B0 F1 B1 W0 W1");
}

TEST(PipelineSchedule, InterleavedWalksGroupsOfStagesThroughEveryChunk) {
  // Megatron-LM: warm-up (p - s - 1) * 2 + (v - 1) * p = 2 + 2 forwards on stage 0 of 2.
  EXPECT_EQ(text(stage_order(Schedule::kInterleaved, 2, 2, 4, 0)),
            "F0 F1 F0.1 F1.1 F2 B0.1 F3 B1.1 F2.1 B0 F3.1 B1 B2.1 B3.1 B2 B3");
}

TEST(PipelineSchedule, EveryScheduleRunsEachPassOfEachMicroBatchOnce) {
  for (const auto& [schedule, chunks] : {std::pair{Schedule::kGpipe, 1}, {Schedule::k1F1B, 1},
                                         {Schedule::kInterleaved, 3}, {Schedule::kZeroBubbleH1, 1}}) {
    for (int m : {1, 3, 8, 13}) {
      for (int stage = 0; stage < 4; ++stage) {
        std::map<std::tuple<int, int, int>, int> seen;
        for (const Slot& s : stage_order(schedule, 4, chunks, m, stage)) {
          ++seen[{static_cast<int>(s.pass), s.chunk, s.micro_batch}];
        }
        const int passes = schedule == Schedule::kZeroBubbleH1 ? 3 : 2;
        EXPECT_EQ(seen.size(), static_cast<std::size_t>(passes * chunks * m)) << spec::name(schedule) << " m " << m;
        for (const auto& [key, count] : seen) EXPECT_EQ(count, 1);
      }
    }
  }
}

// A pipeline of p stages with uniform pass times, simulated: each stage's passes in schedule
// order on one stream; a forward waits for the same micro-batch's forward on the model chunk
// before, a backward for the backward on the chunk after, and a W for its B. Each wait between
// stages takes a transfer of `hop` on a stream of its own (sent beside the sender's compute);
// free by default.
sim::Time simulate(Schedule schedule, int p, int v, int m, sim::Time f, sim::Time b, sim::Time w,
                   sim::Time hop = 0) {
  graph::ExecGraph g;
  std::map<std::tuple<int, int, int>, graph::TaskId> done;  // (pass, model chunk, mb) -> task
  std::vector<std::tuple<graph::TaskId, int, int, int>> waits;
  for (int stage = 0; stage < p; ++stage) {
    for (const Slot& s : stage_order(schedule, p, v, m, stage)) {
      const int chunk = s.chunk * p + stage;
      const sim::Time d = s.pass == Pass::kForward ? f / v : s.pass == Pass::kBackward ? b / v : w / v;
      graph::Task t;
      t.rank = static_cast<std::uint32_t>(stage);
      t.duration_ns = d;
      const graph::TaskId id = g.add_task(t, "pass");
      done[{static_cast<int>(s.pass), chunk, s.micro_batch}] = id;
      if (s.pass == Pass::kForward && chunk > 0) waits.emplace_back(id, 0, chunk - 1, s.micro_batch);
      if (s.pass == Pass::kBackward && chunk < p * v - 1) waits.emplace_back(id, 1, chunk + 1, s.micro_batch);
      if (s.pass == Pass::kBackward && chunk == p * v - 1) waits.emplace_back(id, 0, chunk, s.micro_batch);
      if (s.pass == Pass::kWeightGradient) waits.emplace_back(id, 1, chunk, s.micro_batch);
    }
  }
  std::uint16_t transfer_stream = 1;
  for (const auto& [id, pass, chunk, mb] : waits) {
    const graph::TaskId from = done.at({pass, chunk, mb});
    if (hop == 0 || g.task(from).rank == g.task(id).rank) {
      g.add_edge(from, id);
      continue;
    }
    graph::Task transfer;
    transfer.rank = g.task(from).rank;
    transfer.stream = transfer_stream++;
    transfer.duration_ns = hop;
    const graph::TaskId sent = g.add_task(transfer, "hop");
    g.add_edge(from, sent);
    g.add_edge(sent, id);
  }
  g.finalize();
  return sim::run(g).makespan_ns;
}

TEST(PipelineSchedule, GpipeAndOneFOneBTakeMicroBatchesPlusStagesMinusOneSlots) {
  // Fill and drain leave p - 1 slots of one micro-batch's F + B idle (Huang 2019; Narayanan
  // 2021 §2.2.1): T = (m + p - 1)(F + B).
  const int p = 4, m = 8;
  const sim::Time f = 1000, b = 2000;
  EXPECT_EQ(simulate(Schedule::kGpipe, p, 1, m, f, b, 0), (m + p - 1) * (f + b));
  EXPECT_EQ(simulate(Schedule::k1F1B, p, 1, m, f, b, 0), (m + p - 1) * (f + b));
}

TEST(PipelineSchedule, InterleavingDividesTheBubbleByTheVirtualStages) {
  // Each chunk runs F/v and B/v; the bubble shrinks to (p - 1)(F + B)/v (Narayanan 2021
  // §2.2.2): T = m(F + B) + (p - 1)(F + B)/v, for m a multiple of p.
  const int p = 4, v = 2, m = 8;
  const sim::Time f = 1000, b = 2000;
  EXPECT_EQ(simulate(Schedule::kInterleaved, p, v, m, f, b, 0), m * (f + b) + (p - 1) * (f + b) / v);
}

TEST(PipelineSchedule, InterleavingWithFewerMicroBatchesThanStagesWaitsForEachRoundTrip) {
  // With m < p, every round of a chunk leaves a stage waiting for its first micro-batch to come
  // back through the p stages: each of the v rounds of the forward and of the backward takes p
  // chunk slots, the last m - 1 more: T = (p + (m - 1)/v)(F + B). That is the closed form's
  // m(F + B) + (p - 1)(F + B)/v plus (1 - 1/v)(p - m)(F + B) (analytic/estimate.cpp; the engines
  // agree in Build.InterleavedPipelinesWithFewerMicroBatchesThanStagesAgreeInBothEngines).
  const int p = 4, v = 2;
  const sim::Time f = 1000, b = 2000;
  for (const int m : {1, 2, 3}) {
    EXPECT_EQ(simulate(Schedule::kInterleaved, p, v, m, f, b, 0), p * (f + b) + (m - 1) * (f + b) / v) << m;
  }
}

TEST(PipelineSchedule, InterleavingExposesEveryHopOfOneMicroBatchsWay) {
  // Interleaving runs another chunk while a transfer is in flight, but each chunk's turn is
  // tight: a hop's latency delays the first micro-batch's way through all p v chunks, forward and
  // back, and nothing else: 2 (p v - 1) hops, whatever m. The closed form charges (p - 1)/v fill
  // and drain slots of 2 v hops each, plus (1 - 1/v) p of them in the rounds: the same sum
  // (analytic/estimate.cpp).
  const sim::Time f = 1000, b = 2000, hop = 50;
  for (const auto& [p, v] : {std::pair{4, 2}, std::pair{4, 4}, std::pair{8, 2}}) {
    for (const int m : {p, 2 * p, 4 * p}) {
      const sim::Time extra = simulate(Schedule::kInterleaved, p, v, m, f, b, 0, hop) -
                              simulate(Schedule::kInterleaved, p, v, m, f, b, 0);
      EXPECT_EQ(extra, 2 * (p * v - 1) * hop) << p << " stages, " << v << " chunks, " << m << " micro-batches";
    }
  }
}

TEST(PipelineSchedule, ZeroBubbleH1LeavesStagesMinusOneTimesForwardPlusBackwardMinusWeight) {
  // Qi et al. 2024 §3.1: with B the input gradient and W the weight gradient,
  // T = m(F + B + W) + (p - 1)(F + B - W).
  const int p = 4, m = 8;
  const sim::Time f = 1000, b = 1000, w = 1000;
  EXPECT_EQ(simulate(Schedule::kZeroBubbleH1, p, 1, m, f, b, w), m * (f + b + w) + (p - 1) * (f + b - w));
}

TEST(PipelineLayout, SpareLayersGoToTheMiddleChunks) {
  // Llama 3 405B: 126 layers on 32 model chunks; the first and last carry the embedding and head.
  const ChunkLayout llama(126, 32);
  EXPECT_EQ(llama.chunk(0), 3);
  EXPECT_EQ(llama.chunk(31), 3);
  for (int j = 1; j < 31; ++j) EXPECT_EQ(llama.chunk(j), 4) << j;
  EXPECT_EQ(ChunkLayout(5, 1).chunk(0), 5);
  EXPECT_EQ(ChunkLayout(5, 2).chunk(0), 3);
  EXPECT_EQ(ChunkLayout(5, 2).chunk(1), 2);
}

TEST(PipelineLayout, AStageHoldsTheLayersOfItsChunks) {
  // 126 layers, 16 stages of 2 chunks: stage 0 holds chunks 0 and 16 (3 + 4), stage 15 chunks 15
  // and 31 (4 + 3), the others 8; all stages together hold every layer once.
  const ChunkLayout llama(126, 32);
  EXPECT_EQ(llama.stage(16, 0), 7);
  EXPECT_EQ(llama.stage(16, 15), 7);
  int total = 0;
  for (int s = 0; s < 16; ++s) total += llama.stage(16, s);
  EXPECT_EQ(total, 126);
  EXPECT_EQ(ChunkLayout(126, 16).stage(16, 7), 8);
}

TEST(PipelineLayout, TheLayersBeforeAChunkAreThoseOfEveryEarlierChunk) {
  for (const auto& [layers, chunks] : {std::pair{126, 32}, {126, 112}, {30, 28}, {32, 8}, {5, 2}}) {
    const ChunkLayout layout(layers, chunks);
    int before = 0;
    for (int j = 0; j < chunks; ++j) {
      EXPECT_EQ(layout.layers_before(j), before) << layers << " over " << chunks << ", chunk " << j;
      before += layout.chunk(j);
    }
    EXPECT_EQ(before, layers);
  }
}

TEST(PipelineLayout, MiddleChunksAreAlikeUnlessSomeOfThemTakeASpareLayer) {
  EXPECT_TRUE(ChunkLayout(128, 32).middle_chunks_alike());   // no spare layer
  EXPECT_TRUE(ChunkLayout(126, 32).middle_chunks_alike());   // 30 spares: every middle chunk
  EXPECT_FALSE(ChunkLayout(126, 112).middle_chunks_alike());  // 14 spares over 110 middle chunks
  EXPECT_FALSE(ChunkLayout(30, 28).middle_chunks_alike());
}

TEST(PipelineLayout, AStageCountsTheMoeLayersOfItsOwnChunks) {
  // DeepSeek-V3: 61 layers, the first 3 dense. On 4 stages of 15, 16, 15 and 15 layers the first
  // stage holds the 3 dense ones; interleaved over 8 chunks it holds chunks 0 and 4.
  const spec::ModelSpec deepseek = spec::model_preset("deepseek-v3");
  EXPECT_EQ(stage_moe_layer_count(deepseek, 4, 1, 0), 12);
  EXPECT_EQ(stage_moe_layer_count(deepseek, 4, 1, 1), 16);
  EXPECT_EQ(stage_moe_layer_count(deepseek, 4, 1, 3), 15);
  EXPECT_EQ(stage_moe_layer_count(deepseek, 4, 2, 0), ChunkLayout(61, 8).stage(4, 0) - 3);
  // A dense model has none.
  EXPECT_EQ(stage_moe_layer_count(spec::model_preset("llama3.1-8b"), 4, 1, 2), 0);
}

}  // namespace
}  // namespace stepcast::workload
