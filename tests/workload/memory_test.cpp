#include "workload/memory.h"

#include <gtest/gtest.h>

#include <utility>

#include "spec/presets.h"
#include "workload/model_size.h"

namespace stepcast::workload {
namespace {

// One sequence per GPU, no model parallelism.
spec::Scenario scenario(const char* model, const char* cluster, int gpus, int seq, int zero, spec::Recompute recompute) {
  spec::Scenario s;
  s.model = spec::model_preset(model);
  s.cluster = spec::cluster_preset(cluster);
  s.gpus = gpus;
  s.strategy.zero_stage = zero;
  s.strategy.micro_batch = 1;
  s.strategy.global_batch = gpus;
  s.strategy.seq_len = seq;
  s.strategy.recompute = recompute;
  return spec::complete_and_validate(s);
}

spec::Scenario llama8b(spec::Recompute recompute) { return scenario("llama3.1-8b", "dgx-h100", 8, 4096, 0, recompute); }

TEST(Memory, OpLevelCheckpointingKeepsTheBlockInputTheSavedMatmulOutputsAndTheAttentionOutput) {
  // torchtitan's policy on a Llama 3.1 8B block, per token in BF16: the block input (h = 4096),
  // wq (4096) and wv (8 KV heads x 128 = 1024) of the QKV matmuls, w1 of the fused w1|w3
  // (14336), w2 (4096) and the attention output (4096); wk, wo and w3 are recomputed. Plus the
  // attention's FP32 logsumexp per head (32).
  const double tokens = 4096;
  const double expected = tokens * (2 * (4096 + 4096 + 1024 + 14336 + 4096 + 4096) + 4 * 32);
  const spec::Scenario s = llama8b(spec::Recompute::kOp);
  EXPECT_DOUBLE_EQ(layer_activation_bytes(s, spec::Recompute::kOp), expected);
  EXPECT_LT(expected, 0.5 * layer_activation_bytes(s, spec::Recompute::kNone));
}

TEST(Memory, RecomputingABlockHoldsItsFullActivationsOnceMore) {
  const spec::Scenario op = llama8b(spec::Recompute::kOp);
  const double stored = 32 * layer_activation_bytes(op, spec::Recompute::kOp);
  EXPECT_DOUBLE_EQ(memory_per_gpu(op).activations_bytes, stored + layer_activation_bytes(op, spec::Recompute::kNone));
}

TEST(Memory, DeepSpeedZero3HoldsItsLiveParameterCapPlusTheTensorBeingGathered) {
  // FSDP holds two gathered layers of GPT-3 175B (2 x 1.81e9 parameters) and its root unit;
  // DeepSpeed 0.3.x at most stage3_max_live_parameters (1e9) plus its largest tensor, an MLP
  // weight of 4 h^2.
  spec::Scenario s = scenario("gpt3-175b", "dgx-a100-80g", 64, 2048, 3, spec::Recompute::kFull);
  const double fsdp = memory_per_gpu(s).weights_bytes;
  s.strategy.sharded_collectives = spec::ShardedCollectives::kPerTensorBlocking;
  const double deepspeed = memory_per_gpu(s).weights_bytes;
  const double h = s.model.hidden, layer = 12 * h * h + 13 * h;  // Narayanan §5.1: 12 h^2 + 13 h
  const ParamCounts p = param_counts(s.model);
  const double root = embedding_params_per_gpu(p, s.strategy) + head_params_per_gpu(p, s.model, s.strategy);
  EXPECT_NEAR(fsdp - deepspeed, 2 * (2 * layer + root) - 2 * (1e9 + 4 * h * h), 1e3);
}

TEST(Memory, Zero3HoldsTheTwoConsecutiveLayersWithTheMostParametersGathered) {
  // Llama 4 Maverick alternates dense and MoE layers: FSDP holds one of each gathered, not two
  // average layers; DeepSeek-V3's MoE layers run back to back: two MoE layers.
  const auto gathered = [](const char* model) {
    spec::Scenario s = scenario(model, "dgx-h100", 64, 4096, 3, spec::Recompute::kFull);
    const double sharded = s.strategy.dp * s.strategy.cp;
    const MemoryBreakdown mem = memory_per_gpu(s);
    const ParamCounts p = param_counts(s.model);
    const double root = embedding_params_per_gpu(p, s.strategy) + head_params_per_gpu(p, s.model, s.strategy);
    return std::pair{mem.weights_bytes / 2 - stage_params_per_gpu(p, s.model, s.strategy) / sharded - root, s};
  };
  const auto [maverick, ms] = gathered("llama4-maverick");
  const ParamCounts mp = param_counts(ms.model);
  EXPECT_NEAR(maverick, layer_params_per_gpu(mp, ms.strategy, false) + layer_params_per_gpu(mp, ms.strategy, true), 1);
  const auto [deepseek, ds] = gathered("deepseek-v3");
  EXPECT_NEAR(deepseek, 2 * layer_params_per_gpu(param_counts(ds.model), ds.strategy, true), 1);
}

TEST(Memory, Fsdp2HoldsThreeGatheredLayersInForwardAndOneOnAGroupOfOne) {
  // FSDP2 defers freeing a layer's gather output to the next layer's wait (AllGatherState): the
  // previous layer's output, the next layer's and the current layer's unsharded parameters. On one
  // GPU it gathers nothing and copies the shard into one layer's unsharded parameters at a time.
  spec::Scenario s = scenario("llama3.1-70b", "dgx-h100", 64, 8192, 3, spec::Recompute::kFull);
  const double fsdp1 = memory_per_gpu(s).weights_bytes;
  s.strategy.sharded_collectives = spec::ShardedCollectives::kPerParameter;
  const double fsdp2 = memory_per_gpu(s).weights_bytes;
  const double layer = layer_params_per_gpu(param_counts(s.model), s.strategy, false);
  EXPECT_NEAR(fsdp2 - fsdp1, 2 * layer, 1);

  spec::Scenario one = scenario("llama3.1-8b", "dgx-h100", 1, 8192, 3, spec::Recompute::kFull);
  const double two_units = memory_per_gpu(one).weights_bytes;
  one.strategy.sharded_collectives = spec::ShardedCollectives::kPerParameter;
  EXPECT_NEAR(two_units - memory_per_gpu(one).weights_bytes,
              2 * layer_params_per_gpu(param_counts(one.model), one.strategy, false), 1);
}

TEST(Memory, FsdpWhoseFp32ParametersAreTheMastersHoldsNoSixteenBitShard) {
  // Under FSDP's mixed precision the FP32 parameters are the optimizer's masters
  // (OptimizerStep::kInPlace): the shard is counted once, in the optimizer's 12 bytes, and 16-bit
  // weights exist only for the gathered layers. Megatron's and DeepSpeed's ZeRO-3 keep a 16-bit
  // shard beside the FP32 masters.
  spec::Scenario s = scenario("llama3.1-8b", "dgx-h100", 8, 4096, 3, spec::Recompute::kFull);
  const double beside_masters = memory_per_gpu(s).weights_bytes;
  s.strategy.optimizer_step = spec::OptimizerStep::kInPlace;
  const ParamCounts p = param_counts(s.model);
  EXPECT_NEAR(beside_masters - memory_per_gpu(s).weights_bytes, 2 * stage_params_per_gpu(p, s.model, s.strategy) / 8,
              1);
}

TEST(Memory, Zero3HoldsTheRootUnitUnshardedThroughThePeak) {
  // The root unit (embeddings, final norm, head) is gathered before the embedding's forward and
  // again before the head's backward, and resharded only after the head's forward and at the
  // backward's end: its whole parameters sit beside the layers' units at the peak. Not under
  // pipelining (no root unit) nor DeepSpeed 0.3.x (no FSDP wrapping).
  spec::Scenario s = scenario("llama3.1-8b", "dgx-h100", 8, 4096, 3, spec::Recompute::kFull);
  const ParamCounts p = param_counts(s.model);
  const double root = embedding_params_per_gpu(p, s.strategy) + head_params_per_gpu(p, s.model, s.strategy);
  const double expected = 2 * (stage_params_per_gpu(p, s.model, s.strategy) / 8 + root +
                               2 * layer_params_per_gpu(p, s.strategy, false));
  EXPECT_NEAR(memory_per_gpu(s).weights_bytes, expected, 1);
}

}  // namespace
}  // namespace stepcast::workload
