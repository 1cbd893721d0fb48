#include "spec/hf_config.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "../error_text.h"
#include "core/error.h"

namespace stepcast::spec {
namespace {

// The published config.json files, verbatim (values as on the Hugging Face Hub).

// meta-llama/Llama-3.1-8B
constexpr const char* kLlama31_8B = R"({
  "architectures": [
    "LlamaForCausalLM"
  ],
  "attention_bias": false,
  "attention_dropout": 0.0,
  "bos_token_id": 128000,
  "eos_token_id": 128001,
  "hidden_act": "silu",
  "hidden_size": 4096,
  "initializer_range": 0.02,
  "intermediate_size": 14336,
  "max_position_embeddings": 131072,
  "mlp_bias": false,
  "model_type": "llama",
  "num_attention_heads": 32,
  "num_hidden_layers": 32,
  "num_key_value_heads": 8,
  "pretraining_tp": 1,
  "rms_norm_eps": 1e-05,
  "rope_scaling": {
    "factor": 8.0,
    "low_freq_factor": 1.0,
    "high_freq_factor": 4.0,
    "original_max_position_embeddings": 8192,
    "rope_type": "llama3"
  },
  "rope_theta": 500000.0,
  "tie_word_embeddings": false,
  "torch_dtype": "bfloat16",
  "transformers_version": "4.43.0.dev0",
  "use_cache": true,
  "vocab_size": 128256
}
)";

// mistralai/Mistral-7B-v0.1
constexpr const char* kMistral7B = R"({
  "architectures": [
    "MistralForCausalLM"
  ],
  "bos_token_id": 1,
  "eos_token_id": 2,
  "hidden_act": "silu",
  "hidden_size": 4096,
  "initializer_range": 0.02,
  "intermediate_size": 14336,
  "max_position_embeddings": 32768,
  "model_type": "mistral",
  "num_attention_heads": 32,
  "num_hidden_layers": 32,
  "num_key_value_heads": 8,
  "rms_norm_eps": 1e-05,
  "rope_theta": 10000.0,
  "sliding_window": 4096,
  "tie_word_embeddings": false,
  "torch_dtype": "bfloat16",
  "transformers_version": "4.34.0.dev0",
  "use_cache": true,
  "vocab_size": 32000
}
)";

// mistralai/Mixtral-8x7B-v0.1
constexpr const char* kMixtral8x7B = R"({
  "architectures": [
    "MixtralForCausalLM"
  ],
  "attention_dropout": 0.0,
  "bos_token_id": 1,
  "eos_token_id": 2,
  "hidden_act": "silu",
  "hidden_size": 4096,
  "initializer_range": 0.02,
  "intermediate_size": 14336,
  "max_position_embeddings": 32768,
  "model_type": "mixtral",
  "num_attention_heads": 32,
  "num_experts_per_tok": 2,
  "num_hidden_layers": 32,
  "num_key_value_heads": 8,
  "num_local_experts": 8,
  "output_router_logits": false,
  "rms_norm_eps": 1e-05,
  "rope_theta": 1000000.0,
  "router_aux_loss_coef": 0.02,
  "sliding_window": null,
  "tie_word_embeddings": false,
  "torch_dtype": "bfloat16",
  "transformers_version": "4.36.0.dev0",
  "use_cache": true,
  "vocab_size": 32000
}
)";

// openai-community/gpt2 (no n_inner key: the MLP is 4 * n_embd)
constexpr const char* kGpt2 = R"({
  "activation_function": "gelu_new",
  "architectures": [
    "GPT2LMHeadModel"
  ],
  "attn_pdrop": 0.1,
  "bos_token_id": 50256,
  "embd_pdrop": 0.1,
  "eos_token_id": 50256,
  "initializer_range": 0.02,
  "layer_norm_epsilon": 1e-05,
  "model_type": "gpt2",
  "n_ctx": 1024,
  "n_embd": 768,
  "n_head": 12,
  "n_layer": 12,
  "n_positions": 1024,
  "resid_pdrop": 0.1,
  "summary_activation": null,
  "summary_first_dropout": 0.1,
  "summary_proj_to_labels": true,
  "summary_type": "cls_index",
  "summary_use_proj": true,
  "task_specific_params": {
    "text-generation": {
      "do_sample": true,
      "max_length": 50
    }
  },
  "vocab_size": 50257
}
)";

// EleutherAI/gpt-neox-20b
constexpr const char* kGptNeox20B = R"({
  "architectures": [
    "GPTNeoXForCausalLM"
  ],
  "attention_probs_dropout_prob": 0,
  "bos_token_id": 0,
  "eos_token_id": 0,
  "hidden_act": "gelu_fast",
  "hidden_dropout_prob": 0,
  "hidden_size": 6144,
  "initializer_range": 0.02,
  "intermediate_size": 24576,
  "layer_norm_eps": 1e-05,
  "max_position_embeddings": 2048,
  "model_type": "gpt_neox",
  "num_attention_heads": 64,
  "num_hidden_layers": 44,
  "rotary_emb_base": 10000,
  "rotary_pct": 0.25,
  "tie_word_embeddings": false,
  "torch_dtype": "float16",
  "transformers_version": "4.24.0.dev0",
  "use_cache": true,
  "use_parallel_residual": true,
  "vocab_size": 50432
}
)";

// deepseek-ai/DeepSeek-V3 (auto_map omitted: it only names the remote-code classes)
constexpr const char* kDeepSeekV3 = R"({
  "architectures": [
    "DeepseekV3ForCausalLM"
  ],
  "attention_bias": false,
  "attention_dropout": 0.0,
  "aux_loss_alpha": 0.001,
  "bos_token_id": 0,
  "eos_token_id": 1,
  "ep_size": 1,
  "first_k_dense_replace": 3,
  "hidden_act": "silu",
  "hidden_size": 7168,
  "initializer_range": 0.02,
  "intermediate_size": 18432,
  "kv_lora_rank": 512,
  "max_position_embeddings": 163840,
  "model_type": "deepseek_v3",
  "moe_intermediate_size": 2048,
  "moe_layer_freq": 1,
  "n_group": 8,
  "n_routed_experts": 256,
  "n_shared_experts": 1,
  "norm_topk_prob": true,
  "num_attention_heads": 128,
  "num_experts_per_tok": 8,
  "num_hidden_layers": 61,
  "num_key_value_heads": 128,
  "num_nextn_predict_layers": 1,
  "pretraining_tp": 1,
  "q_lora_rank": 1536,
  "qk_nope_head_dim": 128,
  "qk_rope_head_dim": 64,
  "quantization_config": {
    "activation_scheme": "dynamic",
    "fmt": "e4m3",
    "quant_method": "fp8",
    "weight_block_size": [
      128,
      128
    ]
  },
  "rms_norm_eps": 1e-06,
  "rope_scaling": {
    "beta_fast": 32,
    "beta_slow": 1,
    "factor": 40,
    "mscale": 1.0,
    "mscale_all_dim": 1.0,
    "original_max_position_embeddings": 4096,
    "type": "yarn"
  },
  "rope_theta": 10000,
  "routed_scaling_factor": 2.5,
  "scoring_func": "sigmoid",
  "seq_aux": true,
  "tie_word_embeddings": false,
  "topk_group": 4,
  "topk_method": "noaux_tc",
  "torch_dtype": "bfloat16",
  "transformers_version": "4.33.1",
  "use_cache": true,
  "v_head_dim": 128,
  "vocab_size": 129280
}
)";

// Qwen/Qwen2-7B
constexpr const char* kQwen2_7B = R"({
  "architectures": [
    "Qwen2ForCausalLM"
  ],
  "attention_dropout": 0.0,
  "bos_token_id": 151643,
  "eos_token_id": 151643,
  "hidden_act": "silu",
  "hidden_size": 3584,
  "initializer_range": 0.02,
  "intermediate_size": 18944,
  "max_position_embeddings": 131072,
  "max_window_layers": 28,
  "model_type": "qwen2",
  "num_attention_heads": 28,
  "num_hidden_layers": 28,
  "num_key_value_heads": 4,
  "rms_norm_eps": 1e-06,
  "rope_theta": 1000000.0,
  "sliding_window": 131072,
  "tie_word_embeddings": false,
  "torch_dtype": "bfloat16",
  "transformers_version": "4.37.2",
  "use_cache": true,
  "use_sliding_window": false,
  "vocab_size": 152064
}
)";

