#include "workload/model_size.h"

#include <gtest/gtest.h>

#include "spec/presets.h"
#include "workload/operators.h"

namespace stepcast::workload {
namespace {

spec::ModelSpec gpt(int layers, int hidden, int heads) {
  spec::ModelSpec m;
  m.name = "gpt";
  m.layers = layers;
  m.hidden = hidden;
  m.ffn = 4 * hidden;
  m.heads = m.kv_heads = heads;
  m.vocab = 51200;
  m.max_seq = 2048;
  m.bias = true;
  m.tied_embeddings = true;
  return m;
}

TEST(ParamCounts, MatchesNarayananParameterFormulaForGpt) {
  // Narayanan et al. 2021 §5.1: P = 12 l h^2 (1 + 13/(12h) + (V + s)/(12 l h)).
  const spec::ModelSpec m = gpt(96, 12288, 96);
  const double l = 96, h = 12288, V = 51200, s = 2048;
  const double expected = 12 * l * h * h * (1 + 13 / (12 * h) + (V + s) / (12 * l * h));
  // The formula leaves out the final layer norm (2h).
  EXPECT_DOUBLE_EQ(param_counts(m).total, expected + 2 * h);
}

TEST(ParamCounts, MatchesLlama31_8bPublishedCount) {
  // Hugging Face reports 8,030,261,248 parameters for Llama-3.1-8B.
  EXPECT_DOUBLE_EQ(param_counts(spec::model_preset("llama3.1-8b")).total, 8030261248.0);
}

TEST(ParamCounts, QueryAndKeyNormsAddTwoHeadDimScalesPerLayer) {
  spec::ModelSpec m = spec::model_preset("llama3.1-8b");
  const double without = param_counts(m).total;
  m.qk_norm = true;
  EXPECT_DOUBLE_EQ(param_counts(m).total - without, 2.0 * m.effective_head_dim() * m.layers);
}

// DeepSeek-V3 (arXiv 2412.19437): "671B total parameters, of which 37B are activated for each
// token", the 14B multi-token-prediction module not counted.
TEST(ParamCounts, DeepSeekV3LatentAttentionGivesItsPublishedTotalAndActivatedCounts) {
  const spec::ModelSpec m = spec::model_preset("deepseek-v3");
  const ParamCounts p = param_counts(m);
  // The attention of one layer from its config's shapes: q down 7168 x 1536 and its norm, q up
  // 1536 x 128 x 192, kv down 7168 x (512 + 64) and its norm, kv up 512 x 128 x (128 + 128),
  // output 128 x 128 x 7168.
  const double attention = 7168.0 * 1536 + 1536 + 1536.0 * 128 * 192 + 7168.0 * 576 + 512 +
                           512.0 * 128 * 256 + 128.0 * 128 * 7168;
  EXPECT_DOUBLE_EQ(p.per_layer_dense, attention + 2 * 7168.0 + 3 * 7168.0 * 18432);
  EXPECT_NEAR(p.total, 671e9, 0.5e9);
  EXPECT_NEAR(p.active, 37e9, 0.5e9);
}

TEST(ModelFlops, LatentAttentionScoresAndValuesUseTheirOwnHeadWidths) {
  const spec::ModelSpec m = spec::model_preset("deepseek-v3");
  // QK^T over 192-wide heads and PV over 128-wide values, forward and backward: 6 FLOPs per
  // (query, key, dim), no causal skipping under the MFU convention.
  EXPECT_DOUBLE_EQ(attention_flops_per_token(m, 4096), 6.0 * 61 * 128 * (192 + 128) * 4096);
}

TEST(ModelFlops, SlidingWindowLayersCountTheirWindowInsteadOfTheSequence) {
  spec::ModelSpec m = spec::model_preset("llama3.1-8b");
  const double full = attention_flops_per_token(m, 8192);
  m.attention_window = 4096;
  m.local_layers = 16;  // half the 32 layers
  EXPECT_DOUBLE_EQ(attention_flops_per_token(m, 8192),
                   full * (16 * 8192.0 + 16 * 4096.0) / (32 * 8192.0));
  EXPECT_DOUBLE_EQ(attention_flops_per_token(m, 2048),
                   attention_flops_per_token(spec::model_preset("llama3.1-8b"), 2048));
}

TEST(ParamCounts, SandwichNormsAddTwoNormsPerLayer) {
  spec::ModelSpec m = spec::model_preset("llama3.1-8b");
  const double without = param_counts(m).total;
  m.sandwich_norm = true;
  EXPECT_DOUBLE_EQ(param_counts(m).total - without, 2.0 * m.hidden * m.layers);
}

// Parameter counts their makers publish: Qwen3-32B "32.8B" (model card); Gemma 2 9B 9.24 B
// (Hugging Face's count of google/gemma-2-9b); gpt-oss-120b 116.83 B total and 5.13 B active
// per token (OpenAI's model card).
TEST(ParamCounts, NewArchitecturePresetsMatchTheirPublishedCounts) {
  EXPECT_NEAR(param_counts(spec::model_preset("qwen3-32b")).total, 32.8e9, 0.05e9);
  EXPECT_NEAR(param_counts(spec::model_preset("gemma-2-9b")).total, 9.24e9, 0.01e9);
  const ParamCounts oss = param_counts(spec::model_preset("gpt-oss-120b"));
  EXPECT_NEAR(oss.total, 116.83e9, 0.01e9);
  EXPECT_NEAR(oss.active, 5.13e9, 0.01e9);
}

// Llama 4 (Meta's model cards): Maverick 400 B total, Scout 109 B, both 17 B active. Scout's 109 B
// holds its vision tower too, which the preset leaves out; "active" there counts the input
// embedding, which the MFU convention's N does not.
TEST(ParamCounts, Llama4PresetsMatchMetasCounts) {
  const ParamCounts maverick = param_counts(spec::model_preset("llama4-maverick"));
  const ParamCounts scout = param_counts(spec::model_preset("llama4-scout"));
  EXPECT_NEAR(maverick.total, 400e9, 0.01 * 400e9);
  EXPECT_NEAR(scout.total, 109e9, 0.02 * 109e9);
  EXPECT_NEAR(maverick.active + maverick.embedding, 17e9, 0.3e9);
  EXPECT_NEAR(scout.active + scout.embedding, 17e9, 0.3e9);
}

TEST(ParamCounts, InterleavedMoeCountsEachKindOfLayerOnce) {
  spec::ModelSpec m = spec::model_preset("mixtral-8x7b");  // 32 layers, every one MoE
  const ParamCounts all = param_counts(m);
  m.moe.dense_layers = 1;
  m.moe.layer_interval = 2;  // layers 1, 3, ..., 31: 16 MoE layers, 16 dense
  EXPECT_EQ(m.moe_layers(), 16);
  const ParamCounts half = param_counts(m);
  EXPECT_DOUBLE_EQ(half.total - half.embedding - half.output - half.final_norm,
                   16 * all.per_layer_moe + 16 * all.per_layer_dense);
}

TEST(ModelFlops, IsSixNPlusAttentionTerm) {
  const spec::ModelSpec m = gpt(24, 2048, 16);
  const ParamCounts p = param_counts(m);
  const double positions = 2048.0 * 2048;  // learned positions are a lookup, not a matmul
  const double n = p.total - positions;
  EXPECT_DOUBLE_EQ(model_flops_per_token(p, m, 2048), 6 * n + 12.0 * 24 * 2048 * 2048);
}

TEST(LayerOps, ForwardFlopsAreTwiceLinearParamsPerTokenPlusCausalAttention) {
  spec::Scenario s;
  s.model = gpt(24, 2048, 16);
  s.strategy.tp = 2;
  s.strategy.micro_batch = 2;
  s.strategy.seq_len = 1024;
  s.strategy.dp = 1;
  const LayerOps ops = layer_ops(s, false);
  double linear = 0, attention = 0;
  for (const Op& op : ops) (op.kind == OpKind::kAttention ? attention : linear) += op.flops;
  const double tokens = 2 * 1024, h = 2048;
  EXPECT_DOUBLE_EQ(linear, 2 * tokens * 12 * h * h / 2);
  // QK^T and PV over the causal half: 4 * tokens * (seq / 2) * hidden, split over TP.
  EXPECT_DOUBLE_EQ(attention, 4 * tokens * (1024 / 2.0) * h / 2);
}

}  // namespace
TEST(LayerParams, AnAverageLayerMixesTheDenseAndMoeLayersInTheModelsProportion) {
  // Llama 4 Maverick: every second layer MoE (128 routed experts and a shared one), split by EP.
  const spec::ModelSpec m = spec::model_preset("llama4-maverick");
  spec::Strategy st;
  st.tp = 8;
  st.ep = 8;
  const ParamCounts p = param_counts(m);
  const double dense = layer_params_per_gpu(p, st, false), moe = layer_params_per_gpu(p, st, true);
  EXPECT_DOUBLE_EQ(dense, p.per_layer_dense / 8);
  EXPECT_DOUBLE_EQ(moe, (p.per_layer_dense + (p.per_layer_moe - p.per_layer_dense) / 8) / 8);
  const double share = m.moe_layer_fraction();
  EXPECT_DOUBLE_EQ(layer_params_per_gpu(p, m, st), (1 - share) * dense + share * moe);
  EXPECT_GT(moe, 5 * dense);  // 289 M against 39 M on each GPU
}

}  // namespace stepcast::workload
