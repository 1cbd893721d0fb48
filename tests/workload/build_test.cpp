#include "workload/build.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <utility>

#include "analysis/simulate.h"
#include "analytic/estimate.h"
#include "core/error.h"
#include "sim/engine.h"
#include "spec/presets.h"
#include "workload/memory.h"
#include "workload/pipeline_schedule.h"
#include "workload/step_costs.h"

namespace stepcast::workload {
namespace {

struct Shape {
  int gpus = 8, tp = 8, pp = 1, vp = 1, cp = 1, zero = 0, micro_batch = 1, global_batch = 16, seq = 4096;
  spec::Recompute recompute = spec::Recompute::kNone;
  spec::Schedule schedule = spec::Schedule::k1F1B;
  bool sp = false;
  bool dp_overlap = true;
  bool async_tp = false;
  bool async_backward = false;
  spec::ShardedCollectives sharded = spec::ShardedCollectives::kPerLayer;
  spec::PipelineTransfers transfers = spec::PipelineTransfers::kHostSynchronised;
  spec::GradSync grad_sync = spec::GradSync::kAsReady;
  spec::CpExchange cp_exchange = spec::CpExchange::kRing;
  spec::Dtype grad_dtype = spec::Dtype::kBf16;
  bool host_time = true;  // false: no host launch time, which the two engines account differently
};

spec::Scenario scenario(const char* model, const char* cluster, const Shape& x) {
  spec::Scenario s;
  s.model = spec::model_preset(model);
  s.cluster = spec::cluster_preset(cluster);
  s.gpus = x.gpus;
  spec::Strategy& st = s.strategy;
  st.tp = x.tp;
  st.pp = x.pp;
  st.vp = x.vp;
  st.cp = x.cp;
  st.zero_stage = x.zero;
  st.micro_batch = x.micro_batch;
  st.global_batch = x.global_batch;
  st.seq_len = x.seq;
  st.recompute = x.recompute;
  st.schedule = x.schedule;
  st.sequence_parallel = x.sp;
  st.overlap_dp_comm = x.dp_overlap;
  st.overlap_tp_comm = x.async_tp;
  st.tp_async_backward = x.async_backward;
  st.pipeline_transfers = x.transfers;
  st.sharded_collectives = x.sharded;
  st.grad_sync = x.grad_sync;
  st.cp_exchange = x.cp_exchange;
  st.grad_reduce_dtype = x.grad_dtype;
  if (!x.host_time) st.host_dispatch_s = 0;
  return spec::complete_and_validate(s);
}

double simulated(const spec::Scenario& s) { return analysis::simulate_metrics(s).step_time_s; }

TEST(Build, SimulationAgreesWithEstimateWithoutAPipeline) {
  // One stage and gradients reduced after the backward: nothing overlaps but the CP ring beside
  // attention, which both engines hide the same way, so they must agree (issue 3: within 3%).
  // Bucketed DP and ZeRO-3 prefetch have a test of their own (below); blocking ZeRO-3
  // collectives overlap nothing.
  const Shape shapes[] = {
      {.gpus = 8, .tp = 8},
      {.gpus = 8, .tp = 8, .sp = true},
      {.gpus = 64, .tp = 8, .zero = 1, .global_batch = 64, .dp_overlap = false},
      {.gpus = 64,
       .tp = 8,
       .zero = 2,
       .global_batch = 64,
       .recompute = spec::Recompute::kFull,
       .dp_overlap = false},
      {.gpus = 64,
       .tp = 4,
       .global_batch = 64,
       .recompute = spec::Recompute::kSelective,
       .dp_overlap = false},
      {.gpus = 16, .tp = 8, .cp = 2, .global_batch = 16, .seq = 16384, .sp = true},
      // The ring again beside the recomputed attention; Llama 3's gathers and scatters exposed.
      {.gpus = 16, .tp = 4, .cp = 4, .global_batch = 4, .seq = 16384, .recompute = spec::Recompute::kFull, .sp = true},
      {.gpus = 16,
       .tp = 4,
       .cp = 4,
       .global_batch = 4,
       .seq = 16384,
       .sp = true,
       .cp_exchange = spec::CpExchange::kAllGather},
      {.gpus = 16,
       .tp = 4,
       .cp = 4,
       .global_batch = 4,
       .seq = 16384,
       .recompute = spec::Recompute::kSelective,
       .sp = true,
       .cp_exchange = spec::CpExchange::kAllGather},
      {.gpus = 8, .tp = 2, .global_batch = 8, .recompute = spec::Recompute::kOp},
      // Async TP: each collective hides behind the GEMM at its block edge, in both engines (16K
      // tokens, so that the GPU rather than the host sets the pace).
      {.gpus = 8, .tp = 8, .global_batch = 8, .seq = 16384, .sp = true, .async_tp = true},
      // Megatron's column-parallel backward: collectives beside the input and weight gradients.
      {.gpus = 8, .tp = 8, .global_batch = 8, .seq = 16384, .async_backward = true},
      {.gpus = 8,
       .tp = 8,
       .global_batch = 8,
       .seq = 16384,
       .recompute = spec::Recompute::kFull,
       .sp = true,
       .async_backward = true},
      // DeepSpeed 0.3.x ZeRO-3: every gather and reduce-scatter blocks the compute stream.
      {.gpus = 64,
       .tp = 1,
       .zero = 3,
       .global_batch = 64,
       .recompute = spec::Recompute::kFull,
       .sharded = spec::ShardedCollectives::kPerTensorBlocking},
  };
  for (const Shape& x : shapes) {
    const spec::Scenario s = scenario("llama3.1-8b", "dgx-h100", x);
    const double e = analytic::estimate(s).step_time_s;
    EXPECT_NEAR(simulated(s), e, 0.03 * e) << spec::dump(s);
  }
}

TEST(Build, SimulationAgreesWithEstimateWhereGradientCollectivesCrossOtherLinksThanTp) {
  // TP inside a node, FSDP or bucketed data parallelism across nodes: the compute stream's TP
  // collectives and the gradient group's run at once on different links, so the closed form
  // hides the gradient group's collectives behind both; before it did, it was 11-24% slower than
  // the simulation on the first four. In the last three both groups are inside one NVLink
  // domain and share its bandwidth, which slows the TP collectives; before the closed form
  // counted that, it was 8% faster than the simulation on the GB200 NVL72 with ZeRO-3.
  const std::pair<const char*, Shape> shapes[] = {
      {"dgx-a100-40g", {.gpus = 16, .tp = 8, .zero = 3, .global_batch = 16, .seq = 2048}},
      {"dgx-h100", {.gpus = 16, .tp = 8, .zero = 3, .global_batch = 16}},
      {"dgx-h100", {.gpus = 64, .tp = 8, .zero = 3, .global_batch = 64, .sp = true}},
      {"dgx-h100", {.gpus = 64, .tp = 8, .zero = 1, .global_batch = 64}},
      {"dgx-h100", {.gpus = 8, .tp = 2, .zero = 3, .global_batch = 16}},
      {"gb200-nvl72", {.gpus = 16, .tp = 2, .zero = 3, .global_batch = 64, .sp = true}},
      {"gb200-nvl72", {.gpus = 32, .tp = 4, .zero = 1, .global_batch = 64}},
  };
  for (const auto& [cluster, x] : shapes) {
    const spec::Scenario s = scenario("llama3.1-8b", cluster, x);
    const double e = analytic::estimate(s).step_time_s;
    EXPECT_NEAR(simulated(s), e, 0.03 * e) << spec::dump(s);
  }
}

TEST(Build, SimulationAgreesWithEstimateOnTheNewerArchitectures) {
  // Latent attention (DeepSeek-V3), query-key norms, sandwich norms and windows on half the layers
  // (Gemma 2), chunked attention and MoE every other layer (Llama 4 Maverick): the same operators
  // in both engines, nothing overlapping on one stage without data parallelism. No host cost: a
  // MoE layer's hundreds of expert GEMMs on one GPU make the host set the pace, where the two
  // engines differ by design (the simulated host runs ahead of the GPU).
  const std::pair<const char*, Shape> cases[] = {
      {"deepseek-v3", {.gpus = 8, .tp = 8, .global_batch = 8, .seq = 4096}},
      {"qwen3-32b", {.gpus = 8, .tp = 8, .global_batch = 8, .seq = 4096}},
      {"gemma-2-9b", {.gpus = 8, .tp = 8, .global_batch = 8, .seq = 8192}},
      {"llama4-maverick", {.gpus = 8, .tp = 8, .global_batch = 8, .seq = 16384}},
  };
  for (const auto& [model, x] : cases) {
    spec::Scenario s = scenario(model, "dgx-h100", x);
    s.strategy.host_dispatch_s = 0;
    const double e = analytic::estimate(s).step_time_s;
    EXPECT_NEAR(simulated(s), e, 0.03 * e) << model;
  }
}

TEST(Build, SimulationAgreesWithEstimateOnAPipeline) {
  // Llama 2 70B: 20 layers per stage, which the head and embedding barely unbalance. Llama 3.1 8B
  // on one GPU per stage: its 128k-token head makes the last stage the slowest by far, which the
  // closed form charges in the m steady-state slots and once in the fill and drain.
  for (spec::Schedule schedule : {spec::Schedule::kGpipe, spec::Schedule::k1F1B}) {
    Shape x{.gpus = 32, .tp = 8, .pp = 4, .global_batch = 32};
    x.schedule = schedule;
    const spec::Scenario balanced = scenario("llama2-70b", "dgx-h100", x);
    const double e = analytic::estimate(balanced).step_time_s;
    EXPECT_NEAR(simulated(balanced), e, 0.03 * e) << spec::name(schedule);
    Shape y{.gpus = 4, .tp = 1, .pp = 4, .global_batch = 16};
    y.schedule = schedule;
    const spec::Scenario heavy_head = scenario("llama3.1-8b", "dgx-h100", y);
    const double h = analytic::estimate(heavy_head).step_time_s;
    EXPECT_NEAR(simulated(heavy_head), h, 0.03 * h) << spec::name(schedule);
  }
}

TEST(Build, ThePipelinesEndStagesMakeOneExchangePerMicroBatchInBothEngines) {
  // Without interleaving the first stage sends no gradients and the last no activations, so in
  // the steady state the last stage, the slowest here (Llama 3.1 8B's 128k-token head), waits
  // for one transfer per micro-batch, not two. Charged two, the closed form was 4.2% slower than
  // the simulation on this 4-stage B200 pipeline.
  Shape x{.gpus = 16, .tp = 4, .pp = 4, .global_batch = 16, .seq = 2048};
  spec::Scenario s = scenario("llama3.1-8b", "dgx-b200", x);
  s.strategy.host_dispatch_s = 0;
  s = spec::complete_and_validate(s);
  const double e = analytic::estimate(s).step_time_s;
  EXPECT_NEAR(simulated(s), e, 0.015 * e);
}

TEST(Build, ZeroThreeCollectivesBesideSteadyStateSendsSlowThemInBothEngines) {
  // The README's interleaved example: ZeRO-3's group and the pipeline both cross the B200 nodes'
  // NICs, and in the 1F1B phase each blocking send shares them with the next backward's first
  // gather or the last backward's reduce-scatter (analytic::collectives_beside_sends). Without
  // them the closed form was 9.1% faster than the simulation, and 5.5% without the cool-down's
  // sends, beside a reduce-scatter and the next backward's gather each
  // (analytic::collectives_beside_cool_down_sends); 3.6% is left.
  const spec::Scenario s = scenario("llama3.1-8b", "dgx-b200",
                                    {.gpus = 64, .tp = 8, .pp = 4, .vp = 2, .zero = 3, .micro_batch = 2,
                                     .global_batch = 32, .schedule = spec::Schedule::kInterleaved});
  const double sim = simulated(s);
  EXPECT_NEAR(analytic::estimate(s).step_time_s, sim, 0.04 * sim);
}

// Megatron's column-parallel backward (--tp-async-backward): the first op of each TP block runs its
// input and weight gradients as two tasks, a collective beside each under SP (the input gathered
// again, the input gradient's reduce-scatter) and beside the weight gradient without it (the
// input gradient's all-reduce); none of them on the compute stream.
TEST(Build, MegatronsAsyncBackwardRunsTheColumnParallelCollectivesBesideTheirGemms) {
  const auto count = [](const Shape& x) {
    const graph::ExecGraph g = build(scenario("llama3.1-8b", "dgx-h100", x));
    std::uint16_t compute_stream = 0;
    for (graph::TaskId id = 0; id < g.size(); ++id)
      if (g.task(id).category == graph::Category::kCompute) compute_stream = g.task(id).stream;
    std::map<std::string, int> n;
    for (graph::TaskId id = 0; id < g.size(); ++id) {
      const graph::Task& t = g.task(id);
      if (g.name(id) == "qkv_projection.wgrad" || g.name(id) == "mlp_up.wgrad") ++n["wgrad"];
      if (t.category != graph::Category::kTensorParallel) continue;
      ++n[fmt::format("{}{}", g.name(id), t.stream == compute_stream ? "" : " beside")];
    }
    return n;
  };
  // One micro-batch of 32 layers, two TP blocks each.
  const Shape sp{.gpus = 8, .tp = 8, .micro_batch = 8, .global_batch = 8, .sp = true};
  Shape sp_async = sp;
  sp_async.async_backward = true;
  std::map<std::string, int> blocking = count(sp), async = count(sp_async);
  EXPECT_EQ(blocking["tp.all_gather"], 4 * 32);  // forward 2, backward 2 (the scatters' mirror)
  EXPECT_EQ(blocking["tp.reduce_scatter"], 4 * 32);
  EXPECT_EQ(async["tp.all_gather"], 4 * 32);
  EXPECT_EQ(async["tp.all_gather beside"], 2 * 32);
  EXPECT_EQ(async["tp.reduce_scatter"], 2 * 32);
  EXPECT_EQ(async["tp.reduce_scatter beside"], 2 * 32);
  EXPECT_EQ(async["wgrad"], 2 * 32);
  const Shape plain{
      .gpus = 8, .tp = 8, .micro_batch = 8, .global_batch = 8, .async_backward = true};
  std::map<std::string, int> all_reduce = count(plain);
  EXPECT_EQ(all_reduce["tp.all_reduce"], 2 * 32);
  EXPECT_EQ(all_reduce["tp.all_reduce beside"], 2 * 32);
  // Under async TP (Transformer Engine's userbuffers) the same bulk collectives run beside the
  // column-parallel backward's GEMMs, holding SMs; the split gathers and scatters beside the other
  // GEMMs move on copy engines and hold none.
  Shape both = sp_async;
  both.async_tp = true;
  std::map<std::string, int> bulk = count(both);
  // Per layer: forward 2 split gathers and 2 split scatters; backward 2 split gathers at the
  // blocks' ends, 2 bulk gathers and 2 bulk scatters at their starts.
  EXPECT_EQ(bulk["tp.all_gather beside"], 6 * 32);
  EXPECT_EQ(bulk["tp.reduce_scatter beside"], 4 * 32);
  EXPECT_EQ(bulk["wgrad"], 2 * 32);
  const graph::ExecGraph g = build(scenario("llama3.1-8b", "dgx-h100", both));
  int holding = 0;
  for (graph::TaskId id = 0; id < g.size(); ++id)
    if (g.task(id).category == graph::Category::kTensorParallel && g.task(id).holds_sms) ++holding;
  EXPECT_EQ(holding, 2 * 2 * 32);
  // And the two engines price them alike (the estimate's tp_comm and the SMs held).
  both.host_time = false;
  for (const int sms : {0, 4}) {
    spec::Scenario s = scenario("llama3.1-8b", "dgx-h100", both);
    s.strategy.tp_backward_sms = sms;
    const double e = analytic::estimate(s).step_time_s;
    EXPECT_NEAR(simulated(s), e, 1e-3 * e) << sms;
  }
}

TEST(Build, NcclCollectivesHoldSmsThatSlowTheKernelsBesideThemWhileAsyncTpCopiesHoldNone) {
  const auto check = [](const graph::ExecGraph& g) {
    bool slowed = false;
    for (graph::TaskId id = 0; id < g.size(); ++id) {
      const graph::Task& t = g.task(id);
      if (t.kind == graph::TaskKind::kCompute && t.category == graph::Category::kCompute) {
        EXPECT_GE(t.beside_collective_slowdown, 1) << g.name(id);
        slowed = slowed || t.beside_collective_slowdown > 1;
      }
      // The backward's reduce-scatters at the blocks' starts, which async TP leaves unfused
      // (workload::tp_backward_overlapped), stay NCCL's.
      if (t.kind == graph::TaskKind::kCollective) {
        const bool nccl = t.category != graph::Category::kTensorParallel || t.stream == kComputeStream;
        EXPECT_EQ(t.holds_sms, nccl) << g.name(id);
      }
    }
    EXPECT_TRUE(slowed);
  };
  check(build(scenario("llama3.1-8b", "dgx-h100", {.gpus = 64, .tp = 8, .zero = 3, .global_batch = 64, .sp = true,
                                                   .async_tp = true})));
  // The same step without async TP: its blocking TP collectives are NCCL's too.
  const graph::ExecGraph g = build(scenario("llama3.1-8b", "dgx-h100", {.gpus = 8, .tp = 8}));
  for (graph::TaskId id = 0; id < g.size(); ++id) {
    if (g.task(id).kind == graph::TaskKind::kCollective) {
      EXPECT_TRUE(g.task(id).holds_sms) << g.name(id);
    }
  }
}

// Async TP hides an edge's backward collective behind the input-gradient GEMM's pieces only:
// the weight gradient needs the whole gathered output gradient, so it runs as a task of its own
// after the collective, in both engines. Llama's block starts (wq, wk, wv; w1, w3) sum their
// input gradients into an unfused reduce-scatter, so only the block ends' gathers are split.
TEST(Build, AsyncTpRunsEachEdgeCollectiveBesideTheInputGradientAndTheWeightGradientAfterIt) {
  Shape x{.gpus = 8, .tp = 8, .micro_batch = 2, .global_batch = 2, .seq = 8192, .sp = true, .async_tp = true};
  x.host_time = false;
  const spec::Scenario s = scenario("llama3.1-8b", "dgx-h100", x);
  const graph::ExecGraph g = build(s);
  int weight_gradients = 0;
  for (graph::TaskId id = 0; id < g.size(); ++id) {
    if (!g.name(id).ends_with(".wgrad")) continue;
    ++weight_gradients;
    const bool after_collective = std::ranges::any_of(g.predecessors(id), [&](graph::TaskId p) {
      return g.task(p).category == graph::Category::kTensorParallel;
    });
    EXPECT_TRUE(after_collective) << g.name(id);
  }
  EXPECT_EQ(weight_gradients, 2 * 32);  // output and down projections of 32 layers
  const double e = analytic::estimate(s).step_time_s;
  EXPECT_NEAR(simulated(s), e, 1e-3 * e);
}

TEST(Build,
     Fsdp2CopiesEachGatherOutOnTheComputeStreamAndEachLayersGradientsInBeforeItsReduceScatter) {
  const spec::Scenario s = scenario("llama3.1-8b", "dgx-h100",
                                    {.gpus = 8,
                                     .tp = 1,
                                     .zero = 3,
                                     .global_batch = 8,
                                     .sharded = spec::ShardedCollectives::kPerParameter});
  const graph::ExecGraph g = build(s);
  int copies_out = 0, copies_in = 0;
  for (graph::TaskId id = 0; id < g.size(); ++id) {
    const graph::Task& t = g.task(id);
    const auto preceded_by = [&](std::string_view name) {
      return std::ranges::any_of(g.predecessors(id), [&](graph::TaskId p) {
        return g.name(p) == name && g.task(p).layer == t.layer &&
               g.task(p).micro_batch == t.micro_batch;
      });
    };
    if (g.name(id) == "fsdp.copy_out") {
      ++copies_out;
      EXPECT_EQ(t.stream, kComputeStream);
      EXPECT_TRUE(preceded_by("fsdp.all_gather")) << t.layer;
    }
    if (g.name(id) == "fsdp.copy_in") {
      ++copies_in;
      EXPECT_EQ(t.stream, kGradientStream);
      EXPECT_FALSE(t.holds_sms);  // an ordinary kernel: neither NCCL's SMs nor the network
      EXPECT_EQ(t.link, graph::kNoLink);
    }
  }
  EXPECT_EQ(copies_out, 2 * s.model.layers);  // one micro-batch: forward and backward
  EXPECT_EQ(copies_in, s.model.layers);
  // Each reduce-scatter starts once its layer's gradients are copied in.
  const sim::Timeline timeline = sim::run(g);
  std::map<int, sim::Time> copied_in;
  for (graph::TaskId id = 0; id < g.size(); ++id) {
    if (g.name(id) == "fsdp.copy_in") copied_in[g.task(id).layer] = timeline.spans[id].end_ns;
  }
  for (graph::TaskId id = 0; id < g.size(); ++id) {
    if (g.name(id) == "fsdp.reduce_scatter") {
      EXPECT_GE(timeline.spans[id].start_ns, copied_in.at(g.task(id).layer)) << g.task(id).layer;
    }
  }
  // The copies out lengthen the step, less what more of each gather hides behind them: at least
  // half of them, at most them and the copies in.
  spec::Scenario fsdp1 = s;
  fsdp1.strategy.sharded_collectives = spec::ShardedCollectives::kPerLayer;
  const double copies = 2 * s.model.layers * fsdp_copy_out_s(s, false);
  const double longer = simulated(s) - simulated(fsdp1);
  EXPECT_GT(longer, 0.5 * copies);
  EXPECT_LT(longer, copies + s.model.layers * fsdp_copy_in_s(s, false));
  const double closed_form =
      analytic::estimate(s).step_time_s - analytic::estimate(fsdp1).step_time_s;
  // Stop 44: 13.6% apart (10% before), since each rank's cast and copy of its shard into the
  // gather's input joined the copies out; 16.1% with the root unit's copies (workload::
  // fsdp_root_unit) in both. Why the engines part on them is not yet known.
  EXPECT_NEAR(closed_form, longer, 0.17 * longer);
}

TEST(Build, TheRootUnitIsGatheredBeforeEachForwardAndWhereItReshardsBeforeEachBackwardInBothEngines) {
  // FSDP2 on one H100 with two micro-batches, as data/measurements/h100-steps ran it (PyTorch
  // 2.11, whose root reshards after forward): every collective moves nothing, the root unit's
  // copies are all that is left of it. FSDP1 and FSDP2 before PyTorch 2.8 keep the root gathered
  // from forward to backward: one copy out per micro-batch fewer.
  spec::Scenario s = scenario("llama3.1-8b", "dgx-h100",
                              {.gpus = 1, .tp = 1, .zero = 3, .global_batch = 2, .seq = 2048,
                               .sharded = spec::ShardedCollectives::kPerParameter,
                               .grad_dtype = spec::Dtype::kFp32, .host_time = false});
  for (const bool reshards : {true, false}) {
    s.strategy.fsdp_root_reshards = reshards;
    const graph::ExecGraph g = build(s);
    int gathers = 0, copies_out = 0, copies_in = 0;
    for (graph::TaskId id = 0; id < g.size(); ++id) {
      gathers += g.name(id) == "fsdp.root_all_gather";
      copies_out += g.name(id) == "fsdp.root_copy_out";
      copies_in += g.name(id) == "fsdp.root_copy_in";
      // With no reduce-scatter to feed, the layers' gradient copies run on the compute stream
      // too, as the traces have every FSDP kernel.
      if (g.name(id) == "fsdp.copy_in") {
        EXPECT_EQ(g.task(id).stream, kComputeStream);
      }
    }
    EXPECT_EQ(gathers, 0);  // a group of one gathers nothing
    EXPECT_EQ(copies_out, reshards ? 4 : 2);
    EXPECT_EQ(copies_in, 2);
    const double root = 2 * fsdp_root_unit(s).per_micro_batch();
    EXPECT_GT(root, 0.01 * analytic::estimate(s).step_time_s);
    EXPECT_NEAR(simulated(s), analytic::estimate(s).step_time_s, 0.01 * analytic::estimate(s).step_time_s);
  }
}

TEST(Build, MemoryBoundKernelsBesideCollectivesAreSlowedByTheHbmTheyTakeWhereNoSmsAreHeld) {
  // B200: no published channel count, so its collectives hold no SMs (data/gpus/b200.yaml), yet
  // they still read and write HBM: the norms slow beside them, the GEMMs do not.
  const graph::ExecGraph g = build(scenario("llama3.1-8b", "dgx-b200", {.gpus = 8, .tp = 1, .zero = 3, .global_batch = 8}));
  bool norm_slowed = false;
  for (graph::TaskId id = 0; id < g.size(); ++id) {
    const graph::Task& t = g.task(id);
    if (t.kind != graph::TaskKind::kCompute || t.category != graph::Category::kCompute) continue;
    const std::string name(g.name(id));
    if (name.starts_with("mlp_up.")) {
      EXPECT_EQ(t.beside_collective_slowdown, 1) << name;
    }
    if (name.starts_with("attention_norm.")) {
      EXPECT_GT(t.beside_collective_slowdown, 1) << name;
      EXPECT_EQ(t.beside_two_collectives_slowdown, t.beside_collective_slowdown) << name;
      norm_slowed = true;
    }
  }
  EXPECT_TRUE(norm_slowed);
}

TEST(Build, TheFullestStageSetsTheSteadyStateWhereTheEdgeStagesHoldFewerLayers) {
  // Llama 3.1 405B's 126 layers on 16 stages: 7 on the first and the last (beside the embedding
  // and the head), 8 on the others. The middle stages set the pace, not 126/16 layers plus the
  // head; with nothing overlapping both engines agree to 1.5%, under 1F1B and interleaved. (The
  // closed form charges a stage's pipeline transfers one after another; the simulation runs a send
  // beside the receive batched with it, each on its own direction of the full-duplex link.)
  for (const int vp : {1, 2}) {
    Shape x{.gpus = 128, .tp = 8, .pp = 16, .vp = vp, .global_batch = 32, .seq = 8192, .sp = true};
    x.schedule = vp > 1 ? spec::Schedule::kInterleaved : spec::Schedule::k1F1B;
    const spec::Scenario s = scenario("llama3.1-405b", "dgx-h100", x);
    const double e = analytic::estimate(s).step_time_s;
    EXPECT_NEAR(simulated(s), e, 0.015 * e) << "vp " << vp;
  }
}

TEST(Build, AsynchronousSendsHideTransfersOnlyUnderInterleaving) {
  // Llama 2 70B, one 8-GPU node per stage: each boundary transfer of 8K tokens (134 MB) crosses
  // RoCE in about 3 ms, less than a 5-layer chunk's forward. Under 1F1B the receiver has nothing
  // else to run while the data is in flight, so asynchronous sends change nothing; under
  // interleaving it runs another chunk, and the transfers leave the step. Both engines agree.
  // Blocking, the simulation exposes somewhat less than the closed form's serial transfers: it
  // runs a send beside the receive batched with it, each way on its own direction of the link.
  const auto shape = [](spec::Schedule schedule, spec::PipelineTransfers transfers) {
    Shape x{.gpus = 64, .tp = 8, .pp = 8, .global_batch = 16, .seq = 8192};
    x.vp = schedule == spec::Schedule::kInterleaved ? 2 : 1;
    x.schedule = schedule;
    x.transfers = transfers;
    return scenario("llama2-70b", "llama3-h100-roce", x);
  };
  using enum spec::PipelineTransfers;
  const spec::Scenario blocking_1f1b = shape(spec::Schedule::k1F1B, kHostSynchronised);
  const spec::Scenario async_1f1b = shape(spec::Schedule::k1F1B, kAsynchronous);
  EXPECT_NEAR(simulated(async_1f1b), simulated(blocking_1f1b), 0.002 * simulated(blocking_1f1b));
  EXPECT_DOUBLE_EQ(analytic::estimate(async_1f1b).step_time_s, analytic::estimate(blocking_1f1b).step_time_s);

  const spec::Scenario blocking = shape(spec::Schedule::kInterleaved, kHostSynchronised);
  const spec::Scenario async = shape(spec::Schedule::kInterleaved, kAsynchronous);
  const analytic::Estimate e = analytic::estimate(async);
  EXPECT_EQ(e.breakdown.pp_comm_s, 0);
  const double transfers = analytic::estimate(blocking).breakdown.pp_comm_s;
  ASSERT_GT(transfers, 0.01 * e.step_time_s);
  EXPECT_LT(simulated(async), simulated(blocking) - 0.4 * transfers);
  EXPECT_NEAR(simulated(async), e.step_time_s, 0.03 * e.step_time_s);
}

// A small layer on one GPU: its kernels run faster than an eager host launches them.
spec::Scenario launch_bound(double host_dispatch_s) {
  spec::Scenario s = scenario("llama3.1-8b", "dgx-h100", {.gpus = 1, .tp = 1, .global_batch = 4, .seq = 128});
  s.strategy.host_dispatch_s = host_dispatch_s;
  return spec::complete_and_validate(s);
}

TEST(Build, HostLaneLaunchesEveryKernelOfTheComputeStream) {
  const graph::ExecGraph g = build(launch_bound(42.4e-6));
  std::size_t host = 0, kernels = 0;
  for (graph::TaskId id = 0; id < g.size(); ++id) {
    const graph::Task& t = g.task(id);
    if (t.stream == kHostStream) {
      ++host;
      EXPECT_EQ(t.category, graph::Category::kHost);
    } else if (t.stream == kComputeStream && t.category != graph::Category::kOptimizer) {
      ++kernels;
    }
  }
  EXPECT_EQ(host, kernels);
  EXPECT_EQ(g.stream_name(kHostStream), "host");
  const graph::ExecGraph graphs = build(launch_bound(0));
  for (graph::TaskId id = 0; id < graphs.size(); ++id) EXPECT_NE(graphs.task(id).stream, kHostStream);
}

TEST(Build, LaunchBoundStepRunsAtTheHostsPaceInBothEngines) {
  // The host launches kernels one after another, so a step lasts at least its launch time; with
  // CUDA graphs (no dispatch) the same step is faster and spends nothing waiting for the host.
  const spec::Scenario eager = launch_bound(42.4e-6), graphs = launch_bound(0);
  const graph::ExecGraph g = build(eager);
  double launch_s = 0;
  for (graph::TaskId id = 0; id < g.size(); ++id) {
    if (g.task(id).stream == kHostStream) launch_s += g.task(id).duration_ns * 1e-9;
  }
  const analysis::Simulation sim = analysis::simulate(eager);
  EXPECT_GE(sim.metrics.step_time_s, launch_s);
  EXPECT_GT(sim.metrics.breakdown.host_s, 0);
  EXPECT_LT(simulated(graphs), sim.metrics.step_time_s);
  const analytic::Estimate e = analytic::estimate(eager);
  EXPECT_GT(e.breakdown.host_s, 0);
  EXPECT_EQ(analytic::estimate(graphs).breakdown.host_s, 0);
  EXPECT_NEAR(e.step_time_s, sim.metrics.step_time_s, 0.25 * sim.metrics.step_time_s);
}

TEST(Build, HostWaitsForTheGpuBeforeLoadingEachMicroBatch) {
  // Loading a micro-batch synchronises the host with the GPU (Megatron's broadcast_data copies
  // the sizes back with .cpu()), so the host cannot launch micro-batch k before k - 1 has run.
  const graph::ExecGraph g = build(launch_bound(42.4e-6));
  const sim::Timeline t = sim::run(g);
  std::vector<sim::Time> gpu_end(4, 0), first_launch(4, -1);
  for (graph::TaskId id = 0; id < g.size(); ++id) {
    const graph::Task& task = g.task(id);
    if (task.micro_batch < 0) continue;
    const auto mb = static_cast<std::size_t>(task.micro_batch);
    if (task.stream == kComputeStream) gpu_end[mb] = std::max(gpu_end[mb], t.spans[id].end_ns);
    if (task.stream == kHostStream && first_launch[mb] < 0) first_launch[mb] = t.spans[id].start_ns;
  }
  for (std::size_t mb = 1; mb < 4; ++mb) EXPECT_GE(first_launch[mb], gpu_end[mb - 1]) << mb;
}

// The host's launch time and the compute stream's busy time of one simulated step, and its length.
struct HostAndGpu {
  double host_s = 0, gpu_s = 0, step_s = 0;
};
HostAndGpu host_and_gpu(bool launch_blocking) {
  spec::Scenario s =
      scenario("llama3.1-8b", "dgx-h100", {.gpus = 1, .tp = 1, .global_batch = 4, .seq = 1024});
  s.strategy.launch_blocking = launch_blocking;
  const graph::ExecGraph g = build(spec::complete_and_validate(s));
  const sim::Timeline t = sim::run(g);
  HostAndGpu r;
  for (graph::TaskId id = 0; id < g.size(); ++id) {
    const double seconds = static_cast<double>(t.spans[id].end_ns - t.spans[id].start_ns) * 1e-9;
    (g.task(id).stream == kHostStream ? r.host_s : r.gpu_s) += seconds;
  }
  r.step_s = static_cast<double>(t.makespan_ns) * 1e-9;
  return r;
}

TEST(Build, BlockingLaunchesMakeHostAndGpuTakeTurns) {
  // CUDA_LAUNCH_BLOCKING=1: each launch returns once its kernel has run, so the step is the sum
  // of both; an eager host overlaps its launches with the kernels before them.
  const HostAndGpu blocking = host_and_gpu(true), eager = host_and_gpu(false);
  EXPECT_NEAR(blocking.step_s, blocking.host_s + blocking.gpu_s, 1e-6);
  EXPECT_LT(eager.step_s, 0.8 * (eager.host_s + eager.gpu_s));
  EXPECT_DOUBLE_EQ(blocking.host_s, eager.host_s);
}

TEST(Build, SimulationAgreesWithEstimateWhenLaunchesBlock) {
  spec::Scenario s =
      scenario("llama3.1-8b", "dgx-h100", {.gpus = 1, .tp = 1, .global_batch = 4, .seq = 1024});
  s.strategy.launch_blocking = true;
  s = spec::complete_and_validate(s);
  EXPECT_NEAR(simulated(s), analytic::estimate(s).step_time_s, 0.03 * simulated(s));
}

TEST(Build, DataParallelBucketsHideOnlyBehindTheLayersBackwardInBothEngines) {
  // Engine comparison, stop 51: a GPT of 12 layers of 1,024 and a 51,200-token vocabulary on 32
  // B200 under ZeRO-2. The closed form hid the buckets behind the output head's backward too,
  // which runs before any layer's gradient is complete, and took the embedding's bucket, launched
  // last, for a layer's (-18.7% against the simulation).
  spec::Scenario s = scenario("megatron-gpt-1.7b", "dgx-b200",
                              {.gpus = 32, .tp = 1, .zero = 2, .global_batch = 32, .seq = 2048, .host_time = false});
  s.model.layers = 12;
  s.model.hidden = 1024;
  s.model.ffn = 4096;
  s.model.heads = s.model.kv_heads = 16;
  s = spec::complete_and_validate(s);
  // 2026-11-28 (stop 53): 3.1% slow, from 2.7%, since the closed form queues a pass's buckets one
  // a layer and exposes the last whole after the backward, as the simulation runs it; the rest of
  // the gap is the exposed TP all-reduces, which the closed form still lets the buckets share over
  // the whole pass.
  ASSERT_GT(analytic::estimate(s).breakdown.dp_comm_s, 0);
  EXPECT_NEAR(analytic::estimate(s).step_time_s, simulated(s), 0.035 * simulated(s));
}

TEST(Build, GradientBucketsDoneBeforeTheAttentionLeaveTheCpRingItsLinksInBothEngines) {
  // Engine comparison, 2026-11-28: Llama 3.1 8B on 32 GB200 of one NVLink domain (TP 4, PP 2, CP
  // 2 ring, ZeRO-1). A layer's bucket starts as its backward ends and is done within the next
  // layer's MLP backward, before that layer's attention and the ring beside it; the closed form
  // had them share the links over the whole pass (+4.4% against the simulation).
  const spec::Scenario s = scenario("llama3.1-8b", "gb200-nvl72",
                                    {.gpus = 32, .tp = 4, .pp = 2, .cp = 2, .zero = 1, .global_batch = 4,
                                     .transfers = spec::PipelineTransfers::kAsynchronous, .host_time = false});
  // 2026-11-28 (stop 53): 3.1% slow, from 2.7%, since the closed form queues a pass's buckets one
  // a layer and exposes the last whole after the backward, as the simulation runs it; the rest of
  // the gap is the exposed TP all-reduces, which the closed form still lets the buckets share over
  // the whole pass.
  ASSERT_GT(analytic::estimate(s).breakdown.dp_comm_s, 0);
  EXPECT_NEAR(analytic::estimate(s).step_time_s, simulated(s), 0.035 * simulated(s));
}

TEST(Build, BlockingLaunchesExposeEveryDataParallelCollectiveInBothEngines) {
  // Engine comparison, stop 51: under CUDA_LAUNCH_BLOCKING=1 the host waits for each gradient
  // bucket and each ZeRO-1/2 parameter gather it starts. The closed form hid them behind the
  // passes as without blocking (ZeRO-1 on 16 H200: 0.387 s against 0.460 s simulated), and the
  // simulation prefetched the gathers from the step's start (0.460 s against 0.494 s).
  for (int zero : {0, 1, 2}) {
    spec::Scenario s =
        scenario("llama3.1-8b", "dgx-h200", {.gpus = 16, .tp = 1, .zero = zero, .global_batch = 16});
    s.strategy.launch_blocking = true;
    s = spec::complete_and_validate(s);
    spec::Scenario after = s;
    after.strategy.overlap_dp_comm = false;
    EXPECT_NEAR(analytic::estimate(s).step_time_s, simulated(s), 0.03 * simulated(s)) << "zero " << zero;
    // As slow as reducing and gathering after the step, give or take the buckets' fixed costs.
    EXPECT_NEAR(simulated(s), simulated(after), 0.03 * simulated(after)) << "zero " << zero;
  }
  // With no host time (CUDA graphs) no launch waits, in either engine, pipelined or not: the
  // simulation had started each ZeRO-1/2 gather in turn with the kernels all the same, 30-40%
  // slower than the closed form on 4-8 stages (regression check, stop 51).
  for (int pp : {1, 4}) {
    spec::Scenario s = scenario("llama3.1-8b", "dgx-h200",
                                {.gpus = 16, .tp = 1, .pp = pp, .zero = 1, .global_batch = 16, .host_time = false});
    const double estimate = analytic::estimate(s).step_time_s, simulation = simulated(s);
    s.strategy.launch_blocking = true;
    s = spec::complete_and_validate(s);
    EXPECT_DOUBLE_EQ(analytic::estimate(s).step_time_s, estimate) << "pp " << pp;
    EXPECT_DOUBLE_EQ(simulated(s), simulation) << "pp " << pp;
  }
}

TEST(Build, SimulationAgreesWithEstimateWhereLaunchesHideInZero3Waits) {
  // Engine comparison, stop 51: GPT 3.6B on 64 H200 under ZeRO-3, launch-bound at micro-batch 1.
  // The host launches on while the compute stream waits for a gather, so its time hides in the
  // wait; the closed form added it on top (0.804 s against the simulation's 0.571 s, +41%).
  const spec::Scenario s =
      scenario("megatron-gpt-3.6b", "dgx-h200", {.gpus = 64, .tp = 8, .zero = 3, .global_batch = 64, .seq = 2048});
  ASSERT_GT(analytic::estimate(s).breakdown.fsdp_comm_s, 0);
  EXPECT_NEAR(analytic::estimate(s).step_time_s, simulated(s), 0.03 * simulated(s));
}

// Per micro-batch: whether the host launched the backward's first kernel only after the GPU had
// run the forward's last.
std::vector<bool> backward_launches_wait_for_the_forward(bool host_reads_loss) {
  spec::Scenario s = launch_bound(42.4e-6);
  s.strategy.host_reads_loss = host_reads_loss;
  const graph::ExecGraph g = build(s);
  const sim::Timeline t = sim::run(g);
  std::vector<sim::Time> forward_end(4, 0), backward_launch(4, -1);
  for (graph::TaskId id = 0; id < g.size(); ++id) {
    const graph::Task& task = g.task(id);
    if (task.stream != kComputeStream || task.micro_batch < 0) continue;
    const auto mb = static_cast<std::size_t>(task.micro_batch);
    if (g.name(id).ends_with(".fwd"))
      forward_end[mb] = std::max(forward_end[mb], t.spans[id].end_ns);
    if (g.name(id).ends_with(".bwd") && backward_launch[mb] < 0) {
      const graph::TaskId launch = id + 1;  // a kernel's launch is added right after it
      EXPECT_EQ(g.task(launch).stream, kHostStream);
      backward_launch[mb] = t.spans[launch].start_ns;
    }
  }
  std::vector<bool> waited;
  for (std::size_t mb = 0; mb < 4; ++mb) waited.push_back(backward_launch[mb] >= forward_end[mb]);
  return waited;
}

TEST(Build, HostThatReadsTheLossLaunchesNoBackwardBeforeTheForwardHasRun) {
  // DeepSpeed's engine.backward() of 2023 called loss.mean().item(), which waits for the GPU; an
  // eager host that does not read the loss launches the backward while the forward still runs.
  for (bool waited : backward_launches_wait_for_the_forward(true)) EXPECT_TRUE(waited);
  for (bool waited : backward_launches_wait_for_the_forward(false)) EXPECT_FALSE(waited);
}

// Host launches that follow a pipeline receive in program order, and whether each started only
// after that receive ended, for the forward's receives and for the backward's.
struct LaunchesAfterReceives {
  std::vector<bool> forward, backward;
};
LaunchesAfterReceives launches_after_receives_wait(spec::PipelineTransfers transfers,
                                                   bool deepspeed_schedule = false) {
  spec::Scenario s = scenario("llama3.1-8b", "dgx-h100", {.gpus = 2, .tp = 1, .pp = 2, .global_batch = 4, .seq = 128});
  s.strategy.pipeline_transfers = transfers;
  s.strategy.deferred_sends = deepspeed_schedule;
  const graph::ExecGraph g = build(spec::complete_and_validate(s));
  const sim::Timeline t = sim::run(g);
  LaunchesAfterReceives waited;
  std::vector<graph::TaskId> open(2, 0xffffffffu);
  for (graph::TaskId id = 0; id < g.size(); ++id) {
    const graph::Task& task = g.task(id);
    if (task.kind == graph::TaskKind::kRecv) open[task.rank] = id;
    if (task.stream == kHostStream && open[task.rank] != 0xffffffffu) {
      const graph::TaskId recv = open[task.rank];
      (g.name(recv) == "pp.recv" ? waited.forward : waited.backward)
          .push_back(t.spans[id].start_ns >= t.spans[recv].end_ns);
      open[task.rank] = 0xffffffffu;
    }
  }
  return waited;
}

TEST(Build, PipelineSendsLeaveThroughTheirPortAndReceivesArriveThroughIt) {
  // Links are full duplex (graph::link): a stage sending forward while it receives from behind
  // uses the two directions of its port, and a gradient bucket's ring uses both.
  spec::Scenario s = scenario("llama3.1-8b", "dgx-h100",
                              {.gpus = 4, .tp = 1, .pp = 2, .global_batch = 8, .seq = 128});
  const graph::ExecGraph g = build(spec::complete_and_validate(s));
  std::set<graph::TaskKind> seen;
  for (graph::TaskId id = 0; id < g.size(); ++id) {
    const graph::Task& t = g.task(id);
    if (t.link == graph::kNoLink) continue;
    seen.insert(t.kind);
    const auto direction = static_cast<graph::LinkDirection>(t.link & 3u);
    const graph::LinkDirection expected =
        t.kind == graph::TaskKind::kSend   ? graph::LinkDirection::kOutbound
        : t.kind == graph::TaskKind::kRecv ? graph::LinkDirection::kInbound
                                           : graph::LinkDirection::kBoth;
    EXPECT_EQ(direction, expected) << g.name(id);
  }
  EXPECT_EQ(seen, (std::set<graph::TaskKind>{graph::TaskKind::kCollective, graph::TaskKind::kSend,
                                             graph::TaskKind::kRecv}));
}

TEST(Build, UnderScatterGatherEveryReceiveIsGatheredOverTheTensorParallelGroupBeforeItIsUsed) {
  Shape x{.gpus = 16, .tp = 8, .pp = 2, .global_batch = 4, .seq = 1024};
  spec::Scenario s = scenario("llama3.1-8b", "dgx-h100", x);
  s.strategy.pp_scatter_gather = true;
  const graph::ExecGraph g = build(s);
  std::size_t receives = 0, gathers = 0;
  for (graph::TaskId id = 0; id < g.size(); ++id) {
    const graph::Task& t = g.task(id);
    if (t.kind == graph::TaskKind::kRecv) ++receives;
    if (g.name(id) != "pp.gather") continue;
    ++gathers;
    EXPECT_EQ(t.stream, kComputeStream);
    EXPECT_GT(t.duration_ns, 0);
    const auto& before = g.predecessors(id);
    EXPECT_TRUE(std::any_of(before.begin(), before.end(), [&](graph::TaskId p) {
      return g.task(p).kind == graph::TaskKind::kRecv;
    }));
  }
  EXPECT_GT(receives, 0u);
  EXPECT_EQ(gathers, receives);
}

TEST(Build, MegatronsHostWaitsForEveryPipelineReceive) {
  // Megatron calls torch.cuda.synchronize() after each batch_isend_irecv; PyTorch's pipelining
  // library does not, and its host launches ahead of the data.
  const LaunchesAfterReceives megatron =
      launches_after_receives_wait(spec::PipelineTransfers::kHostSynchronised);
  ASSERT_FALSE(megatron.forward.empty());
  ASSERT_FALSE(megatron.backward.empty());
  for (bool waited : megatron.forward) EXPECT_TRUE(waited);
  for (bool waited : megatron.backward) EXPECT_TRUE(waited);
  const LaunchesAfterReceives pipelining =
      launches_after_receives_wait(spec::PipelineTransfers::kStreamOrdered);
  EXPECT_NE(std::count(pipelining.forward.begin(), pipelining.forward.end(), false), 0);
}

TEST(Build, DeepSpeedsLastStageWaitsAtItsDataLoadForTheInputButLaunchesBackwardsAhead) {
  // DeepSpeed's pipeline engine posts a stage's input receive (torch.distributed's recv, whose
  // wait() makes the stream wait) before the last stage loads its labels through Megatron's
  // broadcast_data, whose .cpu() synchronises that stream, the input included. Nothing of the
  // kind precedes a backward on a stage without the loss. (Its throughput timer does not
  // synchronise: that waits for steps the pipeline engine never counts.)
  const LaunchesAfterReceives deepspeed =
      launches_after_receives_wait(spec::PipelineTransfers::kStreamOrdered, true);
  ASSERT_FALSE(deepspeed.forward.empty());
  for (bool waited : deepspeed.forward) EXPECT_TRUE(waited);
  EXPECT_NE(std::count(deepspeed.backward.begin(), deepspeed.backward.end(), false), 0);
}

TEST(Build, LargeKernelsHideTheHost) {
  // Llama 3.1 8B at 8k tokens per micro-batch: every pass is GPU-bound, so host dispatch costs
  // nothing in the closed form.
  const spec::Scenario s = scenario("llama3.1-8b", "dgx-h100", {.gpus = 8, .tp = 1, .global_batch = 8, .seq = 8192});
  EXPECT_EQ(analytic::estimate(s).breakdown.host_s, 0);
}

TEST(Build, ZeroBubbleIsFasterThanOneFOneB) {
  Shape x{.gpus = 32, .tp = 8, .pp = 4, .global_batch = 16};
  const double one_f_one_b = simulated(scenario("llama2-70b", "dgx-h100", x));
  x.schedule = spec::Schedule::kZeroBubbleH1;
  EXPECT_LT(simulated(scenario("llama2-70b", "dgx-h100", x)), 0.97 * one_f_one_b);
}

TEST(Build, GradientBucketsSlowEveryStagesLastBackwardAlongTheDrainInBothEngines) {
  // Each stage's last backward runs beside its own gradient buckets and hands its input gradient
  // to the stage before only when it ends, so the slowdowns add up along the drain. The closed
  // form, which counted the slowest stage's alone, was 2.4% faster than the simulation on the
  // dense model and 9.2% on the MoE one (whose expert all-to-alls share the buckets' links).
  const spec::Scenario dense =
      scenario("llama3.1-70b", "dgx-h100", {.gpus = 128, .tp = 8, .pp = 4, .global_batch = 32});
  spec::Scenario moe =
      scenario("mixtral-8x7b", "h100-96g-500w-roce",
               {.gpus = 64, .tp = 4, .pp = 4, .global_batch = 16, .seq = 2048, .sp = true});
  moe.strategy.ep = 4;
  moe.strategy.host_dispatch_s = 0;
  moe = spec::complete_and_validate(moe);
  for (const spec::Scenario& s : {dense, moe}) {
    const double e = analytic::estimate(s).step_time_s;
    EXPECT_NEAR(simulated(s), e, 0.03 * e) << spec::dump(s);
  }
}

TEST(Build, UnderInterleavingTheGradientBucketsSlowEveryStageAlongTheDrainInBothEngines) {
  // With interleaving too the drain is a chain: each stage runs its last backward passes beside
  // the gradient buckets of the chunks it has finished before it hands the gradients on. The
  // closed form, which chained the stretch only without interleaving, was 2.0% (vp 2) and 2.0%
  // (vp 4) faster than the simulation here, with data parallelism inside the nodes (24-SM NVLink
  // rings); 0.4% and 0.8% slower with the stretch chained.
  for (int vp : {2, 4}) {
    const spec::Scenario s = scenario("llama3.1-70b", "dgx-h100",
                                      {.gpus = 32, .tp = 2, .pp = 4, .vp = vp, .zero = 1, .global_batch = 16,
                                       .transfers = spec::PipelineTransfers::kAsynchronous, .host_time = false});
    const double e = analytic::estimate(s).step_time_s;
    EXPECT_NEAR(simulated(s), e, 0.015 * e) << "vp " << vp;
  }
}

TEST(Build, InterleavedPipelinesWithLighterEndStagesEndByTheFullestStagesWayInBothEngines) {
  // Llama 3.1 405B's 126 layers on 16 stages: 7 on the first and the last, 8 on the others. A
  // stage's warm-up keeps it busy until its first backward comes back, so the step ends by the
  // fullest middle stage's way, the first chunks of the stages before it and back, not by every
  // other stage's time. Charging the latter, the closed form was 1.9% (vp 2) and 1.6% (vp 4)
  // slower than the simulation.
  for (int vp : {2, 4}) {
    const spec::Scenario s = scenario("llama3.1-405b", "dgx-h100",
                                      {.gpus = 128, .tp = 8, .pp = 16, .vp = vp, .sp = true,
                                       .transfers = spec::PipelineTransfers::kAsynchronous, .host_time = false});
    const double e = analytic::estimate(s).step_time_s;
    EXPECT_NEAR(simulated(s), e, 0.005 * e) << "vp " << vp;
  }
}

TEST(Build, InterleavedFullestStageWaitsForItsFirstBackwardsRoundTripInBothEngines) {
  // Llama 3.1 405B's 126 layers on 16 stages, vp 2, 16 micro-batches: the last stage's last chunk
  // holds 3 layers and the head. After its last chunk's first forward, stage 14 runs 2 more
  // forwards (Megatron's warm-up of 2 (pp - k - 1) + (vp - 1) pp, then one before each backward)
  // while that micro-batch crosses stage 15 and back (3 layers, the head, a hop): 29 ms more than
  // its forwards. Without that wait the closed form was 0.39% faster than the simulation.
  const spec::Scenario s = scenario("llama3.1-405b", "dgx-h100",
                                    {.gpus = 128, .tp = 8, .pp = 16, .vp = 2, .global_batch = 16, .seq = 8192,
                                     .schedule = spec::Schedule::kInterleaved, .sp = true,
                                     .transfers = spec::PipelineTransfers::kAsynchronous, .host_time = false});
  const double e = analytic::estimate(s).step_time_s;
  EXPECT_NEAR(simulated(s), e, 0.0005 * e);
}

TEST(Build, EmbeddingLaunchHidesBehindTheRootUnitsCopiesInBothEngines) {
  // FSDP2 on one GPU (torchtitan-like): the root unit's cast and copy out run before the
  // embedding, and the host launches the embedding meanwhile (Kineto trace of
  // data/measurements/h100-steps/llama8b-4l-eager: the gather kernel starts 1.3 us after the
  // root's last copy). The closed form had charged the embedding's launch beyond its own kernel.
  spec::Scenario s = scenario("llama3.1-8b", "dgx-h200",
                              {.gpus = 1, .tp = 1, .zero = 3, .micro_batch = 2, .global_batch = 2,
                               .sharded = spec::ShardedCollectives::kPerParameter});
  const analytic::Estimate e = analytic::estimate(s);
  EXPECT_EQ(e.breakdown.host_s, 0);
  EXPECT_NEAR(simulated(s), e.step_time_s, 1e-6 * e.step_time_s);
}

TEST(Build, ZeroThreeGathersRunInThePipelinesWaitsInBothEngines) {
  // Llama 3.1 8B at TP 8 on 4 stages of B200 nodes: each layer's gather outlasts its kernels.
  // In the fill and the drain a stage gathers its first two layers while it waits; charging the
  // fill and drain passes their whole exposure, the closed form was 5.3% slower than the
  // simulation with 4 micro-batches.
  const spec::Scenario s = scenario("llama3.1-8b", "dgx-b200",
                                    {.gpus = 64, .tp = 8, .pp = 4, .zero = 3, .global_batch = 8, .seq = 2048,
                                     .transfers = spec::PipelineTransfers::kAsynchronous, .host_time = false});
  const double e = analytic::estimate(s).step_time_s;
  EXPECT_NEAR(simulated(s), e, 0.015 * e);
}

TEST(Build, GradientBucketsRunInTheWaitsBetweenInterleavedRoundsInBothEngines) {
  // Qwen3 32B at TP 2 on 2 interleaved stages of B200 nodes, one micro-batch: each stage waits a
  // whole chunk of the other stage between its own rounds, and its finished chunk's gradient
  // buckets (and, in the forward, the next chunk's parameter gathers) run meanwhile. Counting
  // only the stage's own passes as their window, the closed form was 13.8% slower than the
  // simulation.
  const spec::Scenario s = scenario("qwen3-32b", "dgx-b200",
                                    {.gpus = 64, .tp = 2, .pp = 2, .vp = 2, .zero = 1, .global_batch = 16,
                                     .seq = 2048, .schedule = spec::Schedule::kInterleaved, .host_time = false});
  const double e = analytic::estimate(s).step_time_s;
  EXPECT_NEAR(simulated(s), e, 0.03 * e);
}

TEST(Build, CpRingSharesTheGradientGroupsLinksWithItsCollectivesInBothEngines) {
  // Transformer Engine's ring attention posts its K/V sends and receives on the CP group
  // (flash_attn_p2p_communicate) beside the attention, while the gradient group's collectives run
  // on the same links: FSDP's gathers where CP and FSDP share a node's NVLink (Llama 3.1 70B at
  // CP 4 on B200), Megatron's ZeRO-2 parameter gathers and gradient buckets where CP and DP both
  // cross the NICs (Qwen3 32B at TP 8, CP 2 on H100 nodes). Pricing the ring as if it had its
  // links alone, the closed form was 5.1% and 6.9% faster than the simulation.
  const spec::Scenario fsdp = scenario("llama3.1-70b", "dgx-b200",
                                       {.gpus = 16, .tp = 1, .pp = 4, .cp = 4, .zero = 3, .global_batch = 4,
                                        .transfers = spec::PipelineTransfers::kAsynchronous, .host_time = false});
  const spec::Scenario zero2 =
      scenario("qwen3-32b", "dgx-h100",
               {.gpus = 128, .tp = 8, .pp = 2, .vp = 2, .cp = 2, .zero = 2, .micro_batch = 2, .global_batch = 16,
                .schedule = spec::Schedule::kInterleaved, .sp = true,
                .transfers = spec::PipelineTransfers::kAsynchronous, .host_time = false});
  for (const spec::Scenario& s : {fsdp, zero2}) {
    const double e = analytic::estimate(s).step_time_s;
    EXPECT_NEAR(simulated(s), e, 0.015 * e) << spec::dump(s);
  }
}

TEST(Build, EachChunksFirstForwardGatherWaitsForItsInputAndTheComputeStreamWhileBackwardOnesPrefetch) {
  // FSDP's root pre-forward (FSDPState._root_pre_forward; FSDP1's _wait_for_computation_stream)
  // makes the all-gather streams wait for the compute stream at each chunk's forward, which
  // pipelining starts after waiting for its input; its pre-backward has no such wait.
  for (const spec::ShardedCollectives sharded :
       {spec::ShardedCollectives::kPerLayer, spec::ShardedCollectives::kPerParameter}) {
    const spec::Scenario s = scenario(
        "llama3.1-8b", "dgx-b200",
        {.gpus = 64, .tp = 8, .pp = 4, .vp = 2, .zero = 3, .global_batch = 8, .seq = 2048,
         .schedule = spec::Schedule::kInterleaved, .sharded = sharded,
         .transfers = spec::PipelineTransfers::kAsynchronous, .host_time = false});
    const graph::ExecGraph g = build(s);
    const ChunkLayout layout(s.model.layers, 8);
    std::set<int> first_layers, last_layers;
    for (int j = 1; j < 8; ++j) {
      first_layers.insert(layout.layers_before(j));
      last_layers.insert(layout.layers_before(j) + layout.chunk(j) - 1);
    }
    std::set<std::pair<int, int>> seen;  // (layer, micro-batch): the forward's gather comes first
    int anchored = 0, prefetched = 0;
    for (graph::TaskId id = 0; id < g.size(); ++id) {
      if (g.name(id) != "fsdp.all_gather") continue;
      const graph::Task& t = g.task(id);
      const bool forward = seen.insert({t.layer, t.micro_batch}).second;
      const auto after = [&](std::string_view name, bool same_micro_batch) {
        return std::ranges::any_of(g.predecessors(id), [&](graph::TaskId p) {
          return g.name(p) == name && (!same_micro_batch || g.task(p).micro_batch == t.micro_batch);
        });
      };
      const bool after_compute = std::ranges::any_of(g.predecessors(id), [&](graph::TaskId p) {
        return g.task(p).stream == kComputeStream;
      });
      if (forward && first_layers.contains(t.layer)) {
        ++anchored;
        EXPECT_TRUE(after("pp.recv", true)) << t.layer << " " << t.micro_batch;
        // (but for a stage's first pass, which nothing runs before)
        if (t.micro_batch > 0 || t.layer >= layout.layers_before(4)) {
          EXPECT_TRUE(after_compute) << t.layer << " " << t.micro_batch;
        }
      }
      if (!forward && last_layers.contains(t.layer)) {
        ++prefetched;
        EXPECT_FALSE(after("pp.recv_grad", false)) << t.layer << " " << t.micro_batch;
      }
    }
    EXPECT_EQ(anchored, 7 * s.strategy.micro_batches());
    EXPECT_EQ(prefetched, 7 * s.strategy.micro_batches());
  }
}

TEST(Build, DrainTransfersShareTheNicsWithTheZeroThreeGathersOfTheWaitsInBothEngines) {
  // Llama 3.1 8B at TP 8 on 4 interleaved stages of B200 nodes, ZeRO-3 with 2 replicas: each
  // pipeline transfer crosses the NICs that carry the gathers a stage starts while it waits for
  // its next chunk's input; a gradient's with those of the backward its sender runs next, an
  // activation's before the gather of its receiver's first layer, which waits for it. Giving the
  // transfers their link alone, the closed form was 6.4% faster than the simulation with 4
  // micro-batches of 2K tokens, then 0.6%. Since each chunk's first forward gather waits for its
  // input (2026-11-28) that gather starts beside the send its stage has just posted, as the next
  // micro-batch's forward follows it at once: the closed form, which shared no activation's
  // transfer with a gather, was 5.3% faster than the simulation, then (sharing it on the sender's
  // side) 0.6% slower.
  const spec::Scenario s = scenario("llama3.1-8b", "dgx-b200",
                                    {.gpus = 64, .tp = 8, .pp = 4, .vp = 2, .zero = 3, .global_batch = 8,
                                     .seq = 2048, .schedule = spec::Schedule::kInterleaved,
                                     .transfers = spec::PipelineTransfers::kAsynchronous, .host_time = false});
  const double e = analytic::estimate(s).step_time_s;
  EXPECT_NEAR(simulated(s), e, 0.02 * e);
}

TEST(Build, EachStageIsPricedWithItsOwnDenseAndMoeLayersInBothEngines) {
  // DeepSeek-V3's three dense layers all sit on the first of 4 stages, so the others hold MoE
  // layers only and set the pipeline's pace. Priced with the model's average layer on every
  // stage, the closed form was 2.1% faster than the simulation here.
  Shape x{.gpus = 32, .tp = 1, .pp = 4, .global_batch = 256};
  spec::Scenario s = scenario("deepseek-v3", "h100-96g-500w-roce", x);
  s.strategy.host_dispatch_s = 0;
  s.strategy.overlap_dp_comm = false;
  s = spec::complete_and_validate(s);
  const double e = analytic::estimate(s).step_time_s;
  EXPECT_NEAR(simulated(s), e, 0.01 * e);
}

TEST(Build, UnderZero3EachLayerGathersItsOwnKindOfParametersInBothEngines) {
  // A MoE layer's experts make its gathers and scatters many times a dense layer's; each runs
  // beside the kernels of its neighbour, the layer before or after it. Llama 4 Maverick
  // alternates dense and MoE layers, DeepSeek-V3 leads with three dense ones. The engines came
  // within 2.0% and 1.2% of each other when this was written (the closed form the slower; with
  // the model's average layer gathered everywhere, 1.2% and 1.6%).
  struct Case {
    const char* model;
    const char* cluster;
    Shape shape;
    int ep;
  };
  const Case cases[] = {
      {"llama4-maverick", "dgx-h100", {.gpus = 128, .tp = 8, .pp = 2, .zero = 3, .global_batch = 64}, 8},
      {"deepseek-v3", "h100-96g-500w-roce", {.gpus = 32, .tp = 1, .pp = 4, .zero = 3, .global_batch = 256}, 1},
  };
  for (const Case& c : cases) {
    spec::Scenario s = scenario(c.model, c.cluster, c.shape);
    s.strategy.ep = c.ep;
    s.strategy.host_dispatch_s = 0;
    s = spec::complete_and_validate(s);
    const double e = analytic::estimate(s).step_time_s;
    EXPECT_NEAR(simulated(s), e, 0.025 * e) << c.model;
    EXPECT_GT(workload::sharded_layer(s, true).gather, 2 * workload::sharded_layer(s, false).gather) << c.model;
  }
}

TEST(Build, RecomputedOpsOpeningAZeroThreeBackwardSlowByTheirOwnSharesInBothEngines) {
  // Llama 3.1 8B on 64 A100 under FSDP2 with op-level recomputation and eager elementwise ops, as
  // torchtitan ran it: each backward recomputes first, beside the gather it prefetches and the
  // reduce-scatter of the layer before. Slowed by the whole pass's average share, the closed
  // form's ZeRO-3 time was 7.4% above the simulation's (the recomputed norms, RoPE and GEMMs give
  // up less of the GPU than the backward's GEMMs); 0.7% below it when this was written.
  const Shape x{.gpus = 64, .tp = 1, .zero = 3, .global_batch = 64, .seq = 8192, .recompute = spec::Recompute::kOp,
                .sharded = spec::ShardedCollectives::kPerParameter, .grad_dtype = spec::Dtype::kFp32,
                .host_time = false};
  spec::Scenario s = scenario("llama3.1-8b", "dgx-a100-80g", x);
  s.strategy.elementwise = spec::Elementwise::kEager;
  s = spec::complete_and_validate(s);
  const analytic::Estimate e = analytic::estimate(s), sim = analysis::simulate_metrics(s);
  EXPECT_NEAR(e.breakdown.fsdp_comm_s, sim.breakdown.fsdp_comm_s, 0.02 * sim.breakdown.fsdp_comm_s);
  EXPECT_NEAR(e.step_time_s, sim.step_time_s, 0.002 * sim.step_time_s);
}

TEST(Build, TheOptimizerWaitsForZeroThreesLastReduceScatter) {
  // GPT-3 175B on 2 GB200 under ZeRO-3 with FP32 gradients: the backward is bound by its
  // collectives, and the reduce-scatters queue on their stream behind it. The optimizer step
  // updates the shards they deliver; it started 0.31 s before the last of them ended, and the
  // simulation came out 16% faster than the closed form, which waits for them.
  Shape x{.gpus = 2, .tp = 1, .zero = 3, .global_batch = 2, .seq = 1024, .grad_dtype = spec::Dtype::kFp32,
          .host_time = false};
  const spec::Scenario s = scenario("gpt3-175b", "gb200-nvl72", x);
  const analysis::Simulation sim = analysis::simulate(s);
  sim::Time last_scatter_end = 0, optimizer_start = -1;
  for (graph::TaskId id = 0; id < sim.graph.size(); ++id) {
    if (sim.graph.name(id) == "fsdp.reduce_scatter")
      last_scatter_end = std::max(last_scatter_end, sim.timeline.spans[id].end_ns);
    if (sim.graph.name(id) == "optimizer.step") optimizer_start = sim.timeline.spans[id].start_ns;
  }
  EXPECT_GT(last_scatter_end, 0);
  EXPECT_GE(optimizer_start, last_scatter_end);
  const double e = analytic::estimate(s).step_time_s;
  EXPECT_NEAR(sim.metrics.step_time_s, e, 0.03 * e);
}

TEST(Build, OneFOneBWithUnequalStagesAgreesInBothEngines) {
  // Engine comparison, stop 51: under 1F1B a heavier stage's warm-up overlaps the lighter stages'
  // round trip, which GPipe's bubble, the other stages' time, counts whole (Llama 2 7B on 24
  // stages of one or two layers: 0.812 s against 0.708 s simulated). Equal stages keep GPipe's.
  const Shape shapes[] = {{.gpus = 24, .tp = 1, .pp = 24, .global_batch = 24, .host_time = false},
                          {.gpus = 40, .tp = 8, .pp = 5, .global_batch = 8, .host_time = false},
                          {.gpus = 40, .tp = 8, .pp = 5, .global_batch = 2, .host_time = false}};
  for (const Shape& x : shapes) {
    const spec::Scenario s = scenario(x.tp == 1 ? "llama2-7b" : "llama3.1-8b", "dgx-h100", x);
    const double e = analytic::estimate(s).step_time_s;
    EXPECT_NEAR(simulated(s), e, 0.03 * e) << "pp " << x.pp << ", " << x.global_batch << " micro-batches";
  }
}

TEST(Build, ZeroBubbleWithFewerMicroBatchesThanStagesAgreesInBothEngines) {
  // With m < pp micro-batches a stage has only m - 1 weight gradients to defer into the drain: one
  // micro-batch runs pp (F + B) + W. The closed form took every hop's W off, (pp-1)(F + B - W),
  // and was 31% faster than the simulation on Llama 3.1 405B with one micro-batch on 8 stages.
  for (int m : {1, 2, 4}) {
    Shape x{.gpus = 64, .tp = 8, .pp = 8, .global_batch = m, .seq = 2048, .host_time = false};
    x.schedule = spec::Schedule::kZeroBubbleH1;
    const spec::Scenario s = scenario("llama3.1-70b", "dgx-h100", x);
    const double e = analytic::estimate(s).step_time_s;
    EXPECT_NEAR(simulated(s), e, 0.03 * e) << "m " << m;
  }
}

TEST(Build, ZeroBubbleWhereWeightGradientsOutweighTheRestAgreesInBothEngines) {
  // Engine comparison, stop 51: a MoE layer's expert weight gradients can outweigh its forward and
  // input gradient, and the drain's slots (F + B - 2W) went negative and were taken as no bubble,
  // while the fill still costs each hop its forward (Mixtral: 0.500 s against 0.527 s simulated).
  for (const char* model : {"mixtral-8x7b", "gpt-oss-120b"}) {
    Shape x{.gpus = 8, .tp = 2, .pp = 4, .global_batch = 8, .seq = 2048, .host_time = false};
    x.schedule = spec::Schedule::kZeroBubbleH1;
    const spec::Scenario s = scenario(model, "dgx-h100", x);
    const double e = analytic::estimate(s).step_time_s;
    EXPECT_NEAR(simulated(s), e, 0.03 * e) << model;
  }
}

TEST(Build, ZeroBubbleUnderZeroThreeAndWithAHeavyHeadAgreesInBothEngines) {
  // Engine comparison, stop 51. Under ZeRO-3 the drain's input-gradient passes carry the gathers
  // alone, each layer's reduce-scatter following its deferred weight gradient; the closed form
  // took each drain hop as a 1F1B slot less W's kernels (Llama 3.1 70B on 64 H100: 0.986 s
  // against 0.786 s simulated). And the last stage's deferred weight gradients, a heavy head's
  // among them, run beside the drain, not after it (a small GPT with a 51K vocabulary on 4
  // stages: +10.8%).
  Shape x{.gpus = 64, .tp = 8, .pp = 4, .zero = 3, .global_batch = 8, .seq = 2048, .host_time = false};
  x.schedule = spec::Schedule::kZeroBubbleH1;
  const spec::Scenario sharded = scenario("llama3.1-70b", "dgx-h100", x);
  EXPECT_NEAR(simulated(sharded), analytic::estimate(sharded).step_time_s, 0.03 * simulated(sharded));
  Shape y{.gpus = 4, .tp = 1, .pp = 4, .global_batch = 2, .seq = 2048, .host_time = false};
  y.schedule = spec::Schedule::kZeroBubbleH1;
  spec::Scenario head = scenario("megatron-gpt-1.7b", "dgx-h100", y);
  head.model.layers = 12;
  head.model.hidden = 1024;
  head.model.ffn = 4096;
  head.model.heads = head.model.kv_heads = 16;
  head = spec::complete_and_validate(head);
  EXPECT_NEAR(simulated(head), analytic::estimate(head).step_time_s, 0.03 * simulated(head));
}

TEST(Build, UnderZeroBubbleGradientBucketsWaitForTheLastWeightGradientsInBothEngines) {
  // ZB-H1 runs each stage's weight-gradient pass of the last micro-batch last, and only then are
  // a layer's gradients complete: the buckets hide behind that pass, not a whole backward. The
  // closed form, which hid them behind the whole backward, was 3.9% faster than the simulation
  // here.
  Shape x{.gpus = 64, .tp = 8, .pp = 2, .global_batch = 32};
  x.schedule = spec::Schedule::kZeroBubbleH1;
  const spec::Scenario s = scenario("llama3.1-70b", "dgx-h100", x);
  const double e = analytic::estimate(s).step_time_s;
  EXPECT_NEAR(simulated(s), e, 0.03 * e);
}

TEST(Build, AStepOfMoreTasksThanTheBudgetIsRefusedNamingWhatMakesItLarge) {
  // 80 layers x 16 micro-batches are passes enough, against this budget, for the refusal to come
  // from builds of two and three micro-batches (StepBudget::check_step), whose count is exact here.
  const spec::Scenario s = scenario("llama2-70b", "dgx-h100", {.gpus = 32, .tp = 8, .pp = 4, .global_batch = 16});
  const std::size_t needed = build(s).size();
  EXPECT_EQ(build(s, needed).size(), needed);
  try {
    build(s, needed - 1);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kUnsupported);
    EXPECT_EQ(e.message(), fmt::format("simulating this step needs more than {} tasks: 16 micro-batches through "
                                       "80 layers on 4 pipeline stages",
                                       needed - 1));
    EXPECT_NE(e.hint().find("stepcast estimate"), std::string::npos);
  }
}

TEST(Build, TheBudgetsEarlyCheckLetsThroughEveryGraphOfExactlyTheBudgetsSize) {
  // The check before the build sizes the step from builds of two and three micro-batches; a
  // graph the budget holds must never fail it, dense or MoE (whose layers run other ops), 1F1B or
  // interleaved.
  for (const auto& [model, shape] :
       {std::pair{"llama3.1-8b", Shape{.gpus = 8, .tp = 2, .pp = 4, .global_batch = 32}},
        std::pair{"mixtral-8x7b", Shape{.gpus = 16, .tp = 2, .pp = 4, .vp = 2, .global_batch = 16}},
        std::pair{"deepseek-v3", Shape{.gpus = 64, .tp = 8, .pp = 8, .global_batch = 16}}}) {
    const spec::Scenario s = scenario(model, "dgx-h100", shape);
    const std::size_t needed = build(s).size();
    EXPECT_EQ(build(s, needed).size(), needed) << model;
  }
}

TEST(Build, BillionsOfMicroBatchesAreRefusedBeforeTheirTransfersAreAllocated) {
  // 2^31 - 1 sequences of one micro-batch each: their transfer slots alone would take 256 GiB.
  const spec::Scenario s = scenario("llama3.1-8b", "dgx-h100", {.gpus = 8, .tp = 1, .pp = 8, .global_batch = 2147483647});
  try {
    build(s);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kUnsupported);
    EXPECT_EQ(e.message(), "simulating this step needs more than 16777216 tasks: 2147483647 micro-batches "
                           "through 32 layers on 8 pipeline stages");
  }
}