// Qwen/Qwen2-57B-A14B
constexpr const char* kQwen2_57B_A14B = R"({
  "architectures": [
    "Qwen2MoeForCausalLM"
  ],
  "attention_dropout": 0.0,
  "bos_token_id": 151643,
  "decoder_sparse_step": 1,
  "eos_token_id": 151643,
  "hidden_act": "silu",
  "hidden_size": 3584,
  "initializer_range": 0.02,
  "intermediate_size": 18944,
  "max_position_embeddings": 131072,
  "max_window_layers": 28,
  "model_type": "qwen2_moe",
  "moe_intermediate_size": 2560,
  "norm_topk_prob": false,
  "num_attention_heads": 28,
  "num_experts": 64,
  "num_experts_per_tok": 8,
  "num_hidden_layers": 28,
  "num_key_value_heads": 4,
  "output_router_logits": false,
  "rms_norm_eps": 1e-06,
  "rope_theta": 1000000.0,
  "router_aux_loss_coef": 0.001,
  "shared_expert_intermediate_size": 20480,
  "sliding_window": 131072,
  "tie_word_embeddings": false,
  "torch_dtype": "bfloat16",
  "transformers_version": "4.40.1",
  "use_cache": true,
  "use_sliding_window": false,
  "vocab_size": 151936
}
)";

// Qwen/Qwen3-32B
constexpr const char* kQwen3_32B = R"({
  "architectures": [
    "Qwen3ForCausalLM"
  ],
  "attention_bias": false,
  "attention_dropout": 0.0,
  "bos_token_id": 151643,
  "eos_token_id": 151645,
  "head_dim": 128,
  "hidden_act": "silu",
  "hidden_size": 5120,
  "initializer_range": 0.02,
  "intermediate_size": 25600,
  "max_position_embeddings": 40960,
  "max_window_layers": 64,
  "model_type": "qwen3",
  "num_attention_heads": 64,
  "num_hidden_layers": 64,
  "num_key_value_heads": 8,
  "rms_norm_eps": 1e-06,
  "rope_scaling": null,
  "rope_theta": 1000000,
  "sliding_window": null,
  "tie_word_embeddings": false,
  "torch_dtype": "bfloat16",
  "transformers_version": "4.51.0",
  "use_cache": true,
  "use_sliding_window": false,
  "vocab_size": 151936
}
)";

// Qwen/Qwen3-30B-A3B
constexpr const char* kQwen3_30B_A3B = R"({
  "architectures": [
    "Qwen3MoeForCausalLM"
  ],
  "attention_bias": false,
  "attention_dropout": 0.0,
  "bos_token_id": 151643,
  "decoder_sparse_step": 1,
  "eos_token_id": 151645,
  "head_dim": 128,
  "hidden_act": "silu",
  "hidden_size": 2048,
  "initializer_range": 0.02,
  "intermediate_size": 6144,
  "max_position_embeddings": 40960,
  "max_window_layers": 48,
  "mlp_only_layers": [],
  "model_type": "qwen3_moe",
  "moe_intermediate_size": 768,
  "norm_topk_prob": true,
  "num_attention_heads": 32,
  "num_experts": 128,
  "num_experts_per_tok": 8,
  "num_hidden_layers": 48,
  "num_key_value_heads": 4,
  "output_router_logits": false,
  "rms_norm_eps": 1e-06,
  "rope_scaling": null,
  "rope_theta": 1000000.0,
  "router_aux_loss_coef": 0.001,
  "sliding_window": null,
  "tie_word_embeddings": false,
  "torch_dtype": "bfloat16",
  "transformers_version": "4.51.0",
  "use_cache": true,
  "use_sliding_window": false,
  "vocab_size": 151936
}
)";

// google/gemma-7b
constexpr const char* kGemma7B = R"({
  "architectures": [
    "GemmaForCausalLM"
  ],
  "attention_bias": false,
  "attention_dropout": 0.0,
  "bos_token_id": 2,
  "eos_token_id": 1,
  "head_dim": 256,
  "hidden_act": "gelu",
  "hidden_size": 3072,
  "initializer_range": 0.02,
  "intermediate_size": 24576,
  "max_position_embeddings": 8192,
  "model_type": "gemma",
  "num_attention_heads": 16,
  "num_hidden_layers": 28,
  "num_key_value_heads": 16,
  "pad_token_id": 0,
  "rms_norm_eps": 1e-06,
  "rope_scaling": null,
  "rope_theta": 10000.0,
  "torch_dtype": "bfloat16",
  "transformers_version": "4.38.0.dev0",
  "use_cache": true,
  "vocab_size": 256000
}
)";

// google/gemma-2-9b
constexpr const char* kGemma2_9B = R"({
  "architectures": [
    "Gemma2ForCausalLM"
  ],
  "attention_bias": false,
  "attention_dropout": 0.0,
  "attn_logit_softcapping": 50.0,
  "bos_token_id": 2,
  "cache_implementation": "hybrid",
  "eos_token_id": 1,
  "final_logit_softcapping": 30.0,
  "head_dim": 256,
  "hidden_act": "gelu_pytorch_tanh",
  "hidden_activation": "gelu_pytorch_tanh",
  "hidden_size": 3584,
  "initializer_range": 0.02,
  "intermediate_size": 14336,
  "max_position_embeddings": 8192,
  "model_type": "gemma2",
  "num_attention_heads": 16,
  "num_hidden_layers": 42,
  "num_key_value_heads": 8,
  "pad_token_id": 0,
  "query_pre_attn_scalar": 256,
  "rms_norm_eps": 1e-06,
  "rope_theta": 10000.0,
  "sliding_window": 4096,
  "sliding_window_size": 4096,
  "torch_dtype": "float32",
  "transformers_version": "4.42.0.dev0",
  "use_cache": true,
  "vocab_size": 256000
}
)";

// google/gemma-3-1b-pt
constexpr const char* kGemma3_1B = R"({
  "architectures": [
    "Gemma3ForCausalLM"
  ],
  "attention_bias": false,
  "attention_dropout": 0.0,
  "attn_logit_softcapping": null,
  "bos_token_id": 2,
  "cache_implementation": "hybrid",
  "eos_token_id": 1,
  "final_logit_softcapping": null,
  "head_dim": 256,
  "hidden_activation": "gelu_pytorch_tanh",
  "hidden_size": 1152,
  "initializer_range": 0.02,
  "intermediate_size": 6912,
  "max_position_embeddings": 32768,
  "model_type": "gemma3_text",
  "num_attention_heads": 4,
  "num_hidden_layers": 26,
  "num_key_value_heads": 1,
  "pad_token_id": 0,
  "query_pre_attn_scalar": 256,
  "rms_norm_eps": 1e-06,
  "rope_local_base_freq": 10000,
  "rope_scaling": null,
  "rope_theta": 1000000,
  "sliding_window": 512,
  "sliding_window_pattern": 6,
  "torch_dtype": "bfloat16",
  "transformers_version": "4.50.0.dev0",
  "use_cache": true,
  "vocab_size": 262144
}
)";

// A Gemma 3 multimodal checkpoint's config.json, abridged to its text_config as the 4B model has
// it: the fields at their Gemma3TextConfig defaults (8 heads, 4 key/value heads, head_dim 256,
// vocabulary 262,208) are absent, and the vision tower's config is cut to its model_type.
constexpr const char* kGemma3_4B = R"({
  "architectures": [
    "Gemma3ForConditionalGeneration"
  ],
  "model_type": "gemma3",
  "text_config": {
    "hidden_size": 2560,
    "intermediate_size": 10240,
    "model_type": "gemma3_text",
    "num_hidden_layers": 34,
    "rope_scaling": {
      "factor": 8.0,
      "rope_type": "linear"
    },
    "sliding_window": 1024
  },
  "vision_config": {
    "model_type": "siglip_vision_model"
  }
}
)";

