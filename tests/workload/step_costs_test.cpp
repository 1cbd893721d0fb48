#include "workload/step_costs.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string_view>
#include <vector>

#include "cost/collective.h"
#include "cost/compute.h"
#include "spec/presets.h"
#include "workload/model_size.h"
#include "workload/operators.h"

namespace stepcast::workload {
namespace {

// GPT-3 175B under ZeRO-3 without model parallelism on `gpus` A100s (Narayanan 2021, Table 2).
spec::Scenario zero3_gpt3(int gpus, spec::ShardedCollectives collectives) {
  spec::Scenario s;
  s.model = spec::model_preset("gpt3-175b");
  s.cluster = spec::cluster_preset("dgx-a100-80g");
  s.gpus = gpus;
  s.strategy.zero_stage = 3;
  s.strategy.micro_batch = 1;
  s.strategy.global_batch = gpus;
  s.strategy.seq_len = 2048;
  s.strategy.sharded_collectives = collectives;
  return spec::complete_and_validate(s);
}

// PyTorch's host time to select and copy one slice in C++ (ProcessGroupNCCL's list form): the
// traced select and copy_ (3 + 12 us) less the profiler's time for the two events they enclose
// (2.35 us each, measured on GPT 1.3B traced and untraced).
constexpr double kC10dSliceS = 15e-6 - 2 * 2.35e-6;

constexpr auto kPerLayer = spec::ShardedCollectives::kPerLayer;
constexpr auto kPerTensor = spec::ShardedCollectives::kPerTensorBlocking;
constexpr auto kPerParameter = spec::ShardedCollectives::kPerParameter;

// A GPT layer's tensors: QKV (h x 3h), projection (h x h), MLP up (h x 4h) and down (4h x h)
// weights, four biases and two LayerNorms' scales and shifts. The biases and norms (at most 4h =
// 49,152 elements) sit under DeepSpeed's persistence threshold of 1e5 and are never gathered.
std::vector<double> moved_tensor_elements(const spec::Scenario& s) {
  const double h = s.model.hidden;
  return {3 * h * h, h * h, 4 * h * h, 4 * h * h};
}
std::vector<double> persistent_tensor_elements(const spec::Scenario& s) {
  const double h = s.model.hidden;
  return {h, h, 3 * h, h, h, h, 4 * h, h};  // norm, QKV bias, projection bias, norm, MLP biases
}

// FP32 weights under autocast (Composer's DEFAULT FSDP of 2023): ZeRO-3 gathers 4 bytes per
// parameter, and each linear casts its weight in the forward and its gradient in the backward,
// a kernel and 6 bytes per weight element each way; ops without weights cast nothing.
TEST(AutocastFp32Weights, GatherFp32AndCastEachLinearsWeightAndGradient) {
  spec::Scenario bf16 = zero3_gpt3(64, kPerLayer);
  spec::Scenario fp32 = bf16;
  fp32.strategy.autocast_fp32_weights = true;
  // Twice the bytes over the same links, less the fixed latencies that do not double.
  const double ratio = fsdp_gather_s(fp32, false) / fsdp_gather_s(bf16, false);
  EXPECT_GT(ratio, 1.95);
  EXPECT_LE(ratio, 2.0);
  for (const Op& op : layer_ops(bf16, false)) {
    const OpTime plain = op_times(op, bf16, Overlap{}).whole, cast = op_times(op, fp32, Overlap{}).whole;
    const bool weighted = op.kind == OpKind::kGemm && op.weights > 0;
    const double expected = weighted ? cost::memory_time_s(6 * op.k * op.n * op.weights, bf16.cluster.gpu) : 0;
    EXPECT_NEAR(cast.fwd - plain.fwd, expected, 1e-12) << op.name;
    EXPECT_NEAR(cast.bwd_input + cast.bwd_weight - plain.bwd_input - plain.bwd_weight, expected, 1e-12) << op.name;
    EXPECT_EQ(cast.host_fwd > plain.host_fwd, weighted) << op.name;
  }
}

// The gather of one moved tensor prefetched beside `beside` seconds of compute: DeepSpeed fills
// the buffer it gathers into with zeros (torch.zeros) and narrows it n times in Python (3 us
// each, GPU idle); PyTorch then selects and copies each of the n slices out of its staging buffer
// (kC10dSliceS each), launching the copies while the collective runs; the compute launches after
// them and runs beside whatever of the collective and copies is left.
double tensor_gather_s(double elements, const spec::Scenario& s, double beside) {
  const int n = s.gpus;
  const double bytes = 2 * elements;  // BF16
  const double gpu = collective_s(cost::CollectiveKind::kAllGather, bytes, {n, 1}, s) +
                     n * cost::memory_time_s(2 * bytes / n, s.cluster.gpu);
  return cost::memory_time_s(bytes, s.cluster.gpu) + n * 3e-6 +
         std::max(gpu - beside, n * kC10dSliceS);
}

// A GPT layer's ops' forward and backward compute, and the indices of the four ops that hold a
// moved tensor (QKV, projection, MLP up, MLP down), in forward order.
struct LayerCompute {
  std::vector<double> fwd, bwd;
  std::vector<std::size_t> movers;
};
LayerCompute layer_compute(const spec::Scenario& s) {
  LayerCompute c;
  const LayerOps layer = layer_ops(s, false);
  for (std::size_t i = 0; i < layer.size(); ++i) {
    const OpTime t = op_times(layer[i], s, Overlap{}).whole;
    c.fwd.push_back(t.fwd);
    c.bwd.push_back(t.bwd());
    if (layer[i].kind == OpKind::kGemm && layer[i].weights > 0) c.movers.push_back(i);
  }
  return c;
}

// Seconds of `times` from index `from` up to, not including, `to`, wrapping past the end.
double between(const std::vector<double>& times, std::size_t from, std::size_t to) {
  double seconds = 0;
  for (std::size_t i = from; i != to; i = (i + 1) % times.size()) seconds += times[i];
  return seconds;
}

TEST(ShardedCollectives, PerTensorGathersArePrefetchedBesideTheComputeSinceTheFetchBefore) {
  // prefetch_next_sub_modules starts the next tensor's gather once a fetch returns, so each
  // tensor's gather runs beside the forward of the ops from the previous moved tensor's op to
  // its own; QKV's, beside the MLP down projection and what follows it in the layer before.
  const spec::Scenario s = zero3_gpt3(1536, kPerTensor);
  const std::vector<double> tensors = moved_tensor_elements(s);
  const LayerCompute c = layer_compute(s);
  ASSERT_EQ(c.movers.size(), tensors.size());
  double expected = 0;
  for (std::size_t k = 0; k < tensors.size(); ++k) {
    const std::size_t before = c.movers[(k + tensors.size() - 1) % tensors.size()];
    expected += tensor_gather_s(tensors[k], s, between(c.fwd, before, c.movers[k]));
  }
  EXPECT_NEAR(fsdp_gather_s(s, false), expected, 1e-12);
  // At 384 ranks, four sequences a GPU, the compute hides more of each collective.
  const spec::Scenario wider = zero3_gpt3(384, kPerTensor);
  EXPECT_LT(fsdp_gather_s(wider, false),
            tensor_gather_s(tensors[0], wider, 0) + tensor_gather_s(tensors[1], wider, 0) +
                tensor_gather_s(tensors[2], wider, 0) + tensor_gather_s(tensors[3], wider, 0));
}

TEST(ShardedCollectives,
     PerTensorReduceScattersCopyTheSlicesInBeforeTheCollectiveStartsPersistentTensorsToo) {
  const spec::Scenario s = zero3_gpt3(1536, kPerTensor);
  const int n = 1536;
  double expected = 0;
  std::vector<double> tensors = moved_tensor_elements(s);
  // The persistent tensors' gradients go through the reduction buckets as the others'.
  for (const double elements : persistent_tensor_elements(s)) tensors.push_back(elements);
  for (const double elements : tensors) {
    const double bytes = gradient_bytes(s.strategy) * elements;
    // A view and a narrow of the gradient per slice in Python (2 + 3 us), then the n copies in
    // (kC10dSliceS each, far above their GPU time) and only then the collective.
    ASSERT_LT(cost::memory_time_s(2 * bytes / n, s.cluster.gpu), kC10dSliceS);
    expected += n * 5e-6 + n * kC10dSliceS + collective_s(cost::CollectiveKind::kReduceScatter, bytes, {n, 1}, s);
  }
  EXPECT_NEAR(fsdp_scatter_s(s, false), expected, 1e-12);
}

TEST(ShardedCollectives, DeepSpeedGathersThePersistentParametersAgainAfterEachOptimizerStep) {
  // The backward re-partitions them; _post_step gathers all their shards at once, then copies
  // each rank's piece of each into the parameter: a narrow, a view, a narrow and a copy_ (20 us of
  // host time, above the copy's GPU time), and one narrow and copy_ before, its own shard in.
  const spec::Scenario s = zero3_gpt3(1536, kPerTensor);
  const int n = 1536;
  std::vector<double> tensors;
  for (int l = 0; l < s.model.layers; ++l) {
    for (const double elements : persistent_tensor_elements(s)) tensors.push_back(elements);
  }
  const double h = s.model.hidden;
  tensors.insert(tensors.end(), {h, h});  // the final norm
  double elements = 0, copies = 0;
  for (const double t : tensors) {
    elements += t;
    ASSERT_EQ(static_cast<int>(t) % n, 0);  // GPT-3's widths split evenly: a piece on every rank
    copies += 15e-6 + n * 20e-6;
  }
  const double bytes = 2 * elements;
  const double gather = n * 3e-6 + std::max(collective_s(cost::CollectiveKind::kAllGather, bytes, {n, 1}, s) +
                                                n * cost::memory_time_s(2 * bytes / n, s.cluster.gpu),
                                            n * kC10dSliceS);
  const spec::Scenario per_layer = zero3_gpt3(1536, kPerLayer);
  const double params = 1e9;
  EXPECT_NEAR(optimizer_s(s, params) - optimizer_s(per_layer, params), copies + gather, 1e-9);
  // Below ZeRO-3 nothing is partitioned, whatever the collectives' setting.
  spec::Scenario zero2 = s;
  zero2.strategy.zero_stage = 2;
  spec::Scenario zero2_per_layer = per_layer;
  zero2_per_layer.strategy.zero_stage = 2;
  EXPECT_EQ(optimizer_s(zero2, params), optimizer_s(zero2_per_layer, params));
}

TEST(ShardedCollectives, AfterRecomputationDeepSpeedGathersAgainAllButTheMlpDownProjection) {
  // The backward runs MLP down first, right after the recomputation ran it: kept. MLP up is next
  // used after MLP down's two uses, 2 x 4h^2 = 1.2e9 elements apart on GPT-3, beyond the 1e9 of
  // stage3_max_reuse_distance: released and gathered again, and so are the projection and QKV.
  // The trace of the layer's backward: the recomputation fetches all four, then the backward
  // fetches MLP up, the projection and QKV in turn, each prefetched beside the compute since the
  // fetch before; the recomputation's QKV beside the backward of QKV and what precedes it.
  const spec::Scenario s = zero3_gpt3(1536, kPerTensor);
  const std::vector<double> tensors = moved_tensor_elements(s);
  ASSERT_GT(2 * tensors[3], 1e9);
  const LayerCompute c = layer_compute(s);
  const std::vector<std::size_t>& m = c.movers;
  const double recomputation =
      tensor_gather_s(tensors[0], s, between(c.bwd, 0, m[0] + 1) + between(c.fwd, 0, m[0])) +
      tensor_gather_s(tensors[1], s, between(c.fwd, m[0], m[1])) +
      tensor_gather_s(tensors[2], s, between(c.fwd, m[1], m[2])) +
      tensor_gather_s(tensors[3], s, between(c.fwd, m[2], m[3]));
  const double again =
      tensor_gather_s(tensors[2], s, between(c.fwd, m[3], 0) + between(c.bwd, m[2] + 1, 0)) +
      tensor_gather_s(tensors[1], s, between(c.bwd, m[1] + 1, m[2] + 1)) +
      tensor_gather_s(tensors[0], s, between(c.bwd, m[0] + 1, m[1] + 1));
  const double backward = recomputation + again;
  EXPECT_NEAR(fsdp_regather_s(s, false), backward - fsdp_gather_s(s, false), 1e-12);
}

TEST(ShardedCollectives, NothingIsGatheredAgainWhereTheLayerFitsTheReuseDistanceOrStaysGathered) {
  // GPT-3 XL (h 2048): a whole layer behind QKV is 2 x 9 x 2048^2 = 75 M elements apart.
  spec::Scenario small = zero3_gpt3(64, kPerTensor);
  small.model.hidden = 2048;
  small.model.ffn = 4 * 2048;
  small.model.heads = 16;
  small.model.kv_heads = 16;
  EXPECT_EQ(fsdp_regather_s(spec::complete_and_validate(small), false), 0);
  // One gather per layer (PyTorch FSDP) keeps the unit gathered from the recomputation through
  // its backward.
  EXPECT_EQ(fsdp_regather_s(zero3_gpt3(1536, kPerLayer), false), 0);
}

TEST(ShardedCollectives,
     Fsdp2CopiesEachGatherInAndOutAndEachLayersGradientsInEvenOnOneRankWhereFsdp1UsesTheBuffersInPlace) {
  spec::Scenario s = zero3_gpt3(64, kPerParameter);
  const double h = s.model.hidden;
  const double layer = 12 * h * h + 13 * h;  // QKV, projection, MLP weights and biases, two norms
  // Each rank's FP32 shard cast to BF16 (read 4 B, write 2 B) and copied into the gather's input
  // (2 B, 2 B); out of the gathered BF16 buffer into the parameters: read 2 B, write 2 B.
  EXPECT_NEAR(fsdp_copy_out_s(s, false), cost::memory_time_s(4 * layer + 10 * layer / 64, s.cluster.gpu), 1e-12);
  // The BF16 gradients into the reduce-scatter's buffer at its dtype: read 2 B, write 2 B, or
  // 4 B where the reduction runs in FP32 (torchtitan).
  EXPECT_NEAR(fsdp_copy_in_s(s, false), cost::memory_time_s(4 * layer, s.cluster.gpu), 1e-12);
  s.strategy.grad_reduce_dtype = spec::Dtype::kFp32;
  EXPECT_NEAR(fsdp_copy_in_s(s, false), cost::memory_time_s(6 * layer, s.cluster.gpu), 1e-12);
  // The collectives themselves are FSDP1's.
  EXPECT_EQ(fsdp_gather_s(zero3_gpt3(64, kPerParameter), false), fsdp_gather_s(zero3_gpt3(64, kPerLayer), false));
  // On one rank the gather is in place: the cast and the copy in are left. The reduction's copy
  // in is followed by a copy into the reduced gradient (read 2 B, write 2 B in BF16), as the
  // Kineto traces of fully_shard on one H100 show (data/measurements/h100-steps).
  const spec::Scenario one = zero3_gpt3(1, kPerParameter);
  EXPECT_NEAR(fsdp_copy_out_s(one, false), cost::memory_time_s(10 * layer, one.cluster.gpu), 1e-12);
  EXPECT_NEAR(fsdp_copy_in_s(one, false), cost::memory_time_s(8 * layer, one.cluster.gpu), 1e-12);
  for (const auto other : {kPerLayer, kPerTensor}) {
    EXPECT_EQ(fsdp_copy_out_s(zero3_gpt3(64, other), false), 0);
    EXPECT_EQ(fsdp_copy_in_s(zero3_gpt3(64, other), false), 0);
  }
}

TEST(ShardedCollectives, TheRootUnitIsGatheredOnceOrWhereItReshardsTwiceAndReducedOncePerMicroBatchWithItsCopies) {
  // GPT-3's tied embedding (and final norm) is the root unit of a one-stage model.
  spec::Scenario s = zero3_gpt3(64, kPerParameter);
  const ParamCounts p = param_counts(s.model);
  const double params = embedding_params_per_gpu(p, s.strategy) + head_params_per_gpu(p, s.model, s.strategy);
  const RootUnit root = fsdp_root_unit(s);
  const GroupShape group = gradient_group(s.strategy);
  EXPECT_DOUBLE_EQ(root.gather, collective_s(cost::CollectiveKind::kAllGather, 2 * params, group, s));
  EXPECT_DOUBLE_EQ(root.scatter, collective_s(cost::CollectiveKind::kReduceScatter, 2 * params, group, s));
  EXPECT_NEAR(root.copy_out, cost::memory_time_s(4 * params + 10 * params / 64, s.cluster.gpu), 1e-12);
  EXPECT_NEAR(root.copy_in, cost::memory_time_s(4 * params, s.cluster.gpu), 1e-12);
  EXPECT_DOUBLE_EQ(root.per_micro_batch(), root.gather + root.copy_out + root.copy_in + root.scatter);
  s.strategy.fsdp_root_reshards = true;
  EXPECT_DOUBLE_EQ(fsdp_root_unit(s).per_micro_batch(),
                   2 * (root.gather + root.copy_out) + root.copy_in + root.scatter);
  // Per-layer sharding gathers into the parameters' own storage: collectives, no copies.
  const RootUnit per_layer = fsdp_root_unit(zero3_gpt3(64, kPerLayer));
  EXPECT_DOUBLE_EQ(per_layer.gather, root.gather);
  EXPECT_EQ(per_layer.copy_out + per_layer.copy_in + per_layer.flatten, 0);
  // None for DeepSpeed's per-tensor ZeRO-3, nor without ZeRO-3.
  EXPECT_EQ(fsdp_root_unit(zero3_gpt3(64, kPerTensor)).per_micro_batch(), 0);
  spec::Scenario zero2 = s;
  zero2.strategy.zero_stage = 2;
  EXPECT_EQ(fsdp_root_unit(zero2).per_micro_batch(), 0);
}

// FSDP1 (torch 2.0/2.1 _runtime_utils._post_backward_hook, default_hooks.reduce_scatter_hook):
// autograd concatenates a unit's BF16 gradients into the flat one on the compute stream (2 + 2
// bytes a parameter); the post-backward stream casts it to FP32 (2 + 4) and pre-divides it (4 + 4)
// before the reduce-scatter, and post-divides the FP32 shard (4 + 4) after it. Reduced in BF16, it
// casts nothing before, pre-divides in BF16 (2 + 2), post-divides the BF16 shard (2 + 2) and casts
// it to the FP32 flat parameter (2 + 4). A group of one runs NO_SHARD: none of it.
TEST(ShardedCollectives, FlatParameterFlattensOnTheComputeStreamAndCastsAndDividesAroundTheScatter) {
  spec::Scenario s = zero3_gpt3(64, spec::ShardedCollectives::kFlatParameter);
  const double params = 12.0 * s.model.hidden * s.model.hidden + 13.0 * s.model.hidden;  // GPT's layer
  const auto seconds = [&](double bytes) { return cost::memory_time_s(bytes, s.cluster.gpu); };
  s.strategy.grad_reduce_dtype = spec::Dtype::kFp32;
  EXPECT_NEAR(fsdp_flatten_s(s, false), seconds(4 * params), 1e-9);
  EXPECT_NEAR(fsdp_copy_in_s(s, false), seconds(14 * params + 8 * params / 64), 1e-9);
  EXPECT_EQ(fsdp_copy_out_s(s, false), 0);
  s.strategy.grad_reduce_dtype = spec::Dtype::kBf16;
  EXPECT_NEAR(fsdp_copy_in_s(s, false), seconds(4 * params + 10 * params / 64), 1e-9);
  const ShardedLayer layer = sharded_layer(s, false);
  EXPECT_DOUBLE_EQ(layer.flatten, fsdp_flatten_s(s, false));
  EXPECT_DOUBLE_EQ(layer.copy_in, fsdp_copy_in_s(s, false));
  // The root unit's gradients go the same way.
  EXPECT_GT(fsdp_root_unit(s).flatten, 0);
  const spec::Scenario one = zero3_gpt3(1, spec::ShardedCollectives::kFlatParameter);
  EXPECT_EQ(fsdp_flatten_s(one, false) + fsdp_copy_in_s(one, false), 0);
  // FSDP2 and DeepSpeed's per-layer gathers flatten nothing on the compute stream.
  EXPECT_EQ(fsdp_flatten_s(zero3_gpt3(64, kPerParameter), false), 0);
  EXPECT_EQ(fsdp_flatten_s(zero3_gpt3(64, kPerLayer), false) + fsdp_copy_in_s(zero3_gpt3(64, kPerLayer), false), 0);
}

TEST(ShardedCollectives, PerTensorCostGrowsWithTheRingWhereOneGatherPerLayerBarelyDoes) {
  // A ring of n ranks takes n - 1 latency-bound steps per collective and the list form makes n
  // slice views and copies, paid once per tensor; one flat gather per layer pays the ring once.
  const double layer_384 = fsdp_gather_s(zero3_gpt3(384, kPerLayer), false);
  const double layer_1536 = fsdp_gather_s(zero3_gpt3(1536, kPerLayer), false);
  const double tensor_384 = fsdp_gather_s(zero3_gpt3(384, kPerTensor), false);
  const double tensor_1536 = fsdp_gather_s(zero3_gpt3(1536, kPerTensor), false);
  EXPECT_GT(tensor_384, layer_384);
  EXPECT_GT(tensor_1536 - tensor_384, 3 * (layer_1536 - layer_384));
}

TEST(ShardedCollectives, GradientsReduceScatterTensorByTensorWithoutHidingTheirCopiesBehindTheCollective) {
  // BF16 gradients move the same tensors in the same list form as the parameters, but their
  // slices are copied in before the collective can start, where a gather's copies out are
  // launched while it runs.
  const spec::Scenario s = zero3_gpt3(768, kPerTensor);
  EXPECT_GT(fsdp_scatter_s(s, false), fsdp_scatter_s(zero3_gpt3(768, kPerLayer), false));
  EXPECT_GT(fsdp_scatter_s(s, false), fsdp_gather_s(s, false));
}

// One GEMM on an A100 (108 SMs; an NCCL collective holds 24 of them), long enough in k to be
// bound by its math, whose 128 x 256 output tiles number `tiles`.
// k = 128 is too short to split (cost/compute.cpp, kMinSplitK), so the tiles are the output's.
Op gemm_of_tiles(int tiles) { return {.name = "gemm", .kind = OpKind::kGemm, .m = 128.0 * tiles, .n = 256, .k = 128}; }

spec::Scenario a100() {
  spec::Scenario s;
  s.cluster = spec::cluster_preset("dgx-a100-80g");
  return s;
}

// Llama 3.1 8B on one DGX H100, TP 8 with sequence parallelism, FP8 GEMMs.
spec::Scenario fp8_tp8(int micro_batch) {
  spec::Scenario s;
  s.model = spec::model_preset("llama3.1-8b");
  s.cluster = spec::cluster_preset("dgx-h100");
  s.gpus = 8;
  s.strategy.tp = 8;
  s.strategy.sequence_parallel = true;
  s.strategy.dtype = spec::Dtype::kFp8;
  s.strategy.micro_batch = micro_batch;
  s.strategy.global_batch = micro_batch;
  s.strategy.seq_len = 8192;
  return spec::complete_and_validate(s);
}

// GPT-3 175B as Narayanan's §5.1 ran it: TP 8 in a DGX A100, 8 stages, no sequence parallelism.
spec::Scenario megatron_pipeline(bool scatter_gather, bool sp) {
  spec::Scenario s;
  s.model = spec::model_preset("gpt3-175b");
  s.cluster = spec::cluster_preset("dgx-a100-80g");
  s.gpus = 64;
  s.strategy.tp = 8;
  s.strategy.pp = 8;
  s.strategy.global_batch = 8;
  s.strategy.seq_len = 2048;
  s.strategy.sequence_parallel = sp;
  s.strategy.pp_scatter_gather = scatter_gather;
  return spec::complete_and_validate(s);
}

TEST(PipelineTransfers, ScatterGatherSendsAnEighthOverTheNicsAndGathersTheRestOverNvlink) {
  // Megatron-LM 2021: each of the 8 TP ranks sends 1/8 of the 2048 x 12288 boundary tensor, and
  // the receiving stage all-gathers the pieces over NVLink, much faster than the NIC would carry
  // the whole tensor.
  const spec::Scenario whole = megatron_pipeline(false, false),
                       split = megatron_pipeline(true, false);
  EXPECT_EQ(pp_gather_s(whole), 0);
  const spec::Scenario sp = megatron_pipeline(false, true);
  EXPECT_DOUBLE_EQ(pp_transfer_s(split), pp_transfer_s(sp));
  EXPECT_LT(pp_transfer_s(split), pp_transfer_s(whole) / 4);
  const double boundary = 2048.0 * 12288 * 2;
  EXPECT_DOUBLE_EQ(pp_gather_s(split),
                   cost::collective_time_s(cost::CollectiveKind::kAllGather, boundary,
                                           cost::GroupLayout{8, 1}, split.cluster));
  EXPECT_LT(pp_transfer_s(split) + pp_gather_s(split), pp_transfer_s(whole) / 2);
  // Sequence parallelism splits the tensor already; nothing is gathered.
  EXPECT_EQ(pp_gather_s(megatron_pipeline(true, true)), 0);
}

TEST(TiedEmbeddings, TheFirstAndLastStagesAllReduceTheHeadCopysGradientAcrossTheNodesBetweenThem) {
  // GPT-3 175B, TP 8 x PP 8 on 64 A100s: stage 0 is GPUs 0-7 and stage 7 GPUs 56-63, so each TP
  // rank all-reduces its 1/8 of the word embedding's gradient with its peer 56 GPUs away.
  spec::Scenario s = megatron_pipeline(false, false);
  const double copy = 51200.0 * 12288 / 8;
  EXPECT_DOUBLE_EQ(tied_embedding_copy_params(s.model, s.strategy), copy);
  EXPECT_DOUBLE_EQ(tied_embedding_sync_s(s),
                   cost::collective_time_s(cost::CollectiveKind::kAllReduce, 2 * copy,
                                           cost::GroupLayout{2, 56}, s.cluster));
  EXPECT_GT(tied_embedding_sync_s(s), 0);

  spec::Scenario untied = s;
  untied.model.tied_embeddings = false;
  EXPECT_EQ(tied_embedding_copy_params(untied.model, untied.strategy), 0);
  EXPECT_EQ(tied_embedding_sync_s(untied), 0);
  spec::Scenario one_stage = s;
  one_stage.strategy.pp = 1;
  one_stage.strategy.dp = 0;
  one_stage = spec::complete_and_validate(one_stage);
  EXPECT_EQ(tied_embedding_sync_s(one_stage), 0);
}

TEST(TpCollectives, GathersInFrontOfFp8GemmsMoveOneByteAnElementAndScattersStayAtActivationPrecision) {
  using cost::CollectiveKind;
  // Twice the tokens in FP8 are the bytes of the tokens in BF16.
  EXPECT_DOUBLE_EQ(tp_collective_s(fp8_tp8(2), CollectiveKind::kAllGather, true),
                   tp_collective_s(fp8_tp8(1), CollectiveKind::kAllGather, false));
  const spec::Scenario s = fp8_tp8(1);
  EXPECT_DOUBLE_EQ(tp_collective_s(s, CollectiveKind::kReduceScatter, true),
                   tp_collective_s(s, CollectiveKind::kReduceScatter, false));
}

TEST(TpCollectives, OnlyTheLinearLayersAtBlockEdgesThatRunInFp8GatherFp8) {
  const spec::Scenario s = fp8_tp8(1);
  for (const Op& op : layer_ops(s, false)) {
    if (op.tp_edge != BlockEdge::kNone) {
      EXPECT_TRUE(fp8_gemm(op, s)) << op.name;
    }
  }
  spec::Scenario bf16 = s;
  bf16.strategy.dtype = spec::Dtype::kBf16;
  for (const Op& op : layer_ops(bf16, false)) EXPECT_FALSE(fp8_gemm(op, bf16)) << op.name;
}

// Both shares priced beside NVLink collectives, which hold 24 SMs each (the A100 preset's
// collective_sms) and take no HBM bandwidth.
constexpr Overlap kSmsOnly{{cost::Shares::kBesideTwo, 24}, 0};

TEST(SmShare, GemmWhoseTilesFitTheSmsACollectiveLeavesRunsAtFullSpeedBesideIt) {
  const spec::Scenario s = a100();
  ASSERT_EQ(s.cluster.gpu.sm_count - s.cluster.gpu.collective_sms, 84);
  const Op op = gemm_of_tiles(84);
  EXPECT_DOUBLE_EQ(op_times(op, s, kSmsOnly).beside.fwd, op_times(op, s, kSmsOnly).whole.fwd);
}

TEST(SmShare, GemmOfOneFullWaveTakesTwoWavesBesideACollective) {
  const spec::Scenario s = a100();
  const double overhead = s.cluster.gpu.kernel_overhead_s;
  const Op op = gemm_of_tiles(108);
  const double alone = op_times(op, s, kSmsOnly).whole.fwd - overhead;
  EXPECT_NEAR(op_times(op, s, kSmsOnly).beside.fwd - overhead, 2 * alone, 1e-12);
}

TEST(SmShare, AGemmOfTooFewTilesSplitsKToFillTheSmsAndSumsItsPartials) {
  const spec::Scenario s = a100();
  const spec::GpuSpec& gpu = s.cluster.gpu;
  // One 128 x 256 output tile, k = 65536: split 16 ways (the most) it is 16 tiles of k = 4096,
  // one wave, plus 16 fp32 partial tiles written and read back.
  const Op one_tile{.name = "gemm", .kind = OpKind::kGemm, .m = 128, .n = 256, .k = 65536};
  const double per_sm = gpu.peak_bf16_flops * gpu.matmul_efficiency * cost::clock_factor(gpu) / gpu.sm_count;
  const double partials = 8.0 * 16 * 128 * 256 / (gpu.hbm_bandwidth_Bps * gpu.memory_efficiency);
  EXPECT_NEAR(op_times(one_tile, s, kSmsOnly).whole.fwd,
              2.0 * 128 * 256 * 4096 / per_sm + gpu.kernel_overhead_s + partials, 1e-12);
}

TEST(SmShare, EachCollectiveHoldsItsOwnSmsSoTwoLeaveSixtyOfAnA100s108) {
  const spec::Scenario s = a100();
  EXPECT_DOUBLE_EQ(op_times(gemm_of_tiles(60), s, kSmsOnly).beside_two.fwd, op_times(gemm_of_tiles(60), s, kSmsOnly).whole.fwd);
  const double overhead = s.cluster.gpu.kernel_overhead_s;
  const OpTimes t = op_times(gemm_of_tiles(61), s, kSmsOnly);
  EXPECT_NEAR(t.beside_two.fwd - overhead, 2 * (t.whole.fwd - overhead), 1e-12);
  EXPECT_DOUBLE_EQ(t.beside.fwd, t.whole.fwd);
}

TEST(SmShare, AttentionRunsAtTheRateOfTheSmsLeftAndMemoryBoundKernelsAreNotSlowedByTheSms) {
  const spec::Scenario s = a100();
  const double overhead = s.cluster.gpu.kernel_overhead_s;
  const Op attention{.name = "attention", .kind = OpKind::kAttention, .flops = 1e13, .bytes = 1e6, .n = 8192};
  const double alone = op_times(attention, s, kSmsOnly).whole.fwd - overhead;
  EXPECT_NEAR(op_times(attention, s, kSmsOnly).beside.fwd - overhead, alone * 108 / 84, 1e-12);
  const Op norm{.name = "norm", .kind = OpKind::kMemory, .bytes = 1e9};
  EXPECT_DOUBLE_EQ(op_times(norm, s, kSmsOnly).beside.fwd, op_times(norm, s, kSmsOnly).whole.fwd);
}

// Llama 2 7B on DGX A100 nodes, 8 sequences of 4K, data parallelism over what TP leaves.
spec::Scenario llama2_7b_on_a100(int gpus, int tp) {
  spec::Scenario s = a100();
  s.model = spec::model_preset("llama2-7b");
  s.gpus = gpus;
  s.strategy.tp = tp;
  s.strategy.micro_batch = 1;
  s.strategy.global_batch = 8;
  s.strategy.seq_len = 4096;
  return spec::complete_and_validate(s);
}

TEST(HbmShare, MemoryBoundKernelsBesideAnNvlinkCollectiveStreamAtTheHbmBandwidthItLeaves) {
  // Data parallelism over one DGX A100's 8 GPUs: the ring's bus bandwidth is NVLink's achieved
  // 273.851 GB/s, and a collective reads what it sends and writes what it receives at that rate.
  const spec::Scenario s = llama2_7b_on_a100(8, 1);
  const Overlap overlap = layer_overlap(s, cost::Shares::kBesideTwo);
  EXPECT_NEAR(overlap.hbm_taken_Bps, 2 * 273.851e9, 1e3);
  // A100 80GB: 2.039 TB/s at STREAM's 86.3% leaves 1.759657 - 0.547702 TB/s to the kernel.
  const Op norm{.name = "norm", .kind = OpKind::kMemory, .bytes = 1e9, .bwd_bytes = 2};
  const OpTimes t = op_times(norm, s, overlap);
  const double overhead = s.cluster.gpu.kernel_overhead_s;
  EXPECT_NEAR(t.whole.fwd - overhead, 1e9 / 1.759657e12, 1e-9);
  EXPECT_NEAR(t.beside.fwd - overhead, 1e9 / 1.211955e12, 1e-9);
  EXPECT_NEAR(t.beside.bwd_input - overhead, 2e9 / 1.211955e12, 1e-9);
  // Two collectives at once share the link, and so move what one does alone.
  EXPECT_DOUBLE_EQ(t.beside_two.fwd, t.beside.fwd);
  // Where nothing overlaps (the head and embedding), memory-bound kernels run alone.
  EXPECT_DOUBLE_EQ(op_times(norm, s, layer_overlap(s, cost::Shares::kWhole)).beside.fwd, t.whole.fwd);
}

TEST(SmShare, KernelsBesideAGradientGroupWithOneGpuPerNodeLoseTheTwoSmsOfItsNicRings) {
  // Tensor parallelism fills each node, so each data-parallel group has one GPU per node.
  const spec::Scenario s = llama2_7b_on_a100(16, 8);
  const Overlap overlap = layer_overlap(s, cost::Shares::kBesideTwo);
  EXPECT_EQ(overlap.beside.collective_sms, 2);
  // 100 tiles: one wave on the A100's 108 SMs, still one on the 106 the rings through its
  // 200 Gbit/s NIC leave, two on the 84 NVLink rings leave.
  const Op fits = gemm_of_tiles(100);
  EXPECT_DOUBLE_EQ(op_times(fits, s, overlap).beside.fwd, op_times(fits, s, overlap).whole.fwd);
  EXPECT_GT(op_times(fits, s, kSmsOnly).beside.fwd, op_times(fits, s, kSmsOnly).whole.fwd);
}

TEST(HbmShare, AKernelAskedToShareMoreThanTheHbmDeliversKeepsHalfOfIt) {
  const spec::GpuSpec gpu = spec::cluster_preset("dgx-a100-80g").gpu;
  const double achievable = gpu.hbm_bandwidth_Bps * gpu.memory_efficiency;
  EXPECT_DOUBLE_EQ(cost::memory_time_s(1e9, gpu, 3 * achievable), 2e9 / achievable + gpu.kernel_overhead_s);
  EXPECT_DOUBLE_EQ(cost::memory_time_s(1e9, gpu, 0), 1e9 / achievable + gpu.kernel_overhead_s);
}

// Llama 3.1 8B data-parallel over a DGX H100's 8 GPUs, gradients reduced in `grad`.
spec::Scenario data_parallel_llama(int zero_stage, spec::Dtype grad, spec::OptimizerStep step) {
  spec::Scenario s;
  s.model = spec::model_preset("llama3.1-8b");
  s.cluster = spec::cluster_preset("dgx-h100");
  s.gpus = 8;
  s.strategy.zero_stage = zero_stage;
  s.strategy.global_batch = 8;
  s.strategy.seq_len = 4096;
  s.strategy.grad_reduce_dtype = grad;
  s.strategy.optimizer_step = step;
  return spec::complete_and_validate(s);
}

// The bytes per parameter an optimizer step streams, read back from its time at the bandwidth
// the GPU's multi-tensor kernels reach.
double optimizer_bytes_per_param(const spec::Scenario& s) {
  constexpr double kParams = 1e9;
  const spec::GpuSpec& gpu = s.cluster.gpu;
  return (optimizer_s(s, kParams) - gpu.kernel_overhead_s) * gpu.hbm_bandwidth_Bps *
         gpu.optimizer_memory_efficiency / kParams;
}

constexpr auto kMaster = spec::OptimizerStep::kMasterWeights;
constexpr auto kInPlace = spec::OptimizerStep::kInPlace;

TEST(Optimizer, MasterWeightsStreamTheNormAdamTheMasterCopyAndTheZeroingAndCast16BitGradients) {
  // Norm 4, Adam 28, master copy 4 + 2, zeroing the gradient buffer 4; BF16 gradients are also
  // cast to FP32 main gradients (2 + 4) and their buffer is zeroed at 2 bytes.
  EXPECT_NEAR(optimizer_bytes_per_param(data_parallel_llama(0, spec::Dtype::kFp32, kMaster)), 42,
              1e-6);
  EXPECT_NEAR(optimizer_bytes_per_param(data_parallel_llama(0, spec::Dtype::kBf16, kMaster)), 46,
              1e-6);
}

TEST(Optimizer, ItsMultiTensorKernelsStreamAtTheGpusMeasuredRateOrElseAtACopysRate) {
  // The H100's 0.763 (data/gpus/h100-sxm.yaml); a GPU without the key streams them at its
  // memory_efficiency, as every other kernel.
  spec::Scenario s = data_parallel_llama(0, spec::Dtype::kFp32, kInPlace);
  const spec::GpuSpec& gpu = s.cluster.gpu;
  EXPECT_DOUBLE_EQ(gpu.optimizer_memory_efficiency, 0.763);
  const double measured_rate = optimizer_s(s, 1e9);
  s.cluster.gpu.optimizer_memory_efficiency = 0;
  const double copy_rate = optimizer_s(s, 1e9);
  EXPECT_NEAR((measured_rate - gpu.kernel_overhead_s) / (copy_rate - gpu.kernel_overhead_s),
              gpu.memory_efficiency / 0.763, 1e-9);
}

TEST(Optimizer, InPlaceAlwaysScalesTheGradientsAndNeitherCopiesNorZeroes) {
  // Norm 4, clip_grad_norm_'s multiply 4 + 4, Adam 28.
  EXPECT_NEAR(optimizer_bytes_per_param(data_parallel_llama(0, spec::Dtype::kFp32, kInPlace)), 40,
              1e-6);
}

TEST(Optimizer, ComposersPerTensorLoopStreamsEightyBytesForAdamAtACopysRate) {
  // DecoupledAdamW's eight unfused kernels, 80 bytes, beside the in-place norm 4 and multiply 8;
  // plain elementwise kernels stream at the GPU's copy rate, not its multi-tensor rate.
  spec::Scenario s =
      data_parallel_llama(0, spec::Dtype::kFp32, spec::OptimizerStep::kInPlaceLoop);
  const spec::GpuSpec& gpu = s.cluster.gpu;
  ASSERT_NE(gpu.optimizer_memory_efficiency, gpu.memory_efficiency);
  EXPECT_NEAR(optimizer_bytes_per_param(s) * gpu.memory_efficiency /
                  gpu.optimizer_memory_efficiency,
              92, 1e-6);
}

TEST(Optimizer, Fp16TrainingAddsTheUnscalePassOverTheClippedGradients) {
  for (const spec::OptimizerStep step : {kMaster, kInPlace}) {
    spec::Scenario bf16 = data_parallel_llama(0, spec::Dtype::kFp32, step);
    spec::Scenario fp16 = bf16;
    fp16.strategy.dtype = spec::Dtype::kFp16;
    EXPECT_NEAR(optimizer_bytes_per_param(fp16) - optimizer_bytes_per_param(bf16), 8, 1e-6);
  }
}

TEST(Optimizer, UnderZero1MasterWeightsZeroTheWholeBufferAndPlainPyTorchClipsEveryGradient) {
  // Megatron's distributed optimizer clips its shard's main gradients but zeroes the whole BF16
  // buffer: 46 - 2 = 44 over 8, plus 2. PyTorch's ZeroRedundancyOptimizer updates an eighth but
  // clip_grad_norm_ reads and scales all of DDP's gradients: 28 over 8, plus 12.
  EXPECT_NEAR(optimizer_bytes_per_param(data_parallel_llama(1, spec::Dtype::kBf16, kMaster)),
              44.0 / 8 + 2, 1e-6);
  EXPECT_NEAR(optimizer_bytes_per_param(data_parallel_llama(1, spec::Dtype::kFp32, kInPlace)),
              28.0 / 8 + 12, 1e-6);
  // Under FSDP every pass runs on the rank's shard.
  EXPECT_NEAR(optimizer_bytes_per_param(data_parallel_llama(3, spec::Dtype::kFp32, kInPlace)),
              40.0 / 8, 1e-6);
}

// Llama 3.1 8B on a DGX H100, TP 8, four micro-batches of 4,096 tokens a step.
spec::Scenario accumulating_llama(int zero_stage, spec::Dtype grad,
                                  spec::GradAccumulation accumulation) {
  spec::Scenario s;
  s.model = spec::model_preset("llama3.1-8b");
  s.cluster = spec::cluster_preset("dgx-h100");
  s.gpus = 8;
  s.strategy.tp = zero_stage >= 2 ? 1 : 8;  // ZeRO >= 2 over 8 data-parallel ranks
  s.strategy.zero_stage = zero_stage;
  s.strategy.global_batch = zero_stage >= 2 ? 32 : 4;
  s.strategy.seq_len = 4096;
  s.strategy.grad_reduce_dtype = grad;
  s.strategy.grad_accumulation = accumulation;
  return spec::complete_and_validate(s);
}

// A layer's MLP up projection.
Op mlp_up(const spec::Scenario& s) {
  for (const Op& op : layer_ops(s, false)) {
    if (std::string_view(op.name) == "mlp_up") return op;
  }
  ADD_FAILURE() << "no mlp_up";
  return {};
}

// Its times alone: the weight-gradient pass and the host's.
OpTime mlp_up_times(const spec::Scenario& s) {
  return op_times(mlp_up(s), s, layer_overlap(s, cost::Shares::kWhole)).whole;
}

double mlp_up_weight_elements(const spec::Scenario& s) {
  const Op op = mlp_up(s);
  return op.k * op.n * op.instances;
}

constexpr auto kSeparate = spec::GradAccumulation::kSeparateKernel;
constexpr auto kFused = spec::GradAccumulation::kFusedIntoGemm;

TEST(GradAccumulation,
     ASeparateKernelReadsTheNewGradientAndTheAccumulatorAndWritesItAfterTheFirstMicroBatch) {
  const spec::Scenario fused = accumulating_llama(1, spec::Dtype::kBf16, kFused);
  ASSERT_EQ(fused.strategy.micro_batches(), 4);
  const double elements = mlp_up_weight_elements(fused);
  const spec::GpuSpec& gpu = fused.cluster.gpu;
  // Three of four micro-batches each add a BF16 gradient into a BF16 accumulator: 2 + 2 + 2 bytes.
  EXPECT_NEAR(mlp_up_times(accumulating_llama(1, spec::Dtype::kBf16, kSeparate)).bwd_weight -
                  mlp_up_times(fused).bwd_weight,
              0.75 * cost::memory_time_s(6 * elements, gpu), 1e-12);
  // Into an FP32 accumulator: 2 + 4 + 4.
  EXPECT_NEAR(mlp_up_times(accumulating_llama(1, spec::Dtype::kFp32, kSeparate)).bwd_weight -
                  mlp_up_times(accumulating_llama(1, spec::Dtype::kFp32, kFused)).bwd_weight,
              0.75 * cost::memory_time_s(10 * elements, gpu), 1e-12);
  // The fused GEMM launches no accumulation kernel; the separate one launches one per weight.
  EXPECT_NEAR(mlp_up_times(accumulating_llama(1, spec::Dtype::kBf16, kSeparate)).host_bwd_weight -
                  mlp_up_times(fused).host_bwd_weight,
              0.75 * fused.strategy.host_dispatch_s, 1e-12);
}

TEST(GradAccumulation, UnderZero3EachRankAddsOnlyItsShardOfTheReduceScatteredGradient) {
  const spec::Scenario fused = accumulating_llama(3, spec::Dtype::kBf16, kFused);
  ASSERT_EQ(fused.strategy.micro_batches(), 4);
  const double shard = mlp_up_weight_elements(fused) / 8;
  EXPECT_NEAR(mlp_up_times(accumulating_llama(3, spec::Dtype::kBf16, kSeparate)).bwd_weight -
                  mlp_up_times(fused).bwd_weight,
              0.75 * cost::memory_time_s(6 * shard, fused.cluster.gpu), 1e-12);
  // ZeRO-2 reduces once a step, after the last micro-batch: the whole gradient accumulates.
  const spec::Scenario zero2 = accumulating_llama(2, spec::Dtype::kBf16, kSeparate);
  EXPECT_NEAR(mlp_up_times(zero2).bwd_weight -
                  mlp_up_times(accumulating_llama(2, spec::Dtype::kBf16, kFused)).bwd_weight,
              0.75 * cost::memory_time_s(6 * mlp_up_weight_elements(zero2), zero2.cluster.gpu),
              1e-12);
}

TEST(BiasGradient, AKernelOfItsOwnReadsTheOutputGradientUnlessTheGemmEpilogueSumsIt) {
  // GPT-3's MLP up projection has a bias: at TP 8, 2,048 tokens by 6,144 outputs per GPU.
  const spec::Scenario separate = megatron_pipeline(false, false);
  spec::Scenario s = separate;
  s.strategy.bias_grad_in_gemm = true;
  const spec::Scenario in_gemm = spec::complete_and_validate(s);
  const Op up = mlp_up(separate);
  ASSERT_EQ(up.biases, 1);
  const double output_gradient = 2 * up.m * up.n;  // BF16
  EXPECT_NEAR(mlp_up_times(separate).bwd_weight - mlp_up_times(in_gemm).bwd_weight,
              cost::memory_time_s(output_gradient, separate.cluster.gpu), 1e-12);
  EXPECT_NEAR(mlp_up_times(separate).host_bwd_weight - mlp_up_times(in_gemm).host_bwd_weight,
              separate.strategy.host_dispatch_s, 1e-12);
}

TEST(BiasAddKernel, ReadsAndWritesTheQkvOutputInTheForwardOnly) {
  // Megatron's QKV projection adds its bias after the GEMM (matmul, then + bias); the MLP's
  // linears hand theirs to bias_gelu and bias_dropout_add, so they gain nothing.
  const spec::Scenario fused = megatron_pipeline(false, false);
  spec::Scenario s = fused;
  s.strategy.bias_add_kernel = true;
  const spec::Scenario separate = spec::complete_and_validate(s);
  Op qkv;
  for (const Op& op : layer_ops(fused, false)) {
    if (std::string_view(op.name) == "qkv_projection") qkv = op;
  }
  ASSERT_TRUE(qkv.linear_adds_bias);
  const auto times = [&](const spec::Scenario& sc) {
    return op_times(qkv, sc, layer_overlap(sc, cost::Shares::kWhole)).whole;
  };
  const double output = 2 * qkv.m * qkv.n;  // BF16, read and written once
  EXPECT_NEAR(times(separate).fwd - times(fused).fwd, cost::memory_time_s(2 * output, fused.cluster.gpu), 1e-12);
  EXPECT_DOUBLE_EQ(times(separate).bwd_input, times(fused).bwd_input);
  EXPECT_DOUBLE_EQ(mlp_up_times(separate).fwd, mlp_up_times(fused).fwd);
}

}  // namespace
}  // namespace stepcast::workload