TEST(Build, GraphSizeDoesNotGrowWithDataParallelism) {
  const graph::ExecGraph small = build(scenario("llama2-70b", "dgx-h100", {.gpus = 64, .tp = 8, .pp = 4, .global_batch = 32}));
  const graph::ExecGraph large = build(scenario("llama2-70b", "dgx-h100", {.gpus = 4096, .tp = 8, .pp = 4, .global_batch = 2048}));
  EXPECT_EQ(small.ranks(), 4u);
  EXPECT_EQ(large.ranks(), 4u);
  EXPECT_EQ(small.size(), large.size());
}

TEST(Build, OneFOneBKeepsStagesMicroBatchesOfActivationsOnTheFirstStage) {
  const int p = 4;
  const spec::Scenario s = scenario("llama2-70b", "dgx-h100", {.gpus = 32, .tp = 8, .pp = p, .global_batch = 32});
  const analysis::Simulation sim = analysis::simulate(s);
  const std::vector<double> peak = analysis::peak_memory(sim.graph, sim.timeline);
  const double per_micro_batch = layer_activation_bytes(s, spec::Recompute::kNone) * 80 / p;
  EXPECT_NEAR(peak[0], p * per_micro_batch, 1e-6 * peak[0]);
  EXPECT_NEAR(peak[p - 1], per_micro_batch, 1e-6 * peak[0]);
  EXPECT_NEAR(sim.metrics.memory.activations_bytes, analytic::estimate(s).memory.activations_bytes,
              1e-6 * peak[0]);
}