// openai/gpt-oss-20b
constexpr const char* kGptOss20B = R"({
  "architectures": [
    "GptOssForCausalLM"
  ],
  "attention_bias": true,
  "attention_dropout": 0.0,
  "eos_token_id": 200002,
  "experts_per_token": 4,
  "head_dim": 64,
  "hidden_act": "silu",
  "hidden_size": 2880,
  "initial_context_length": 4096,
  "initializer_range": 0.02,
  "intermediate_size": 2880,
  "layer_types": [
    "sliding_attention",
    "full_attention",
    "sliding_attention",
    "full_attention",
    "sliding_attention",
    "full_attention",
    "sliding_attention",
    "full_attention",
    "sliding_attention",
    "full_attention",
    "sliding_attention",
    "full_attention",
    "sliding_attention",
    "full_attention",
    "sliding_attention",
    "full_attention",
    "sliding_attention",
    "full_attention",
    "sliding_attention",
    "full_attention",
    "sliding_attention",
    "full_attention",
    "sliding_attention",
    "full_attention"
  ],
  "max_position_embeddings": 131072,
  "model_type": "gpt_oss",
  "num_attention_heads": 64,
  "num_experts_per_tok": 4,
  "num_hidden_layers": 24,
  "num_key_value_heads": 8,
  "num_local_experts": 32,
  "output_router_logits": false,
  "pad_token_id": 199999,
  "rms_norm_eps": 1e-05,
  "rope_scaling": {
    "beta_fast": 32.0,
    "beta_slow": 1.0,
    "factor": 32.0,
    "original_max_position_embeddings": 4096,
    "rope_type": "yarn",
    "truncate": false
  },
  "rope_theta": 150000,
  "router_aux_loss_coef": 0.9,
  "sliding_window": 128,
  "swiglu_limit": 7.0,
  "tie_word_embeddings": false,
  "torch_dtype": "bfloat16",
  "transformers_version": "4.55.0.dev0",
  "use_cache": true,
  "vocab_size": 201088
}
)";

// meta-llama/Llama-4-Maverick-17B-128E's config.json, abridged: its text_config as published, the
// vision tower's config cut to its model_type.
constexpr const char* kLlama4Maverick = R"({
  "architectures": [
    "Llama4ForConditionalGeneration"
  ],
  "model_type": "llama4",
  "text_config": {
    "attention_bias": false,
    "attention_chunk_size": 8192,
    "attention_dropout": 0.0,
    "bos_token_id": 200000,
    "head_dim": 128,
    "hidden_act": "silu",
    "hidden_size": 5120,
    "initializer_range": 0.02,
    "interleave_moe_layer_step": 2,
    "intermediate_size": 8192,
    "intermediate_size_mlp": 16384,
    "max_position_embeddings": 1048576,
    "model_type": "llama4_text",
    "no_rope_layers": [],
    "num_attention_heads": 40,
    "num_experts_per_tok": 1,
    "num_hidden_layers": 48,
    "num_key_value_heads": 8,
    "num_local_experts": 128,
    "output_router_logits": false,
    "pad_token_id": 200018,
    "rms_norm_eps": 1e-05,
    "rope_scaling": null,
    "rope_theta": 500000.0,
    "router_aux_loss_coef": 0.001,
    "router_jitter_noise": 0.0,
    "torch_dtype": "bfloat16",
    "use_cache": true,
    "use_qk_norm": false,
    "vocab_size": 202048
  },
  "vision_config": {
    "model_type": "llama4_vision_model"
  }
}
)";

// microsoft/Phi-3-mini-4k-instruct (its auto_map left out)
constexpr const char* kPhi3Mini = R"({
  "architectures": [
    "Phi3ForCausalLM"
  ],
  "attention_dropout": 0.0,
  "bos_token_id": 1,
  "embd_pdrop": 0.0,
  "eos_token_id": 32000,
  "hidden_act": "silu",
  "hidden_size": 3072,
  "initializer_range": 0.02,
  "intermediate_size": 8192,
  "max_position_embeddings": 4096,
  "model_type": "phi3",
  "num_attention_heads": 32,
  "num_hidden_layers": 32,
  "num_key_value_heads": 32,
  "original_max_position_embeddings": 4096,
  "pad_token_id": 32000,
  "resid_pdrop": 0.0,
  "rms_norm_eps": 1e-05,
  "rope_scaling": null,
  "rope_theta": 10000.0,
  "sliding_window": 2047,
  "tie_word_embeddings": false,
  "torch_dtype": "bfloat16",
  "transformers_version": "4.40.2",
  "use_cache": true,
  "vocab_size": 32064
}
)";

TEST(HfConfig, ReadsLlama31_8B) {
  const ModelSpec m = read_hf_config("Llama-3.1-8B/config.json", kLlama31_8B);
  EXPECT_EQ(m.name, "Llama-3.1-8B");  // a Hub checkout's folder: the file is always config.json
  EXPECT_EQ(m.layers, 32);
  EXPECT_EQ(m.hidden, 4096);
  EXPECT_EQ(m.ffn, 14336);
  EXPECT_EQ(m.heads, 32);
  EXPECT_EQ(m.kv_heads, 8);
  EXPECT_EQ(m.head_dim, 0);
  EXPECT_EQ(m.effective_head_dim(), 4096 / 32);
  EXPECT_EQ(m.vocab, 128256);
  EXPECT_EQ(m.max_seq, 131072);
  EXPECT_EQ(m.mlp, MlpKind::kSwiglu);
  EXPECT_EQ(m.norm, NormKind::kRmsNorm);
  EXPECT_EQ(m.position, PositionKind::kRope);
  EXPECT_FALSE(m.tied_embeddings);
  EXPECT_FALSE(m.bias);
  EXPECT_FALSE(m.is_moe());
}

TEST(HfConfig, ReadsMistral7B) {
  const ModelSpec m = read_hf_config("mistral-7b.json", kMistral7B);
  EXPECT_EQ(m.name, "mistral-7b");
  EXPECT_EQ(m.layers, 32);
  EXPECT_EQ(m.kv_heads, 8);
  EXPECT_EQ(m.ffn, 14336);
  EXPECT_EQ(m.vocab, 32000);
  EXPECT_EQ(m.max_seq, 32768);
  EXPECT_EQ(m.mlp, MlpKind::kSwiglu);
  EXPECT_FALSE(m.is_moe());
  // v0.1's sliding window on every layer.
  EXPECT_EQ(m.attention_window, 4096);
  EXPECT_EQ(m.local_layers, 32);
}

TEST(HfConfig, NullSlidingWindowMeansFullAttentionAndQwensUnusedWindowIsIgnored) {
  EXPECT_EQ(read_hf_config("Mixtral-8x7B/config.json", kMixtral8x7B).local_layers, 0);
  EXPECT_EQ(read_hf_config("Qwen2-7B/config.json", kQwen2_7B).local_layers,
            0);  // use_sliding_window false
}

TEST(HfConfig, ReadsMixtral8x7BAsEveryLayerMoe) {
  const ModelSpec m = read_hf_config("Mixtral-8x7B-v0.1/config.json", kMixtral8x7B);
  EXPECT_EQ(m.name, "Mixtral-8x7B-v0.1");
  EXPECT_EQ(m.layers, 32);
  EXPECT_EQ(m.hidden, 4096);
  EXPECT_EQ(m.heads, 32);
  EXPECT_EQ(m.kv_heads, 8);
  EXPECT_EQ(m.vocab, 32000);
  EXPECT_EQ(m.moe.experts, 8);
  EXPECT_EQ(m.moe.top_k, 2);
  EXPECT_EQ(m.moe.expert_ffn, 14336);
  EXPECT_EQ(m.moe.shared_experts, 0);
  EXPECT_EQ(m.moe.dense_layers, 0);
  EXPECT_FALSE(m.tied_embeddings);
}

TEST(HfConfig, ReadsGpt2WithDefaultInnerSizeAndTiedEmbeddings) {
  const ModelSpec m = read_hf_config("gpt2/config.json", kGpt2);
  EXPECT_EQ(m.name, "gpt2");
  EXPECT_EQ(m.layers, 12);
  EXPECT_EQ(m.hidden, 768);
  EXPECT_EQ(m.ffn, 4 * 768);  // n_inner absent
  EXPECT_EQ(m.heads, 12);
  EXPECT_EQ(m.kv_heads, 12);
  EXPECT_EQ(m.vocab, 50257);
  EXPECT_EQ(m.max_seq, 1024);
  EXPECT_EQ(m.mlp, MlpKind::kGelu);
  EXPECT_EQ(m.norm, NormKind::kLayerNorm);
  EXPECT_EQ(m.position, PositionKind::kLearned);
  EXPECT_TRUE(m.tied_embeddings);  // GPT2Config leaves tie_word_embeddings at its default, true
  EXPECT_TRUE(m.bias);
  EXPECT_EQ(m.hidden_dropout, 0.1);  // resid_pdrop
}

