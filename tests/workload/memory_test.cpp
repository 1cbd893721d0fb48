#include "workload/memory.h"

#include <gtest/gtest.h>

#include "spec/presets.h"

namespace stepcast::workload {
namespace {

spec::Scenario llama8b(spec::Recompute recompute) {
  spec::Scenario s;
  s.model = spec::model_preset("llama3.1-8b");
  s.cluster = spec::cluster_preset("dgx-h100");
  s.gpus = 8;
  s.strategy.micro_batch = 1;
  s.strategy.global_batch = 8;
  s.strategy.seq_len = 4096;
  s.strategy.recompute = recompute;
  return spec::complete_and_validate(s);
}

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

}  // namespace
}  // namespace stepcast::workload