TEST(Build, InterleavedFirstStageHoldsAtMostEveryMicroBatchOnce) {
  // llama2-70b, 80 layers on 4 stages of 2 chunks. With m = 4 = pp micro-batches the first stage's
  // warm-up (2(pp-1) + (vp-1)pp = 10 chunk forwards) is longer than the m vp = 8 there are: it runs
  // them all, holding every micro-batch's activations of all its 20 layers once, not the
  // steady-state pp (1 + (pp-1)/(pp vp)) = 5.5 micro-batches' worth.
  const int p = 4, m = 4;
  Shape x{.gpus = 32, .tp = 8, .pp = p, .vp = 2, .global_batch = m};
  x.schedule = spec::Schedule::kInterleaved;
  const spec::Scenario s = scenario("llama2-70b", "dgx-h100", x);
  const analysis::Simulation sim = analysis::simulate(s);
  const double per_micro_batch = layer_activation_bytes(s, spec::Recompute::kNone) * 80 / p;
  EXPECT_NEAR(analysis::peak_memory(sim.graph, sim.timeline)[0], m * per_micro_batch, 1e-6 * m * per_micro_batch);
  EXPECT_NEAR(analytic::estimate(s).memory.activations_bytes, m * per_micro_batch, 1e-6 * m * per_micro_batch);
}
TEST(Build, BreakdownAddsUpToTheSimulatedStep) {
  Shape x{.gpus = 64, .tp = 8, .pp = 4, .vp = 5, .global_batch = 32};
  x.schedule = spec::Schedule::kInterleaved;
  const analysis::Simulation sim = analysis::simulate(scenario("llama2-70b", "dgx-h100", x));
  const analytic::Breakdown& b = sim.metrics.breakdown;
  const double sum = b.compute_s + b.tp_comm_s + b.cp_comm_s + b.ep_comm_s + b.pp_comm_s + b.fsdp_comm_s +
                     b.bubble_s + b.dp_comm_s + b.optimizer_s + b.host_s + b.other_s;
  EXPECT_NEAR(sum, sim.metrics.step_time_s, 1e-6);
  EXPECT_GT(b.bubble_s, 0);
  EXPECT_GT(b.dp_comm_s, 0);
  EXPECT_NEAR(sim.critical_path.length_s, sim.metrics.step_time_s, 1e-9);
}