TEST(HfConfig, Gpt2NullInnerSizeMeansFourTimesWidth) {
  const ModelSpec m = read_hf_config(
      "tiny.json",
      R"({"model_type": "gpt2", "n_layer": 2, "n_embd": 64, "n_head": 4, "n_inner": null,
          "vocab_size": 100, "tie_word_embeddings": false})");
  EXPECT_EQ(m.ffn, 4 * 64);
  EXPECT_FALSE(m.tied_embeddings);
  EXPECT_EQ(m.max_seq, 0);
}

TEST(HfConfig, ReadsGptNeox20B) {
  const ModelSpec m = read_hf_config("gpt-neox-20b/config.json", kGptNeox20B);
  EXPECT_EQ(m.name, "gpt-neox-20b");
  EXPECT_EQ(m.layers, 44);
  EXPECT_EQ(m.hidden, 6144);
  EXPECT_EQ(m.ffn, 24576);
  EXPECT_EQ(m.heads, 64);
  EXPECT_EQ(m.kv_heads, 64);
  EXPECT_EQ(m.vocab, 50432);
  EXPECT_EQ(m.max_seq, 2048);
  EXPECT_EQ(m.mlp, MlpKind::kGelu);
  EXPECT_EQ(m.norm, NormKind::kLayerNorm);
  EXPECT_EQ(m.position, PositionKind::kRope);
  EXPECT_FALSE(m.tied_embeddings);
  EXPECT_TRUE(m.bias);
}

TEST(HfConfig, ReadsDeepSeekV3WithItsLatentAttention) {
  const ModelSpec m = read_hf_config("DeepSeek-V3/config.json", kDeepSeekV3);
  EXPECT_EQ(m.name, "DeepSeek-V3");
  EXPECT_EQ(m.layers, 61);
  EXPECT_EQ(m.hidden, 7168);
  EXPECT_EQ(m.ffn, 18432);
  EXPECT_EQ(m.heads, 128);
  EXPECT_EQ(m.kv_heads, 128);
  EXPECT_EQ(m.head_dim, 128 + 64);  // qk_nope_head_dim + qk_rope_head_dim
  ASSERT_TRUE(m.is_mla());
  EXPECT_EQ(m.mla.q_lora_rank, 1536);
  EXPECT_EQ(m.mla.kv_lora_rank, 512);
  EXPECT_EQ(m.mla.qk_rope_head_dim, 64);
  EXPECT_EQ(m.value_head_dim(), 128);
  EXPECT_EQ(m.vocab, 129280);
  EXPECT_EQ(m.max_seq, 163840);
  EXPECT_EQ(m.mlp, MlpKind::kSwiglu);
  EXPECT_EQ(m.norm, NormKind::kRmsNorm);
  EXPECT_EQ(m.moe.experts, 256);
  EXPECT_EQ(m.moe.top_k, 8);
  EXPECT_EQ(m.moe.expert_ffn, 2048);
  EXPECT_EQ(m.moe.shared_experts, 1);
  EXPECT_EQ(m.moe.dense_layers, 3);
  EXPECT_FALSE(m.tied_embeddings);
}

TEST(HfConfig, ReadsQwen2_7B) {
  const ModelSpec m = read_hf_config("Qwen2-7B/config.json", kQwen2_7B);
  EXPECT_EQ(m.layers, 28);
  EXPECT_EQ(m.hidden, 3584);
  EXPECT_EQ(m.ffn, 18944);
  EXPECT_EQ(m.heads, 28);
  EXPECT_EQ(m.kv_heads, 4);
  EXPECT_EQ(m.vocab, 152064);
  EXPECT_EQ(m.max_seq, 131072);
  EXPECT_EQ(m.norm, NormKind::kRmsNorm);
  EXPECT_FALSE(m.is_moe());
}

TEST(HfConfig, ReadsQwen2MoeSharedExpertAsRoutedSizedCopies) {
  const ModelSpec m = read_hf_config("Qwen2-57B-A14B/config.json", kQwen2_57B_A14B);
  EXPECT_EQ(m.layers, 28);
  EXPECT_EQ(m.moe.experts, 64);
  EXPECT_EQ(m.moe.top_k, 8);
  EXPECT_EQ(m.moe.expert_ffn, 2560);
  EXPECT_EQ(m.moe.shared_experts, 20480 / 2560);
  EXPECT_EQ(m.moe.dense_layers, 0);
}

TEST(HfConfig, ReadsQwen3_32BWithItsOwnHeadDimAndQueryKeyNorms) {
  const ModelSpec m = read_hf_config("Qwen3-32B/config.json", kQwen3_32B);
  EXPECT_EQ(m.layers, 64);
  EXPECT_EQ(m.hidden, 5120);
  EXPECT_EQ(m.ffn, 25600);
  EXPECT_EQ(m.heads, 64);
  EXPECT_EQ(m.kv_heads, 8);
  EXPECT_EQ(m.effective_head_dim(), 128);  // 64 x 128 = 8192 wide, not hidden / heads = 80
  EXPECT_EQ(m.vocab, 151936);
  EXPECT_EQ(m.max_seq, 40960);
  EXPECT_EQ(m.mlp, MlpKind::kSwiglu);
  EXPECT_TRUE(m.qk_norm);
  EXPECT_FALSE(m.bias);
  EXPECT_FALSE(m.is_moe());
}

TEST(HfConfig, ReadsQwen3MoeWithoutASharedExpert) {
  const ModelSpec m = read_hf_config("Qwen3-30B-A3B/config.json", kQwen3_30B_A3B);
  EXPECT_EQ(m.layers, 48);
  EXPECT_EQ(m.moe.experts, 128);
  EXPECT_EQ(m.moe.top_k, 8);
  EXPECT_EQ(m.moe.expert_ffn, 768);
  EXPECT_EQ(m.moe.shared_experts, 0);
  EXPECT_EQ(m.moe.dense_layers, 0);
  EXPECT_TRUE(m.qk_norm);
}

TEST(HfConfig, OtherModelsHaveNoQueryKeyNorms) {
  EXPECT_FALSE(read_hf_config("Qwen2-7B/config.json", kQwen2_7B).qk_norm);
  EXPECT_FALSE(read_hf_config("Llama-3.1-8B/config.json", kLlama31_8B).qk_norm);
}

TEST(HfConfig, ReadsGemma7BWithAGeluGatedMlpAndTiedEmbeddings) {
  const ModelSpec m = read_hf_config("gemma-7b/config.json", kGemma7B);
  EXPECT_EQ(m.layers, 28);
  EXPECT_EQ(m.hidden, 3072);
  EXPECT_EQ(m.heads, 16);
  EXPECT_EQ(m.effective_head_dim(), 256);  // 16 x 256 = 4096, wider than the model
  EXPECT_EQ(m.mlp, MlpKind::kGeglu);
  EXPECT_TRUE(m.tied_embeddings);
  EXPECT_FALSE(m.sandwich_norm);
  EXPECT_EQ(m.local_layers, 0);
}

TEST(HfConfig, ReadsGemma2WithSandwichNormsAWindowOnEveryOtherLayerAndLogitCapping) {
  const ModelSpec m = read_hf_config("gemma-2-9b/config.json", kGemma2_9B);
  EXPECT_EQ(m.layers, 42);
  EXPECT_EQ(m.kv_heads, 8);
  EXPECT_TRUE(m.sandwich_norm);
  EXPECT_FALSE(m.qk_norm);
  EXPECT_EQ(m.attention_window, 4096);
  EXPECT_EQ(m.local_layers, 21);
  EXPECT_EQ(m.logit_softcap, 30.0);
}

TEST(HfConfig, ReadsGemma3WithQueryKeyNormsAndFiveLocalLayersInSix) {
  const ModelSpec m = read_hf_config("gemma-3-1b-pt/config.json", kGemma3_1B);
  EXPECT_EQ(m.layers, 26);
  EXPECT_EQ(m.kv_heads, 1);
  EXPECT_EQ(m.vocab, 262144);
  EXPECT_TRUE(m.qk_norm);
  EXPECT_TRUE(m.sandwich_norm);
  EXPECT_EQ(m.attention_window, 512);
  EXPECT_EQ(m.local_layers, 26 - 26 / 6);  // layers 6, 12, 18, 24 attend globally
  EXPECT_EQ(m.logit_softcap, 0);
}

