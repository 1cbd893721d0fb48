#include "analytic/estimate.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "core/error.h"
#include "cost/collective.h"
#include "cost/compute.h"
#include "spec/presets.h"
#include "workload/model_size.h"
#include "workload/operators.h"
#include "workload/step_costs.h"

namespace stepcast::analytic {
namespace {

spec::Scenario scenario(const char* model, const char* cluster, int gpus, int tp, int pp, int vp,
                        int micro_batch, int global_batch, int seq) {
  spec::Scenario s;
  s.model = spec::model_preset(model);
  s.cluster = spec::cluster_preset(cluster);
  s.gpus = gpus;
  s.strategy.tp = tp;
  s.strategy.pp = pp;
  s.strategy.vp = vp;
  s.strategy.micro_batch = micro_batch;
  s.strategy.global_batch = global_batch;
  s.strategy.seq_len = seq;
  return spec::complete_and_validate(s);
}

double pipeline_time(const Estimate& e) {
  return e.step_time_s - e.breakdown.dp_comm_s - e.breakdown.optimizer_s;
}

TEST(Estimate, BreakdownAddsUpToStepTime) {
  const Estimate e = estimate(scenario("llama3.1-70b", "dgx-h100", 64, 8, 4, 1, 1, 64, 4096));
  const Breakdown& b = e.breakdown;
  const double sum = b.compute_s + b.tp_comm_s + b.cp_comm_s + b.ep_comm_s + b.pp_comm_s +
                     b.fsdp_comm_s + b.bubble_s + b.dp_comm_s + b.optimizer_s + b.host_s + b.other_s;
  EXPECT_NEAR(sum, e.step_time_s, 1e-9 * e.step_time_s);
}

TEST(Estimate, NoBreakdownEntryIsANegativeRoundingResidue) {
  // Both came out at -1e-16 to -1e-15 s, which `--json` printed: the bubble of MosaicML's MPT-7B
  // row on 128 A100 (the stage sum less the one stage) and the exposed ring attention of Gemma 2
  // 9B with cp 2 on a GB200 NVL72 (the overlapped pass less the pass alone).
  spec::Scenario mpt = scenario("mpt-7b", "mosaic-a100-40g-roce", 128, 1, 1, 1, 18, 2304, 2048);
  mpt.strategy.zero_stage = 3;
  mpt.strategy.recompute = spec::Recompute::kFull;
  mpt.strategy.attention = spec::AttentionKernel::kFlashV1;
  spec::Scenario gemma = scenario("gemma-2-9b", "gb200-nvl72", 16, 1, 4, 1, 4, 128, 8192);
  gemma.strategy.cp = 2;
  gemma.strategy.dp = 0;  // derived again: 16 / (pp 4 x cp 2)
  gemma.strategy.schedule = spec::Schedule::k1F1B;
  gemma.strategy.host_dispatch_s = 0;
  for (spec::Scenario s : {mpt, gemma}) {
    const Breakdown b = estimate(spec::complete_and_validate(s)).breakdown;
    for (const double part :
         {b.compute_s, b.tp_comm_s, b.cp_comm_s, b.ep_comm_s, b.pp_comm_s, b.fsdp_comm_s,
          b.bubble_s, b.dp_comm_s, b.optimizer_s, b.host_s, b.other_s}) {
      EXPECT_FALSE(std::signbit(part)) << s.model.name << ": " << part;
    }
  }
}

// Llama 3.1 70B with an 8-token vocabulary, no host cost and links a million times faster: every
// stage does the same work, as the textbook bubble formulas assume (the end stages' one exchange
// fewer per micro-batch costs nothing).
Estimate balanced_pipeline(int p, int v, int m) {
  spec::Scenario s = scenario("llama3.1-70b", "dgx-h100", 64, 8, p, v, 1, 2 * m, 4096);
  s.model.vocab = 8;
  s.strategy.host_dispatch_s = 0;
  for (spec::TopologyLevel& level : s.cluster.levels) level.bandwidth_per_gpu_Bps *= 1e6, level.latency_s = 0;
  return estimate(spec::complete_and_validate(s));
}

TEST(Estimate, OneF1BBubbleIsPipelineMinusOneOverMicroBatchesPlusPipelineMinusOne) {
  // 1F1B: (m + p - 1) slots of one micro-batch each, p - 1 of them idle (Narayanan 2021 §2.2.1).
  const int p = 4, m = 16;
  const Estimate e = balanced_pipeline(p, 1, m);
  EXPECT_NEAR(e.breakdown.bubble_s / pipeline_time(e), (p - 1.0) / (m + p - 1.0), 1e-3);
}

TEST(Estimate, InterleavingDividesTheBubbleByVirtualStages) {
  // Interleaved 1F1B: the bubble shrinks to (p - 1) / v micro-batch slots (§2.2.2).
  const int p = 4, m = 16, v = 2;
  const Estimate e = balanced_pipeline(p, v, m);
  const double slots = (p - 1.0) / v;
  EXPECT_NEAR(e.breakdown.bubble_s / pipeline_time(e), slots / (m + slots), 1e-3);
}

TEST(Estimate, AHeavyOutputHeadSlowsEverySteadyStateSlotButTheFillAndDrainOnce) {
  // Llama 3.1 8B's 128k-token head on the last of 4 stages of 8 layers: each micro-batch passes
  // it once, so the bubble is the other stages' time, well under (p - 1) slowest-stage slots.
  const int p = 4, m = 16;
  const Estimate e = estimate(scenario("llama3.1-8b", "dgx-h100", 4, 1, p, 1, 1, m, 4096));
  const double slowest_slot = (pipeline_time(e) - e.breakdown.bubble_s) / m;
  EXPECT_LT(e.breakdown.bubble_s, 0.9 * (p - 1) * slowest_slot);
  EXPECT_GT(e.breakdown.bubble_s, 0.5 * (p - 1) * slowest_slot);
}

TEST(Estimate, ModelThatDoesNotFitIsAnAnswerNotAnError) {
  const Estimate e = estimate(scenario("llama3.1-405b", "dgx-h100", 8, 8, 1, 1, 1, 1, 4096));
  EXPECT_FALSE(e.memory.fits);
  EXPECT_GT(e.memory.total_bytes, e.memory.capacity_bytes);
  EXPECT_GT(e.step_time_s, 0);
}

TEST(Estimate, MfuIsModelFlopsOverPeakAndHfuAddsRecompute) {
  spec::Scenario s = scenario("llama3.1-8b", "dgx-h100", 8, 1, 1, 1, 1, 8, 4096);
  const Estimate plain = estimate(s);
  EXPECT_NEAR(plain.mfu, plain.hfu, 1e-12);
  EXPECT_NEAR(plain.mfu, plain.tflops_per_gpu * 1e12 / s.cluster.gpu.peak_bf16_flops, 1e-12);
  s.strategy.recompute = spec::Recompute::kFull;
  const Estimate full = estimate(s);
  EXPECT_GT(full.hfu, full.mfu);
  EXPECT_GT(full.step_time_s, plain.step_time_s);
}

spec::Scenario with_recompute(spec::Recompute mode, int interval) {
  spec::Scenario s = scenario("llama3.1-8b", "dgx-h100", 8, 1, 1, 1, 1, 8, 8192);
  s.strategy.recompute = mode;
  s.strategy.recompute_interval = interval;
  return spec::complete_and_validate(s);
}

TEST(Estimate, RecomputingEverySecondLayerCostsHalfOfFullRecomputation) {
  const double none = estimate(with_recompute(spec::Recompute::kNone, 1)).breakdown.compute_s;
  const double full = estimate(with_recompute(spec::Recompute::kFull, 1)).breakdown.compute_s;
  const double half = estimate(with_recompute(spec::Recompute::kFull, 2)).breakdown.compute_s;
  EXPECT_GT(full, none);
  EXPECT_NEAR(half - none, (full - none) / 2, 1e-9 * full);
}

TEST(Estimate, OpLevelCheckpointingRecomputesLessThanFullButMoreThanNothing) {
  const Estimate none = estimate(with_recompute(spec::Recompute::kNone, 1));
  const Estimate op = estimate(with_recompute(spec::Recompute::kOp, 1));
  const Estimate full = estimate(with_recompute(spec::Recompute::kFull, 1));
  EXPECT_GT(op.step_time_s, none.step_time_s);
  EXPECT_LT(op.step_time_s, full.step_time_s);
  EXPECT_GT(op.hfu, op.mfu);
  EXPECT_LT(op.hfu - op.mfu, full.hfu - full.mfu);
}

TEST(Estimate, Fp8IsFasterThanBf16OnH100) {
  spec::Scenario s = scenario("llama3.1-8b", "dgx-h100", 8, 1, 1, 1, 2, 16, 8192);
  const double bf16 = estimate(s).step_time_s;
  s.strategy.dtype = spec::Dtype::kFp8;
  EXPECT_LT(estimate(s).step_time_s, bf16);
}

TEST(Estimate, PerTensorZero3CollectivesAddTheirExposedTimeToEachLayer) {
  // DeepSpeed 0.3.x: a layer gathers its parameters for forward and again for backward and
  // reduce-scatters its gradients; what each gather's prefetch leaves exposed beyond the compute
  // beside it (workload::fsdp_gather_s), and each reduce-scatter whole, add to the layer's time.
  spec::Scenario s = scenario("gpt3-175b", "dgx-a100-80g", 384, 1, 1, 1, 1, 384, 2048);
  s.strategy.zero_stage = 3;
  s.strategy.sharded_collectives = spec::ShardedCollectives::kPerTensorBlocking;
  s = spec::complete_and_validate(s);
  const double per_layer = 2 * workload::fsdp_gather_s(s, false) + workload::fsdp_scatter_s(s, false);
  EXPECT_NEAR(estimate(s).breakdown.fsdp_comm_s, s.model.layers * per_layer, 1e-9);
  s.strategy.sharded_collectives = spec::ShardedCollectives::kPerLayer;
  EXPECT_LT(estimate(s).breakdown.fsdp_comm_s, 0.5 * s.model.layers * per_layer);
}

// The closed form's FSDP time of a prefetched ZeRO-3 layer, re-derived from the layer's op times
// alone, beside one collective and beside two.
double prefetched_zero3_fsdp_s(const spec::Scenario& s) {
  // A layer's kernels alone, beside one collective and beside two, forward and backward (no
  // recomputation).
  double fwd = 0, fwd_one = 0, bwd = 0, bwd_one = 0, bwd_two = 0;
  for (const workload::Op& op : workload::layer_ops(s, false)) {
    const workload::OpTimes t = workload::op_times(op, s, workload::layer_overlap(s, cost::Shares::kBesideTwo));
    fwd += t.whole.fwd;
    fwd_one += t.beside.fwd;
    bwd += t.whole.bwd();
    bwd_one += t.beside.bwd();
    bwd_two += t.beside_two.bwd();
  }
  const double gather = workload::fsdp_gather_s(s, false), scatter = workload::fsdp_scatter_s(s, false);
  // Forward: while the gather of c seconds runs the kernels do c / beside of their work, the rest
  // at full speed: c + alone (1 - c / beside) in all, c (1 - alone / beside) more than alone.
  EXPECT_LT(gather, fwd_one);
  const double forward = gather * (1 - fwd / fwd_one);
  // Backward: the next layer's gather and this layer's reduce-scatter share the link while both
  // run (2 min), each holding its SMs; the longer then runs alone (|gather - scatter|).
  const double both = 2 * std::min(gather, scatter), one = std::abs(gather - scatter);
  const double done = both / bwd_two + one / bwd_one;
  EXPECT_LT(done, 1);
  const double backward = both + one + bwd * (1 - done) - bwd;
  // The forward's first gather waits for the forward to start (FSDP's root pre-forward), so it
  // runs alone, and the layer before it in turn without it.
  const double first_gather = gather - forward;
  return s.model.layers * (forward + backward) + first_gather;
}

TEST(Estimate, PrefetchedZero3GathersHideButSlowTheKernelsBesideThemOnTheSmsTheyLeave) {
  spec::Scenario s = scenario("llama3.1-8b", "dgx-h100", 8, 1, 1, 1, 1, 8, 4096);
  s.strategy.zero_stage = 3;
  s = spec::complete_and_validate(s);
  // The root unit (embedding, final norm, head) adds its gathers and reduce-scatter, exposed.
  const double root = s.strategy.micro_batches() * workload::fsdp_root_unit(s).per_micro_batch();
  EXPECT_GT(root, 0);
  const double with_sms = prefetched_zero3_fsdp_s(s);
  EXPECT_GT(with_sms, 0);
  EXPECT_NEAR(estimate(s).breakdown.fsdp_comm_s, with_sms + root, 1e-12);
  // A GPU whose collectives hold no SMs loses only the HBM bandwidth they take, on its
  // memory-bound kernels.
  s.cluster.gpu.collective_sms = 0;
  const double hbm_only = prefetched_zero3_fsdp_s(s);
  EXPECT_GT(hbm_only, 0);
  EXPECT_LT(hbm_only, with_sms);
  EXPECT_NEAR(estimate(s).breakdown.fsdp_comm_s, hbm_only + root, 1e-12);
}

TEST(Estimate, EachForwardGathersItsFirstLayerOnlyOnceItStarts) {
  // FSDP's root pre-forward makes the gathers wait for the compute stream as each forward starts:
  // per micro-batch the first layer's gather is exposed, whatever the layer count. Twice the
  // layers double the layers' exposure but not that gather's (nor the root unit's).
  spec::Scenario s = scenario("llama3.1-8b", "dgx-h100", 8, 1, 1, 1, 1, 16, 4096);
  s.strategy.zero_stage = 3;
  s = spec::complete_and_validate(s);
  spec::Scenario twice = s;
  twice.model.layers *= 2;
  twice = spec::complete_and_validate(twice);
  const double m = s.strategy.micro_batches();
  ASSERT_EQ(m, 2);
  const double per_forward = (2 * estimate(s).breakdown.fsdp_comm_s - estimate(twice).breakdown.fsdp_comm_s) / m -
                             workload::fsdp_root_unit(s).per_micro_batch();
  const double gather = workload::fsdp_gather_s(s, false);
  // The gather, less what running beside it slows the layer before it (a few percent here).
  EXPECT_GT(per_forward, 0.8 * gather);
  EXPECT_LE(per_forward, gather * (1 + 1e-9));
}

TEST(Estimate, ARootUnitThatReshardsAfterForwardIsGatheredAgainBeforeEachBackward) {
  // FSDP1 and FSDP2 before PyTorch 2.8 keep the root unit gathered for the backward; FSDP2 since
  // then frees it where fully_shard(model, reshard_after_forward=True) says so, and each
  // micro-batch's backward gathers and copies it out once more, exposed.
  spec::Scenario s = scenario("llama3.1-8b", "dgx-h100", 8, 1, 1, 1, 1, 16, 4096);
  s.strategy.zero_stage = 3;
  s.strategy.sharded_collectives = spec::ShardedCollectives::kPerParameter;
  s = spec::complete_and_validate(s);
  const double kept = estimate(s).breakdown.fsdp_comm_s;
  s.strategy.fsdp_root_reshards = true;
  const workload::RootUnit root = workload::fsdp_root_unit(s);
  EXPECT_GT(root.gather, 0);
  EXPECT_GT(root.copy_out, 0);
  EXPECT_NEAR(estimate(s).breakdown.fsdp_comm_s - kept, s.strategy.micro_batches() * (root.gather + root.copy_out),
              1e-12);
}

TEST(Estimate, Fsdp2sCopyOutOfEachGatherRunsOnTheComputeStream) {
  spec::Scenario s = scenario("llama3.1-8b", "dgx-h100", 8, 1, 1, 1, 1, 8, 4096);
  s.strategy.zero_stage = 3;
  s = spec::complete_and_validate(s);
  const double fsdp1 = estimate(s).breakdown.fsdp_comm_s;
  s.strategy.sharded_collectives = spec::ShardedCollectives::kPerParameter;
  const double copies = s.model.layers * 2 * workload::fsdp_copy_out_s(s, false);  // forward and backward
  ASSERT_GT(copies, 0);
  // Each copy-out also widens the window the next gather hides in, and while the gradients are
  // copied in the gather has the link to itself: the step grows by less than the copies out,
  // here by at least half of them, and at most by them and the copies in.
  const double fsdp2 = estimate(s).breakdown.fsdp_comm_s;
  EXPECT_GT(fsdp2 - fsdp1, 0.5 * copies);
  EXPECT_LE(fsdp2 - fsdp1, copies + s.model.layers * workload::fsdp_copy_in_s(s, false));
}

TEST(Estimate, TensorParallelCommunicationIsOnTheCriticalPath) {
  const Estimate e = estimate(scenario("llama3.1-70b", "dgx-h100", 64, 8, 4, 1, 1, 64, 4096));
  EXPECT_GT(e.breakdown.tp_comm_s, 0);
  const Estimate one = estimate(scenario("llama3.1-8b", "dgx-h100", 8, 1, 1, 1, 1, 8, 4096));
  EXPECT_EQ(one.breakdown.tp_comm_s, 0);
}

// Llama 3's context parallelism (--cp-exchange all-gather, §3.3.2) gathers K and V before the
// attention and waits for them; the backward gathers them again and reduce-scatters dK and dV,
// each exposed. Derived here from the collective model: Llama 3.1 8B (8 KV heads of 128) at TP 4
// and CP 4 on a DGX H100, so each of K and V is 16K tokens x 2 heads x 128 x 2 bytes, gathered
// over the 4 CP ranks of the node (stride 4).
TEST(Estimate, AllGatherContextParallelismExposesEveryGatherAndScatter) {
  const auto with = [](spec::CpExchange exchange, spec::Recompute recompute) {
    spec::Scenario s = scenario("llama3.1-8b", "dgx-h100", 16, 4, 1, 1, 1, 4, 16384);
    s.strategy.cp = 4;
    s.strategy.dp = 0;
    s.strategy.cp_exchange = exchange;
    s.strategy.recompute = recompute;
    return estimate(spec::complete_and_validate(s));
  };
  const spec::ClusterSpec cluster = spec::cluster_preset("dgx-h100");
  const double one_of_k_or_v = 16384.0 * 2 * 128 * 2;
  const cost::GroupLayout cp{.size = 4, .stride = 4};
  const double gather = 2 * cost::collective_time_s(cost::CollectiveKind::kAllGather, one_of_k_or_v, cp, cluster);
  const double scatter = 2 * cost::collective_time_s(cost::CollectiveKind::kReduceScatter, one_of_k_or_v, cp, cluster);
  const int layers = 32, micro_batches = 4;  // 4 sequences on dp 1
  const Estimate all_gather = with(spec::CpExchange::kAllGather, spec::Recompute::kNone);
  EXPECT_NEAR(all_gather.breakdown.cp_comm_s, layers * micro_batches * (2 * gather + scatter), 1e-9);
  // Recomputing the layer gathers once more.
  EXPECT_NEAR(with(spec::CpExchange::kAllGather, spec::Recompute::kFull).breakdown.cp_comm_s,
              layers * micro_batches * (3 * gather + scatter), 1e-9);
}

// Megatron's column-parallel backward (--tp-async-backward) runs the input gradient's all-reduce
// beside the weight-gradient GEMM: each hides at most that GEMM's time, on the SMs NCCL leaves it.
// With SP the reduce-scatter hides the same way, but the input is gathered again beside the
// input-gradient GEMM, so less is saved than without SP.
TEST(Estimate, MegatronsAsyncBackwardHidesTheInputGradientsCollectiveBehindTheWeightGradient) {
  const auto tp_comm = [](bool sp, bool async_backward) {
    spec::Scenario s = scenario("llama2-70b", "dgx-a100-80g", 8, 8, 1, 1, 2, 2, 4096);
    s.strategy.sequence_parallel = sp;
    s.strategy.tp_async_backward = async_backward;
    s = spec::complete_and_validate(s);
    return std::pair{estimate(s).breakdown.tp_comm_s, s};
  };
  const auto [blocking, s] = tp_comm(false, false);
  const double saved = blocking - tp_comm(false, true).first;
  EXPECT_GT(saved, 0);
  // Bound: per layer and micro-batch, each block's first op hides at most min(all-reduce, wgrad).
  double bound = 0;
  const double all_reduce = workload::tp_collective_s(s, cost::CollectiveKind::kAllReduce, false);
  for (const workload::Op& op : workload::layer_ops(s, false)) {
    if (op.tp_edge != workload::BlockEdge::kStart) continue;
    bound += std::min(all_reduce, workload::op_times(op, s, {}).whole.bwd_weight);
  }
  bound *= s.model.layers * s.strategy.micro_batches();
  EXPECT_LE(saved, bound * (1 + 1e-12));
  const double saved_sp = tp_comm(true, false).first - tp_comm(true, true).first;
  EXPECT_LT(saved_sp, saved);
  // Zero-bubble schedules defer the weight gradient the all-reduce would run beside: the flag
  // then changes nothing.
  spec::Scenario zero_bubble = s;
  zero_bubble.strategy.schedule = spec::Schedule::kZeroBubbleH1;
  const double without = estimate(zero_bubble).step_time_s;
  zero_bubble.strategy.tp_async_backward = true;
  EXPECT_EQ(estimate(zero_bubble).step_time_s, without);
}

// Under async TP the flag is Transformer Engine's userbuffers backward: the column-parallel ops
// run their input-gradient GEMM whole (as PyTorch's async TP does for Llama, whose summed input
// gradients it cannot fuse), with the input's second gather beside it and the reduce-scatter
// beside the weight gradient, on kernels that hold tp_backward_sms SMs; the row-parallel ops and
// every forward GEMM stay split.
TEST(Estimate, TransformerEnginesBulkOverlapsRunBesideTheColumnParallelBackwardsWholeGemms) {
  spec::Scenario s = scenario("llama3.1-70b", "dgx-h100", 8, 8, 1, 1, 1, 1, 8192);
  s.strategy.sequence_parallel = true;
  s.strategy.overlap_tp_comm = true;
  s = spec::complete_and_validate(s);
  spec::Scenario bulk = s;
  bulk.strategy.tp_async_backward = true;
  const workload::Overlap beside = workload::layer_overlap(s, cost::Shares::kBesideOne);
  // The start ops' weight-gradient GEMMs beside the bulk scatter, with 2 and 24 SMs held.
  double alone = 0, beside_two_sms = 0, beside_24_sms = 0;
  for (const workload::Op& op : workload::layer_ops(s, false)) {
    if (op.kind != workload::OpKind::kGemm) continue;
    const workload::OpTimes split = workload::op_times(op, s, beside);
    const workload::OpTimes whole = workload::op_times(op, bulk, beside);
    EXPECT_EQ(whole.whole.fwd, split.whole.fwd) << op.name;
    EXPECT_EQ(whole.whole.bwd_input, split.whole.bwd_input) << op.name;
    if (op.tp_edge != workload::BlockEdge::kStart) continue;
    alone += whole.whole.bwd_weight;
    bulk.strategy.tp_backward_sms = 2;
    beside_two_sms += workload::op_times(op, bulk, beside).beside.bwd_weight;
    bulk.strategy.tp_backward_sms = 24;
    beside_24_sms += workload::op_times(op, bulk, beside).beside.bwd_weight;
  }
  // The bulk kernels' SMs slow the GEMMs beside them (in more waves of tiles), more where they
  // hold more.
  EXPECT_GE(beside_two_sms, alone * (1 - 1e-12));
  EXPECT_GT(beside_24_sms, beside_two_sms);
  bulk.strategy.tp_backward_sms = 0;
  // The reduce-scatter PyTorch's async TP leaves exposed hides beside the weight gradient.
  EXPECT_LT(estimate(bulk).breakdown.tp_comm_s, estimate(s).breakdown.tp_comm_s);
}

// Megatron's interleaved schedule finishes a stage's chunks a group of pp micro-batches apart, so
// each chunk's gradient reduction hides behind the backward of the chunks after it: the more
// chunks, the less is exposed. Aligned sync (Megatron-Core) starts a chunk's reduction only once
// its backward has ended, so the last chunk's share is exposed whole.
TEST(Estimate, InterleavedChunksHideEachOthersGradientReductions) {
  const auto with = [](int vp, spec::GradSync sync) {
    spec::Scenario s = scenario("llama2-70b", "dgx-h100", 256, 8, 4, vp, 1, 64, 4096);
    s.strategy.zero_stage = 1;
    s.strategy.grad_reduce_dtype = spec::Dtype::kFp32;
    s.strategy.grad_sync = sync;
    return spec::complete_and_validate(s);
  };
  const auto exposed = [&](int vp, spec::GradSync sync) {
    return estimate(with(vp, sync)).breakdown.dp_comm_s;
  };
  using enum spec::GradSync;
  EXPECT_LT(exposed(2, kAsReady), exposed(1, kAsReady));
  EXPECT_LT(exposed(4, kAsReady), exposed(2, kAsReady));
  EXPECT_EQ(exposed(1, kAligned), exposed(1, kAsReady));  // under 1F1B the first stage streams
  for (int vp : {2, 4}) {
    const spec::Scenario s = with(vp, kAligned);
    const double reduce = workload::dp_reduce_s(
        s, workload::stage_params_per_gpu(workload::param_counts(s.model), s.model, s.strategy));
    EXPECT_GT(exposed(vp, kAligned), exposed(vp, kAsReady)) << vp;
    EXPECT_GE(exposed(vp, kAligned), reduce / vp) << vp;
  }
}

// torch.distributed.pipelining with FSDP2 reduce-scatters a stage's gradients only after its last
// backward: nothing hides them, so the whole reduction is exposed, more than as buckets stream.
TEST(Estimate, AfterBackwardSyncExposesTheStagesWholeGradientReduction) {
  const auto with = [](spec::GradSync sync) {
    spec::Scenario s = scenario("llama2-70b", "dgx-h100", 256, 8, 4, 1, 1, 64, 4096);
    s.strategy.zero_stage = 2;
    s.strategy.grad_reduce_dtype = spec::Dtype::kFp32;
    s.strategy.grad_sync = sync;
    return spec::complete_and_validate(s);
  };
  const spec::Scenario after = with(spec::GradSync::kAfterBackward);
  const double exposed = estimate(after).breakdown.dp_comm_s;
  EXPECT_GT(exposed, estimate(with(spec::GradSync::kAsReady)).breakdown.dp_comm_s);
  const double reduce = workload::dp_reduce_s(
      after, workload::stage_params_per_gpu(workload::param_counts(after.model), after.model, after.strategy));
  EXPECT_GE(exposed, reduce * (1 - 1e-9));
}

TEST(Estimate, AStepThatIsNotANumberOrLongerThanTheSimulatorsClockIsRefused) {
  Estimate e;
  for (const double step_s : {std::nan(""), std::numeric_limits<double>::infinity(), 1.1e9}) {
    e.step_time_s = step_s;
    try {
      require_finite(e);
      ADD_FAILURE() << step_s << " s passed";
    } catch (const Error& error) {
      EXPECT_EQ(error.kind(), ErrorKind::kInvalidInput) << step_s;
      EXPECT_NE(std::string(error.what()).find("an input is far out of range"), std::string::npos) << error.what();
    }
  }
  e.step_time_s = 1e9;
  EXPECT_NO_THROW(require_finite(e));
}

TEST(Estimate, NoTimeCategoryIsNegativeWhereItsTermsCancelToARoundingResidue) {
  // Llama 4 Scout on one data-parallel replica: its data-parallel stretch was wall - first of a
  // walk that ends where it starts, -4.2e-17 s, printed in --json (fuzzing).
  spec::Scenario s;
  s.model = spec::model_preset("llama4-scout");
  s.cluster = spec::cluster_preset("mosaic-h100-roce");
  s.gpus = 8;
  s.strategy.tp = 2;
  s.strategy.pp = 4;
  s.strategy.vp = 2;
  s.strategy.micro_batch = 2;
  s.strategy.global_batch = 8;
  s.strategy.seq_len = 128;
  s.strategy.tp_async_backward = true;
  s.strategy.dtype = spec::Dtype::kFp8;
  const Breakdown b = estimate(spec::complete_and_validate(s)).breakdown;
  for (const double seconds : {b.compute_s, b.tp_comm_s, b.cp_comm_s, b.ep_comm_s, b.pp_comm_s, b.fsdp_comm_s,
                               b.host_s, b.bubble_s, b.dp_comm_s, b.optimizer_s})
    EXPECT_GE(seconds, 0);
}

}  // namespace
}  // namespace stepcast::analytic