TEST(Build, RecomputesOnlyEveryKthLayerWhenAskedTo) {
  auto recompute_tasks = [](int interval) {
    spec::Scenario s = scenario("llama3.1-8b", "dgx-h100", {.gpus = 8, .tp = 8, .recompute = spec::Recompute::kFull});
    s.strategy.recompute_interval = interval;
    const graph::ExecGraph g = build(spec::complete_and_validate(s));
    std::size_t n = 0;
    for (graph::TaskId id = 0; id < g.size(); ++id) n += g.name(id).ends_with(".recompute");
    return n;
  };
  EXPECT_EQ(recompute_tasks(2) * 2, recompute_tasks(1));
}

TEST(Build, OpLevelCheckpointingRecomputesSomeGemmsAndNoAttention) {
  const graph::ExecGraph g =
      build(scenario("llama3.1-8b", "dgx-h100", {.gpus = 8, .tp = 8, .recompute = spec::Recompute::kOp}));
  std::set<std::string, std::less<>> recomputed;
  for (graph::TaskId id = 0; id < g.size(); ++id) {
    if (g.name(id).ends_with(".recompute")) recomputed.emplace(g.name(id));
  }
  EXPECT_TRUE(recomputed.contains("output_projection.recompute"));
  EXPECT_TRUE(recomputed.contains("mlp_up.recompute"));
  EXPECT_TRUE(recomputed.contains("mlp_activation.recompute"));
  EXPECT_FALSE(recomputed.contains("attention.recompute"));
  EXPECT_FALSE(recomputed.contains("mlp_down.recompute"));
}