TEST(HfConfig, ReadsAMultimodalGemma3ConfigsTextConfigWithItsDefaults) {
  const ModelSpec m = read_hf_config("gemma-3-4b-pt/config.json", kGemma3_4B);
  EXPECT_EQ(m.name, "gemma-3-4b-pt");
  EXPECT_EQ(m.layers, 34);
  EXPECT_EQ(m.hidden, 2560);
  EXPECT_EQ(m.ffn, 10240);
  EXPECT_EQ(m.heads, 8);
  EXPECT_EQ(m.kv_heads, 4);
  EXPECT_EQ(m.effective_head_dim(), 256);
  EXPECT_EQ(m.vocab, 262208);
  EXPECT_EQ(m.attention_window, 1024);
  EXPECT_EQ(m.local_layers, 34 - 34 / 6);
}

TEST(HfConfig, ABadFieldOfTextConfigIsLocatedAtItsLine) {
  // The same key at the top level and in a sibling object must not be taken for it.
  const std::string text = std::string(kGemma3_4B).replace(std::string(kGemma3_4B).find("\"hidden_size\": 2560"),
                                                           19, "\"hidden_size\": 2.5");
  const std::string with_decoy = std::string(text).replace(text.find("\"model_type\": \"siglip"), 0,
                                                           "\"hidden_size\": 7,\n    ");
  try {
    read_hf_config("config.json", with_decoy);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "config.json:7:5: text_config.hidden_size: expected an integer, got 2.5\n"
              "      \"hidden_size\": 2.5,\n"
              "      ^");
  }
}

TEST(HfConfig, AMultimodalGemma3ConfigWithoutTextConfigNamesIt) {
  try {
    read_hf_config("config.json", R"({"model_type": "gemma3"})");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("text_config"), std::string::npos) << e.what();
  }
}

TEST(HfConfig, ReadsGptOssWithAWindowOnEveryOtherLayerAndBiases) {
  const ModelSpec m = read_hf_config("gpt-oss-20b/config.json", kGptOss20B);
  EXPECT_EQ(m.layers, 24);
  EXPECT_EQ(m.hidden, 2880);
  EXPECT_EQ(m.heads, 64);
  EXPECT_EQ(m.kv_heads, 8);
  EXPECT_EQ(m.effective_head_dim(), 64);
  EXPECT_EQ(m.moe.experts, 32);
  EXPECT_EQ(m.moe.top_k, 4);
  EXPECT_EQ(m.moe.expert_ffn, 2880);
  EXPECT_EQ(m.attention_window, 128);
  EXPECT_EQ(m.local_layers, 12);
  EXPECT_TRUE(m.bias);
  EXPECT_EQ(m.vocab, 201088);
}

TEST(HfConfig, ReadsDeepSeekMoeLayerFrequencyAsEveryOtherLayer) {
  // MoE where layer_idx >= first_k_dense_replace and layer_idx % moe_layer_freq == 0: layer 2 of 4.
  const ModelSpec m = read_hf_config(
      "config.json",
      "{\"model_type\": \"deepseek_v3\", \"num_hidden_layers\": 4, \"hidden_size\": 64,"
      " \"intermediate_size\": 128, \"num_attention_heads\": 4, \"vocab_size\": 10,"
      " \"qk_nope_head_dim\": 16, \"qk_rope_head_dim\": 8, \"n_routed_experts\": 4, "
      "\"kv_lora_rank\": 8,"
      " \"v_head_dim\": 16, \"num_experts_per_tok\": 2, \"moe_intermediate_size\": 32, "
      "\"n_shared_experts\": 1,"
      " \"first_k_dense_replace\": 1, \"moe_layer_freq\": 2}");
  EXPECT_EQ(m.moe_layers(), 1);
  EXPECT_FALSE(m.is_moe_layer(1));
  EXPECT_TRUE(m.is_moe_layer(2));
  EXPECT_FALSE(m.is_moe_layer(3));
}

TEST(HfConfig, ReadsQwenMoeSparseStepAsEveryOtherLayer) {
  // Sparse where (layer_idx + 1) % decoder_sparse_step == 0: layers 1 and 3 of 4.
  const ModelSpec m = read_hf_config(
      "config.json",
      "{\"model_type\": \"qwen2_moe\", \"num_hidden_layers\": 4, \"hidden_size\": 64,"
      " \"intermediate_size\": 128, \"num_attention_heads\": 4, \"vocab_size\": 10, "
      "\"num_experts\": 4,"
      " \"num_experts_per_tok\": 2, \"moe_intermediate_size\": 32, \"decoder_sparse_step\": 2}");
  EXPECT_EQ(m.moe_layers(), 2);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(m.is_moe_layer(i), i % 2 == 1) << i;
}

TEST(HfConfig, ReadsLlama4MaverickWithMoeEveryOtherLayerAndChunkedAttention) {
  const ModelSpec m = read_hf_config("Llama-4-Maverick-17B-128E/config.json", kLlama4Maverick);
  EXPECT_EQ(m.name, "Llama-4-Maverick-17B-128E");
  EXPECT_EQ(m.layers, 48);
  EXPECT_EQ(m.ffn, 16384);  // the dense layers' MLP
  EXPECT_EQ(m.moe.expert_ffn, 8192);
  EXPECT_EQ(m.moe.experts, 128);
  EXPECT_EQ(m.moe.top_k, 1);
  EXPECT_EQ(m.moe.shared_experts, 1);
  EXPECT_EQ(m.moe_layers(), 24);
  EXPECT_FALSE(m.is_moe_layer(0));
  EXPECT_TRUE(m.is_moe_layer(1));
  EXPECT_TRUE(m.is_moe_layer(47));
  EXPECT_EQ(m.attention_window, 8192);
  EXPECT_TRUE(m.attention_chunked);
  EXPECT_EQ(m.local_layers, 36);  // every fourth layer, without RoPE, attends to the whole sequence
}

// `text` with its first `from` replaced by `to`.
std::string edited(std::string text, const std::string& from, const std::string& to) {
  return text.replace(text.find(from), from.size(), to);
}

std::string error_of_config(const std::string& text) {
  return testing::error_of([&] { read_hf_config("config.json", text); });
}

TEST(HfConfig, ANoRopeLayersListOfAnotherShapeIsRefusedWhereAnEmptyOneMeansTheDefault) {
  // An empty list is Meta's own (transformers then takes every fourth layer); any other list that
  // is not one 0 or 1 per layer was taken as that default too.
  for (const char* bad : {"[1, 0]", "\"x\"", "5", "{}"}) {
    const std::string what =
        error_of_config(edited(kLlama4Maverick, "\"no_rope_layers\": []", std::string("\"no_rope_layers\": ") + bad));
    EXPECT_NE(what.find("no_rope_layers"), std::string::npos) << bad << ": " << what;
    EXPECT_NE(what.find("a list of 48 entries of 0 or 1"), std::string::npos) << bad << ": " << what;
  }
  std::string pattern = "[";
  for (int l = 0; l < 48; ++l) pattern += l == 0 ? "1" : (l % 2 ? ", 0" : ", 1");
  const ModelSpec m = read_hf_config("config.json", edited(kLlama4Maverick, "[]", pattern + "]"));
  EXPECT_EQ(m.local_layers, 24);
}

TEST(HfConfig, ALogitCapOfZeroOrBelowIsRefusedWhereNullMeansNone) {
  const std::string what = error_of_config(edited(kGemma2_9B, "\"final_logit_softcapping\": 30.0", "\"final_logit_softcapping\": -30"));
  EXPECT_NE(what.find("final_logit_softcapping"), std::string::npos) << what;
  EXPECT_NE(what.find("above zero"), std::string::npos) << what;
  EXPECT_EQ(read_hf_config("config.json", edited(kGemma2_9B, "\"final_logit_softcapping\": 30.0", "\"final_logit_softcapping\": null")).logit_softcap, 0);
}

TEST(HfConfig, ReadsPhi3MiniWithItsSlidingWindow) {
  const ModelSpec m = read_hf_config("Phi-3-mini-4k-instruct/config.json", kPhi3Mini);
  EXPECT_EQ(m.layers, 32);
  EXPECT_EQ(m.hidden, 3072);
  EXPECT_EQ(m.ffn, 8192);
  EXPECT_EQ(m.kv_heads, 32);
  EXPECT_EQ(m.vocab, 32064);
  EXPECT_EQ(m.mlp, MlpKind::kSwiglu);
  EXPECT_EQ(m.attention_window, 2047);
  EXPECT_EQ(m.local_layers, 32);
}

TEST(HfConfig, NamesTheModelAfterNameOrPath) {
  const char* hub = R"({"_name_or_path": "mistralai/Mistral-7B-v0.1", "model_type": "mistral",
      "num_hidden_layers": 1, "hidden_size": 64, "intermediate_size": 128,
      "num_attention_heads": 4, "vocab_size": 10})";
  EXPECT_EQ(read_hf_config("config.json", hub).name, "mistralai/Mistral-7B-v0.1");
  const char* local = R"({"_name_or_path": "/scratch/ckpt/llama-tiny/", "model_type": "llama",
      "num_hidden_layers": 1, "hidden_size": 64, "intermediate_size": 128,
      "num_attention_heads": 4, "vocab_size": 10})";
  const ModelSpec m = read_hf_config("config.json", local);
  EXPECT_EQ(m.name, "llama-tiny");
  EXPECT_EQ(m.kv_heads, 4);  // num_key_value_heads absent: multi-head attention
}

TEST(HfConfig, ReadsAFixtureFromDisk) {
  const std::string path =
      std::string(STEPCAST_SOURCE_DIR) + "/tests/data/good/Llama-3.1-8B/config.json";
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  const ModelSpec m = read_hf_config(path, text.str());
  EXPECT_EQ(m.name, "Llama-3.1-8B");
  EXPECT_EQ(m.kv_heads, 8);
}

TEST(HfConfig, TruncatedFixturePointsPastTheLastByte) {
  const std::string path =
      std::string(STEPCAST_SOURCE_DIR) + "/tests/data/bad/hf_config_truncated.json";
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  try {
    read_hf_config("hf_config_truncated.json", text.str());
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(),
                 "hf_config_truncated.json:17:25: syntax error while parsing object - unexpected "
                 "end of input; expected '}'\n"
                 "    \"num_hidden_layers\": 3\n"
                 "                          ^");
  }
}

struct ErrorCase {
  const char* name;
  const char* text;
  ErrorKind kind;
  const char* what;
  const char* hint;
};

class HfConfigErrors : public ::testing::TestWithParam<ErrorCase> {};

TEST_P(HfConfigErrors, ReportsVerbatim) {
  const ErrorCase& c = GetParam();
  try {
    read_hf_config("config.json", c.text);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), c.kind);
    EXPECT_STREQ(e.what(), c.what);
    EXPECT_EQ(e.hint(), c.hint);
  }
}

// A minimal valid llama config with one line changed per case.
constexpr const char* kTinyLlamaHead = "{\n  \"model_type\": \"llama\",\n";
constexpr const char* kTinyLlamaTail = "  \"num_attention_heads\": 4,\n  \"vocab_size\": 10\n}\n";

std::string tiny_llama(const std::string& middle) {
  return std::string(kTinyLlamaHead) + middle + kTinyLlamaTail;
}

const std::string kWrongType = tiny_llama(
    "  \"num_hidden_layers\": 2,\n  \"hidden_size\": \"4096\",\n  \"intermediate_size\": 128,\n");
const std::string kFraction = tiny_llama(
    "  \"num_hidden_layers\": 2.5,\n  \"hidden_size\": 64,\n  \"intermediate_size\": 128,\n");
const std::string kZero = tiny_llama(
    "  \"num_hidden_layers\": 0,\n  \"hidden_size\": 64,\n  \"intermediate_size\": 128,\n");
const std::string kNull = tiny_llama(
    "  \"num_hidden_layers\": null,\n  \"hidden_size\": 64,\n  \"intermediate_size\": 128,\n");
const std::string kMissing = tiny_llama("  \"hidden_size\": 64,\n  \"intermediate_size\": 128,\n");
const std::string kGelu = tiny_llama(
    "  \"num_hidden_layers\": 2,\n  \"hidden_size\": 64,\n  \"intermediate_size\": 128,\n"
    "  \"hidden_act\": \"gelu\",\n");
const std::string kKvHeads = tiny_llama(
    "  \"num_hidden_layers\": 2,\n  \"hidden_size\": 64,\n  \"intermediate_size\": 128,\n"
    "  \"num_key_value_heads\": 3,\n");
const std::string kHeadsVsHidden = tiny_llama(
    "  \"num_hidden_layers\": 2,\n  \"hidden_size\": 66,\n  \"intermediate_size\": 128,\n");
const std::string kHuge = tiny_llama(
    "  \"num_hidden_layers\": 2,\n  \"hidden_size\": 3000000000,\n  \"intermediate_size\": 128,\n");
const std::string kBoolAsString = tiny_llama(
    "  \"num_hidden_layers\": 2,\n  \"hidden_size\": 64,\n  \"intermediate_size\": 128,\n"
    "  \"tie_word_embeddings\": \"false\",\n");