// Llama 2 70B on 4 stages whose FP32 gradient reductions over 8 nodes each take about a fifth of
// a micro-batch's backward: the chunks of an interleaved stage hide each other's reductions in
// both engines, and with aligned sync neither lets a chunk's reduction start before its backward
// has ended.
Shape interleaved_with_reductions(int vp, spec::GradSync sync) {
  Shape x{.gpus = 256, .tp = 8, .pp = 4, .vp = vp, .zero = 1, .global_batch = 64, .sp = true};
  x.schedule = vp > 1 ? spec::Schedule::kInterleaved : spec::Schedule::k1F1B;
  x.grad_sync = sync;
  x.grad_dtype = spec::Dtype::kFp32;
  return x;
}

TEST(Build, SimulationAgreesWithEstimateOnBucketedReductionsUnderInterleaving) {
  for (spec::GradSync sync : {spec::GradSync::kAsReady, spec::GradSync::kAligned}) {
    for (int vp : {2, 4}) {
      const spec::Scenario s =
          scenario("llama2-70b", "dgx-h100", interleaved_with_reductions(vp, sync));
      const double e = analytic::estimate(s).step_time_s;
      EXPECT_NEAR(simulated(s), e, 0.03 * e) << spec::name(sync) << " vp " << vp;
    }
  }
}

TEST(Build, InterleavedPipelinesWithFewerMicroBatchesThanStagesAgreeInBothEngines) {
  // Each round of a chunk, a stage waits for its first micro-batch to come back through every
  // stage (PipelineSchedule.InterleavingWithFewerMicroBatchesThanStagesWaitsForEachRoundTrip).
  // The closed form took the bubble as (pp - 1)/vp slots whatever m, 20-35% faster than the
  // simulation on these.
  const std::pair<const char*, Shape> cases[] = {
      {"gb200-nvl72", {.gpus = 32, .tp = 4, .pp = 4, .vp = 2, .global_batch = 4}},                    // m = 2
      {"gb200-nvl72", {.gpus = 64, .tp = 8, .pp = 8, .vp = 2, .global_batch = 3}},                    // m = 3
      {"dgx-h100", {.gpus = 32, .tp = 8, .pp = 4, .vp = 2, .global_batch = 2, .sp = true}},           // m = 2
  };
  for (const auto& [cluster, shape] : cases) {
    spec::Scenario s = scenario("llama3.1-70b", cluster, shape);
    s.strategy.host_dispatch_s = 0;
    s = spec::complete_and_validate(s);
    const double e = analytic::estimate(s).step_time_s;
    EXPECT_NEAR(simulated(s), e, 0.03 * e) << cluster << " m " << s.strategy.micro_batches();
  }
}