INSTANTIATE_TEST_SUITE_P(
    HfConfig, HfConfigErrors,
    ::testing::Values(
        ErrorCase{"TrailingComma", "{\n  \"model_type\": \"llama\",\n  \"hidden_size\": 64,\n}\n",
                  ErrorKind::kInvalidInput,
                  "config.json:4:1: syntax error while parsing object key - unexpected '}'; "
                  "expected string literal\n"
                  "  }\n"
                  "  ^",
                  ""},
        ErrorCase{"MissingComma", "{\n  \"model_type\": \"llama\"\n  \"hidden_size\": 64\n}\n",
                  ErrorKind::kInvalidInput,
                  "config.json:3:15: syntax error while parsing object - unexpected string "
                  "literal; expected '}'\n"
                  "    \"hidden_size\": 64\n"
                  "                ^",
                  ""},
        ErrorCase{"BadLiteral", "{\n  \"tie_word_embeddings\": flase\n}\n",
                  ErrorKind::kInvalidInput,
                  "config.json:2:27: syntax error while parsing value - invalid literal; last "
                  "read: '\"tie_word_embeddings\": fl'\n"
                  "    \"tie_word_embeddings\": flase\n"
                  "                            ^",
                  ""},
        ErrorCase{"Empty", "", ErrorKind::kInvalidInput,
                  "config.json:1:1: syntax error while parsing value - unexpected end of input; "
                  "expected '[', '{', or a literal",
                  ""},
        ErrorCase{"NumberOverflow", "{\"hidden_size\": 1e999}", ErrorKind::kInvalidInput,
                  "config.json:1:17: number overflow parsing '1e999'\n  {\"hidden_size\": 1e999}\n"
                  "                  ^",
                  ""},
        ErrorCase{"NotAnObject", "[1, 2]", ErrorKind::kInvalidInput,
                  "config.json: expected a JSON object as in a transformers config.json, got an "
                  "array",
                  ""},
        ErrorCase{"MissingModelType", "{\"hidden_size\": 64}", ErrorKind::kInvalidInput,
                  "config.json: model_type: missing; expected one of deepseek_v2, deepseek_v3, "
                  "gemma, gemma2, gemma3, gemma3_text, gpt2, gpt_neox, gpt_oss, llama, llama4, "
                  "llama4_text, mistral, "
                  "mixtral, phi3, qwen2, qwen2_moe, qwen3, qwen3_moe",
                  ""},
        ErrorCase{"MisspelledModelType", "{\n  \"model_type\": \"lama\"\n}",
                  ErrorKind::kInvalidInput,
                  "config.json:2:3: model_type: \"lama\" is not one of deepseek_v2, deepseek_v3, "
                  "gemma, gemma2, gemma3, gemma3_text, gpt2, gpt_neox, gpt_oss, llama, llama4, "
                  "llama4_text, mistral, "
                  "mixtral, phi3, qwen2, qwen2_moe, qwen3, qwen3_moe\n"
                  "    \"model_type\": \"lama\"\n"
                  "    ^",
                  "did you mean \"llama\"?"},
        ErrorCase{"UnrelatedModelType", "{\"model_type\": \"bert\"}", ErrorKind::kInvalidInput,
                  "config.json:1:2: model_type: \"bert\" is not one of deepseek_v2, deepseek_v3, "
                  "gemma, gemma2, gemma3, gemma3_text, gpt2, gpt_neox, gpt_oss, llama, llama4, "
                  "llama4_text, mistral, "
                  "mixtral, phi3, qwen2, qwen2_moe, qwen3, qwen3_moe\n"
                  "  {\"model_type\": \"bert\"}\n"
                  "   ^",
                  ""},
        ErrorCase{"ModelTypeNotAString", "{\"model_type\": 3}", ErrorKind::kInvalidInput,
                  "config.json:1:2: model_type: expected a string, got 3\n"
                  "  {\"model_type\": 3}\n"
                  "   ^",
                  ""},
        ErrorCase{"MissingField", kMissing.c_str(), ErrorKind::kInvalidInput,
                  "config.json: num_hidden_layers: missing, and model_type \"llama\" requires it",
                  ""},
        ErrorCase{"StringForNumber", kWrongType.c_str(), ErrorKind::kInvalidInput,
                  "config.json:4:3: hidden_size: expected an integer, got the string \"4096\"\n"
                  "    \"hidden_size\": \"4096\",\n"
                  "    ^",
                  ""},
        ErrorCase{"FractionForInteger", kFraction.c_str(), ErrorKind::kInvalidInput,
                  "config.json:3:3: num_hidden_layers: expected an integer, got 2.5\n"
                  "    \"num_hidden_layers\": 2.5,\n"
                  "    ^",
                  ""},
        ErrorCase{"ZeroLayers", kZero.c_str(), ErrorKind::kInvalidInput,
                  "config.json:3:3: num_hidden_layers: expected an integer >= 1, got 0\n"
                  "    \"num_hidden_layers\": 0,\n"
                  "    ^",
                  ""},
        ErrorCase{"IntegerBeyondInt", kHuge.c_str(), ErrorKind::kInvalidInput,
                  "config.json:4:3: hidden_size: expected an integer <= 2147483647, got "
                  "3000000000\n"
                  "    \"hidden_size\": 3000000000,\n"
                  "    ^",
                  ""},
        ErrorCase{"Gpt2Relu",
                  "{\"model_type\": \"gpt2\", \"n_layer\": 2, \"n_embd\": 64, \"n_head\": 4,\n"
                  " \"vocab_size\": 10, \"activation_function\": \"relu\"}",
                  ErrorKind::kUnsupported,
                  "config.json:2:20: activation_function: an MLP with activation \"relu\" is not "
                  "supported\n"
                  "   \"vocab_size\": 10, \"activation_function\": \"relu\"}\n"
                  "                     ^",
                  "supported: gelu, gelu_new, gelu_fast, gelu_pytorch_tanh"},
        ErrorCase{
            "Qwen2MoeDenseLayersNotLeading",
            "{\"model_type\": \"qwen2_moe\", \"num_hidden_layers\": 4, \"hidden_size\": 64,\n"
            " \"intermediate_size\": 128, \"num_attention_heads\": 4, \"vocab_size\": 10,\n"
            " \"num_experts\": 4, \"num_experts_per_tok\": 2, \"moe_intermediate_size\": 32,\n"
            " \"mlp_only_layers\": [0, 2]}",
            ErrorKind::kUnsupported,
            "config.json:4:2: mlp_only_layers: dense layers other than a leading run 0, 1, "
            "2, ... are not supported\n"
            "   \"mlp_only_layers\": [0, 2]}\n"
            "   ^",
            "stepcast models a leading run of dense layers only"},
        ErrorCase{"NullForRequired", kNull.c_str(), ErrorKind::kInvalidInput,
                  "config.json:3:3: num_hidden_layers: expected an integer, got null\n"
                  "    \"num_hidden_layers\": null,\n"
                  "    ^",
                  ""},
        ErrorCase{"StringForBool", kBoolAsString.c_str(), ErrorKind::kInvalidInput,
                  "config.json:6:3: tie_word_embeddings: expected true or false, got the string "
                  "\"false\"\n"
                  "    \"tie_word_embeddings\": \"false\",\n"
                  "    ^",
                  ""},
        ErrorCase{"GatedGelu", kGelu.c_str(), ErrorKind::kUnsupported,
                  "config.json:6:3: hidden_act: a gated MLP with activation \"gelu\" is not "
                  "supported\n"
                  "    \"hidden_act\": \"gelu\",\n"
                  "    ^",
                  "supported: silu (SwiGLU)"},
        ErrorCase{"KvHeadsDoNotDivide", kKvHeads.c_str(), ErrorKind::kInvalidInput,
                  "config.json:6:3: num_key_value_heads: 3 key/value heads do not divide "
                  "num_attention_heads 4\n"
                  "    \"num_key_value_heads\": 3,\n"
                  "    ^",
                  ""},
        ErrorCase{"HeadsDoNotDivideHidden", kHeadsVsHidden.c_str(), ErrorKind::kInvalidInput,
                  "config.json:6:3: num_attention_heads: 4 heads do not divide hidden_size 66\n"
                  "    \"num_attention_heads\": 4,\n"
                  "    ^",
                  "give head_dim, or a head count that divides the hidden size"},
        ErrorCase{"TooManyExpertsPerToken",
                  "{\"model_type\": \"mixtral\", \"num_hidden_layers\": 2, \"hidden_size\": 64,\n"
                  " \"intermediate_size\": 128, \"num_attention_heads\": 4, \"vocab_size\": 10,\n"
                  " \"num_local_experts\": 8, \"num_experts_per_tok\": 9}",
                  ErrorKind::kInvalidInput,
                  "config.json:3:26: num_experts_per_tok: expected at most num_local_experts 8, "
                  "got 9\n"
                  "   \"num_local_experts\": 8, \"num_experts_per_tok\": 9}\n"
                  "                           ^",
                  ""},
        ErrorCase{"DeepSeekMissingExperts",
                  "{\"model_type\": \"deepseek_v3\", \"num_hidden_layers\": 2, \"hidden_size\": 64,"
                  " \"intermediate_size\": 128, \"num_attention_heads\": 4, \"vocab_size\": 10,"
                  " \"qk_nope_head_dim\": 16, \"qk_rope_head_dim\": 8, \"kv_lora_rank\": 8, "
                  "\"v_head_dim\": 16}",
                  ErrorKind::kInvalidInput,
                  "config.json: n_routed_experts: missing, and model_type \"deepseek_v3\" "
                  "requires it",
                  ""},
        ErrorCase{"LayerTypesOfTheWrongLength",
                  "{\"model_type\": \"gemma2\", \"num_hidden_layers\": 2, \"hidden_size\": 64,\n"
                  " \"intermediate_size\": 128, \"num_attention_heads\": 4, \"vocab_size\": 10,\n"
                  " \"layer_types\": [\"sliding_attention\"]}",
                  ErrorKind::kInvalidInput,
                  "config.json:3:2: layer_types: expected one attention kind per layer, 2 "
                  "(num_hidden_layers), "
                  "got 1\n"
                  "   \"layer_types\": [\"sliding_attention\"]}\n"
                  "   ^",
                  ""},
        ErrorCase{
            "UnsupportedLayerType",
            "{\"model_type\": \"gemma2\", \"num_hidden_layers\": 1, \"hidden_size\": 64,\n"
            " \"intermediate_size\": 128, \"num_attention_heads\": 4, \"vocab_size\": 10,\n"
            " \"layer_types\": [\"linear_attention\"]}",
            ErrorKind::kUnsupported,
            "config.json:3:2: layer_types: attention kind \"linear_attention\" is not supported\n"
            "   \"layer_types\": [\"linear_attention\"]}\n"
            "   ^",
            "supported: full_attention, sliding_attention"},
        // The parser keeps the last of a key given twice; its line is the one to name.
        ErrorCase{"KeyGivenTwiceIsReportedAtTheValueKept",
                  "{\"model_type\": \"llama\", \"num_hidden_layers\": 2,\n \"hidden_size\": 64,\n"
                  " \"intermediate_size\": 128, \"num_attention_heads\": 4, \"vocab_size\": 10,\n"
                  " \"num_hidden_layers\": -4}",
                  ErrorKind::kInvalidInput,
                  "config.json:4:2: num_hidden_layers: expected an integer >= 1, got -4\n"
                  "   \"num_hidden_layers\": -4}\n"
                  "   ^",
                  ""},
        // Limits are refused at the key that gave the field, in the file's own names.
        ErrorCase{"HiddenBeyondWhatStepcastTakes",
                  "{\"model_type\": \"llama\", \"num_hidden_layers\": 2,\n \"hidden_size\": 2097152,\n"
                  " \"intermediate_size\": 128, \"num_attention_heads\": 4, \"vocab_size\": 10}",
                  ErrorKind::kInvalidInput,
                  "config.json:2:2: hidden_size: the model's hidden is 2097152, more than the 1048576 "
                  "stepcast takes\n"
                  "   \"hidden_size\": 2097152,\n"
                  "   ^",
                  ""},
        // qk_nope_head_dim + qk_rope_head_dim once wrapped to a negative head width, then ignored.
        ErrorCase{"DeepSeekHeadWidthsSummingBeyondAnInt",
                  "{\"model_type\": \"deepseek_v3\", \"num_hidden_layers\": 2, \"hidden_size\": 64,"
                  " \"intermediate_size\": 128, \"num_attention_heads\": 4, \"vocab_size\": 10,\n"
                  " \"qk_nope_head_dim\": 2147483600,\n \"qk_rope_head_dim\": 100, \"kv_lora_rank\": 8, "
                  "\"v_head_dim\": 16, \"n_routed_experts\": 4, \"num_experts_per_tok\": 2,"
                  " \"moe_intermediate_size\": 32, \"n_shared_experts\": 1, \"first_k_dense_replace\": 0}",
                  ErrorKind::kInvalidInput,
                  "config.json:2:2: qk_nope_head_dim: the model's head_dim is 2147483647, more than the "
                  "65536 stepcast takes\n"
                  "   \"qk_nope_head_dim\": 2147483600,\n"
                  "   ^",
                  ""},
        // (leading dense layers + step) once wrapped, leaving a negative count of dense layers.
        ErrorCase{"QwenMoeSparseStepOfAnIntsLargest",
                  "{\"model_type\": \"qwen2_moe\", \"num_hidden_layers\": 4, \"hidden_size\": 64,"
                  " \"intermediate_size\": 128, \"num_attention_heads\": 4, \"vocab_size\": 10,"
                  " \"num_experts\": 4, \"num_experts_per_tok\": 2, \"moe_intermediate_size\": 32,\n"
                  " \"decoder_sparse_step\": 2147483647, \"mlp_only_layers\": [0, 1]}",
                  ErrorKind::kInvalidInput,
                  "config.json:2:2: decoder_sparse_step: decoder_sparse_step 2147483647 leaves no MoE "
                  "layer among the 4 layers\n"
                  "   \"decoder_sparse_step\": 2147483647, \"mlp_only_layers\": [0, 1]}\n"
                  "   ^",
                  ""},
        // Llama 4 and DeepSeek configs with no MoE layer were read, and ran with expert
        // parallelism over experts no layer has; their model files were refused.
        ErrorCase{"Llama4MoeStepBeyondTheLayers",
                  "{\"model_type\": \"llama4\", \"text_config\": {\"num_hidden_layers\": 4, \"hidden_size\": 64,"
                  " \"intermediate_size\": 128, \"num_attention_heads\": 4, \"vocab_size\": 100,\n"
                  " \"interleave_moe_layer_step\": 5}}",
                  ErrorKind::kInvalidInput,
                  "config.json:2:2: text_config.interleave_moe_layer_step: interleave_moe_layer_step 5 "
                  "leaves no MoE layer among the 4 layers\n"
                  "   \"interleave_moe_layer_step\": 5}}\n"
                  "   ^",
                  ""},
        ErrorCase{"DeepSeekEveryLayerDense",
                  "{\"model_type\": \"deepseek_v3\", \"num_hidden_layers\": 4, \"hidden_size\": 64,"
                  " \"intermediate_size\": 128, \"num_attention_heads\": 4, \"vocab_size\": 10,"
                  " \"qk_nope_head_dim\": 16, \"qk_rope_head_dim\": 8, \"kv_lora_rank\": 8, "
                  "\"v_head_dim\": 16, \"n_routed_experts\": 4, \"num_experts_per_tok\": 2,"
                  " \"moe_intermediate_size\": 32, \"n_shared_experts\": 1,\n \"first_k_dense_replace\": 4}",
                  ErrorKind::kInvalidInput,
                  "config.json:2:2: first_k_dense_replace: first_k_dense_replace 4 leaves no MoE layer among "
                  "the 4 layers\n"
                  "   \"first_k_dense_replace\": 4}\n"
                  "   ^",
                  ""},
        ErrorCase{"DeepSeekMoeFrequencyBeyondTheLayers",
                  "{\"model_type\": \"deepseek_v3\", \"num_hidden_layers\": 4, \"hidden_size\": 64,"
                  " \"intermediate_size\": 128, \"num_attention_heads\": 4, \"vocab_size\": 10,"
                  " \"qk_nope_head_dim\": 16, \"qk_rope_head_dim\": 8, \"kv_lora_rank\": 8, "
                  "\"v_head_dim\": 16, \"n_routed_experts\": 4, \"num_experts_per_tok\": 2,"
                  " \"moe_intermediate_size\": 32, \"n_shared_experts\": 1, \"first_k_dense_replace\": 1,\n"
                  " \"moe_layer_freq\": 4}",
                  ErrorKind::kInvalidInput,
                  "config.json:2:2: moe_layer_freq: moe_layer_freq 4 leaves no MoE layer among the 4 layers\n"
                  "   \"moe_layer_freq\": 4}\n"
                  "   ^",
                  ""},
        // The key the parser kept is the escaped one given last, in an escaped text_config.
        ErrorCase{"EscapedKeysAreMatchedAsTheParserDecodesThem",
                  "{\"model_type\": \"gemma3\", \"text\\u005fconfig\": {\"hidden_size\": 2560,\n"
                  "  \"hidden\\u005fsize\": 2.5}}",
                  ErrorKind::kInvalidInput,
                  "config.json:2:3: text_config.hidden_size: expected an integer, got 2.5\n"
                  "    \"hidden\\u005fsize\": 2.5}}\n"
                  "    ^",
                  ""},
        // nlohmann's overflow error has no position of its own: the token it quotes is found
        // outside strings.
        ErrorCase{"NumberOverflowAfterTheSameTextInAString",
                  "{\"model_type\": \"llama\", \"note\": \"1e400\",\n  \"rope_theta\": 1e400}",
                  ErrorKind::kInvalidInput,
                  "config.json:2:17: number overflow parsing '1e400'\n"
                  "    \"rope_theta\": 1e400}\n"
                  "                  ^",
                  ""},
        ErrorCase{"GptOssSlidingLayersWithoutAWindow",
                  "{\"model_type\": \"gpt_oss\", \"num_hidden_layers\": 2, \"hidden_size\": 64,"
                  " \"intermediate_size\": 64, \"num_attention_heads\": 4, \"vocab_size\": 10,"
                  " \"num_local_experts\": 4, \"num_experts_per_tok\": 2,\n"
                  " \"sliding_window\": null, \"layer_types\": [\"sliding_attention\", \"full_attention\"]}",
                  ErrorKind::kInvalidInput,
                  "config.json:2:2: sliding_window: layer_types makes 1 of the 2 layers "
                  "sliding_attention, but sliding_window is unset\n"
                  "   \"sliding_window\": null, \"layer_types\": [\"sliding_attention\", \"full_attention\"]}\n"
                  "   ^",
                  "give sliding_window, the positions each of those layers attends to (gpt-oss: 128)"},
        ErrorCase{"QwenSlidingWindowOnUpperLayers",
                  "{\"model_type\": \"qwen2\", \"num_hidden_layers\": 2, \"hidden_size\": 64,\n"
                  " \"intermediate_size\": 128, \"num_attention_heads\": 4, \"vocab_size\": 10,\n"
                  " \"use_sliding_window\": true}",
                  ErrorKind::kUnsupported,
                  "config.json:3:2: use_sliding_window: Qwen's sliding window on the layers from "
                  "max_window_layers up is not supported\n"
                  "   \"use_sliding_window\": true}\n"
                  "   ^",
                  "stepcast reads a window on every layer (Mistral) or on a pattern of layers "
                  "(Gemma); set "
                  "use_sliding_window false, as Qwen's published configs do"}),
    [](const ::testing::TestParamInfo<ErrorCase>& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace stepcast::spec