TEST(Build, EachChunksLastGradientBucketWaitsForItsLastPassInBothEngines) {
  // Engine comparison, stop 53: a bucket starts as its layer's backward ends (Megatron-LM's
  // register_grad_ready), so a chunk's last bucket runs beside none of its kernels; with one
  // micro-batch it drains while the stage waits for its next chunk. The closed form queued a
  // chunk's buckets at once from its first layer's end, all beside its kernels: 3.4% slow with
  // async sends (3.6% blocking) on this MoE pipeline, whose stages the buckets stretch in turn.
  for (const spec::PipelineTransfers transfers :
       {spec::PipelineTransfers::kHostSynchronised, spec::PipelineTransfers::kAsynchronous}) {
    Shape x{.gpus = 32, .tp = 2, .pp = 4, .vp = 2, .zero = 2, .micro_batch = 2, .global_batch = 8, .sp = true};
    x.schedule = spec::Schedule::kInterleaved;
    x.transfers = transfers;
    x.host_time = false;
    spec::Scenario s = scenario("gpt-oss-120b", "llama3-h100-roce", x);
    s.strategy.ep = 2;
    s = spec::complete_and_validate(s);
    ASSERT_EQ(s.strategy.micro_batches(), 1);
    const double e = analytic::estimate(s).step_time_s;
    EXPECT_NEAR(simulated(s), e, 0.03 * e) << spec::name(transfers);
  }
}

// Megatron-Core's align_grad_reduce: a chunk's buckets start together, on stage r r backward
// passes after the chunk's last, so every stage starts that chunk's reduction at about the same
// time; reduced as they become ready, later stages start theirs a pass or more earlier.
TEST(Build, AlignedGradientSyncStartsEachChunksReductionAtOnceOnEveryStage) {
  const auto ready_times = [](spec::GradSync sync) {
    const spec::Scenario s =
        scenario("llama2-70b", "dgx-h100", interleaved_with_reductions(2, sync));
    const analysis::Simulation sim = analysis::simulate(s);
    std::vector<std::vector<std::int64_t>> ready(4);  // per stage: when chunk 1's buckets may start
    const int chunk_layers = 80 / 8;
    for (graph::TaskId id = 0; id < sim.graph.size(); ++id) {
      const graph::Task& t = sim.graph.task(id);
      const int stage = static_cast<int>(t.rank);
      if (sim.graph.name(id) != "dp.grad_bucket" || t.layer / chunk_layers != 4 + stage) continue;
      std::int64_t at = 0;
      for (graph::TaskId p : sim.graph.predecessors(id))
        at = std::max(at, sim.timeline.spans[p].end_ns);
      ready[static_cast<std::size_t>(stage)].push_back(at);
    }
    return ready;
  };
  const auto spread = [](const std::vector<std::vector<std::int64_t>>& ready) {
    std::int64_t lo = INT64_MAX, hi = 0;
    for (const auto& stage : ready) {
      lo = std::min(lo, stage.front());
      hi = std::max(hi, stage.front());
    }
    return hi - lo;
  };
  const auto aligned = ready_times(spec::GradSync::kAligned);
  for (const auto& stage : aligned) {
    ASSERT_EQ(stage.size(), 10u);
    EXPECT_EQ(*std::min_element(stage.begin(), stage.end()),
              *std::max_element(stage.begin(), stage.end()));
  }
  EXPECT_LT(2 * spread(aligned), spread(ready_times(spec::GradSync::kAsReady)));
}

TEST(Build, TiedEmbeddingsSyncTheirGradientBetweenTheEndStagesBeforeTheirOptimizerRuns) {
  // MPT-7B ties its embeddings: the last of 4 stages keeps a copy as its head, and the two end
  // stages all-reduce its gradient once the data-parallel reduction is done (Megatron's
  // finalize_model_grads), the stages between them taking no part.
  const spec::Scenario s = scenario("mpt-7b", "dgx-a100-80g",
                                    {.gpus = 8, .tp = 1, .pp = 4, .global_batch = 8, .seq = 512});
  const analysis::Simulation sim = analysis::simulate(s);
  std::vector<graph::TaskId> syncs;
  for (graph::TaskId id = 0; id < sim.graph.size(); ++id) {
    if (sim.graph.name(id) == "dp.tied_embedding_sync") syncs.push_back(id);
  }
  ASSERT_EQ(syncs.size(), 2u);
  const graph::Task &first = sim.graph.task(syncs[0]), &last = sim.graph.task(syncs[1]);
  EXPECT_EQ(first.rank, 0u);
  EXPECT_EQ(last.rank, 3u);
  EXPECT_EQ(first.collective, last.collective);
  EXPECT_EQ(sim.graph.collectives()[first.collective].members.size(), 2u);
  EXPECT_EQ(sim.timeline.spans[syncs[0]].start_ns, sim.timeline.spans[syncs[1]].start_ns);
  EXPECT_NEAR(static_cast<double>(sim.timeline.spans[syncs[0]].end_ns -
                                  sim.timeline.spans[syncs[0]].start_ns) /
                  1e9,
              tied_embedding_sync_s(s), 1e-9);
  for (graph::TaskId id = 0; id < sim.graph.size(); ++id) {
    const graph::Task& t = sim.graph.task(id);
    if (sim.graph.name(id) == "dp.grad_bucket" && (t.rank == 0 || t.rank == 3)) {
      EXPECT_LE(sim.timeline.spans[id].end_ns,
                sim.timeline.spans[syncs[t.rank == 0 ? 0 : 1]].start_ns);
    }
    if (sim.graph.name(id) == "optimizer.step" && (t.rank == 0 || t.rank == 3)) {
      EXPECT_GE(sim.timeline.spans[id].start_ns, sim.timeline.spans[syncs[0]].end_ns);
    }
  }
  // The closed form charges it after the reduction too, in the same breakdown entry.
  EXPECT_GE(analytic::estimate(s).breakdown.dp_comm_s, tied_embedding_sync_s(s));
}

TEST(Build, EveryScheduleSimulatesWithoutDeadlockForEveryMicroBatchCountItAccepts) {
  for (spec::Schedule schedule : {spec::Schedule::kGpipe, spec::Schedule::k1F1B, spec::Schedule::kInterleaved,
                                  spec::Schedule::kZeroBubbleH1}) {
    for (int vp : {2, 3}) {
      if (vp > 2 && schedule != spec::Schedule::kInterleaved) continue;
      for (int m = 1; m <= 13; ++m) {
        Shape x{.gpus = 32, .tp = 8, .pp = 4, .global_batch = m, .seq = 1024};
        x.schedule = schedule;
        if (schedule == spec::Schedule::kInterleaved) x.vp = vp;
        // Interleaving refuses a last group shorter than pp after full ones (m 5-7, 9-11, 13):
        // there, a warm-up forward waits on a backward that waits on it (pp 4, vp 3, m 5).
        const bool refused = schedule == spec::Schedule::kInterleaved && m > 4 && m % 4 != 0;
        spec::Scenario s;
        try {
          s = scenario("llama2-70b", "dgx-h100", x);
          EXPECT_FALSE(refused) << spec::name(schedule) << " vp " << vp << " m " << m;
        } catch (const Error& e) {
          EXPECT_TRUE(refused) << e.what();
          EXPECT_NE(std::string(e.what()).find("leave a last group of " + std::to_string(m % 4)), std::string::npos)
              << e.what();
          continue;
        }
        const analysis::Simulation sim = analysis::simulate(s);
        EXPECT_GT(sim.metrics.step_time_s, 0) << spec::name(schedule) << " vp " << vp << " m " << m;
      }
    }
  }
}

// The transfers of `stage` on `stream`, in stream order, as "send 0" (activation of micro-batch
// 0), "recv_grad 1" and so on.
std::string transfers_on(const graph::ExecGraph& g, int stage, std::uint16_t stream) {
  std::string out;
  for (graph::TaskId id = 0; id < g.size(); ++id) {
    const graph::Task& t = g.task(id);
    if (t.rank != static_cast<std::uint32_t>(stage) || t.stream != stream) continue;
    if (!out.empty()) out += ", ";
    out += g.name(id).substr(3);  // without "pp."
    out += ' ';
    out += std::to_string(t.micro_batch);
  }
  return out;
}

TEST(Build, DeferredSendsFollowDeepSpeedsTrainScheduleOverOneStreamPerNeighbour) {
  // Stage 1 of 4 with 3 micro-batches runs the steps "- F0 - F1 - F2 B0 - B1 - B2 -"
  // (PipelineSchedule test). Each output goes out at the next step: on an idle step alone, ahead
  // of a backward after its RecvGrad (step 6: RecvGrad 0, then SendActivation 2).
  Shape x{.gpus = 4, .tp = 1, .pp = 4, .global_batch = 3, .seq = 512};
  x.transfers = spec::PipelineTransfers::kStreamOrdered;
  spec::Scenario s = scenario("llama3.1-8b", "dgx-h100", x);
  s.strategy.deferred_sends = true;
  const graph::ExecGraph g = build(spec::complete_and_validate(s));
  EXPECT_EQ(transfers_on(g, 1, kSendNextStream),
            "send 0, send 1, recv_grad 0, send 2, recv_grad 1, recv_grad 2");
  EXPECT_EQ(transfers_on(g, 1, kRecvPrevStream),
            "recv 0, recv 1, recv 2, send_grad 0, send_grad 1, send_grad 2");
  EXPECT_EQ(transfers_on(g, 1, kSendPrevStream), "");
  EXPECT_EQ(transfers_on(g, 1, kRecvNextStream), "");
  EXPECT_EQ(g.stream_name(kSendNextStream), "p2p next");
}

TEST(Build, DeferredSendsSimulateWithoutDeadlockForAnyDepthAndMicroBatchCount) {
  for (spec::PipelineTransfers transfers :
       {spec::PipelineTransfers::kStreamOrdered, spec::PipelineTransfers::kHostSynchronised}) {
    for (int pp : {2, 3, 4, 8}) {
      for (int m : {1, 2, 3, 5, 9}) {
        Shape x{.gpus = pp, .tp = 1, .pp = pp, .global_batch = m, .seq = 256};
        x.transfers = transfers;
        spec::Scenario s = scenario("llama3.1-8b", "dgx-h100", x);
        s.strategy.deferred_sends = true;
        s.strategy.host_syncs_each_forward = true;
        EXPECT_GT(simulated(spec::complete_and_validate(s)), 0) << "pp " << pp << " m " << m;
      }
    }
  }
}

}  // namespace
}  // namespace stepcast::workload
