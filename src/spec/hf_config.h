// read_hf_config: a ModelSpec from a Hugging Face transformers config.json, the file that sits
// beside every checkpoint on the Hub, so a user can point stepcast at the model they will train.
//
//   spec::ModelSpec m = spec::read_hf_config("Llama-3.1-8B/config.json", text);
//   // m.layers == 32, m.hidden == 4096, m.kv_heads == 8, m.mlp == MlpKind::kSwiglu
//
// Supported model_type values and the fields read (the names their published configs use):
//   llama, mistral, mixtral, phi3, qwen2, qwen2_moe   num_hidden_layers, hidden_size,
//       intermediate_size, num_attention_heads, num_key_value_heads (absent: = heads), head_dim,
//       vocab_size, max_position_embeddings, hidden_act, rms_norm_eps, tie_word_embeddings (default
//       false); llama also attention_bias / mlp_bias; mistral, mixtral and phi3 sliding_window
//       (every layer; null: none); mixtral num_local_experts, num_experts_per_tok; qwen2, qwen2_moe
//       use_sliding_window must be false (true is refused);
//       qwen2_moe num_experts, num_experts_per_tok, moe_intermediate_size,
//       shared_expert_intermediate_size, decoder_sparse_step (MoE every that many layers),
//       mlp_only_layers (a leading run).
//   qwen3, qwen3_moe   as llama and qwen2_moe (qwen3_moe has no shared expert), attention_bias;
//              both carry an RMSNorm over each query and key head (ModelSpec::qk_norm).
//   gemma, gemma2, gemma3_text, gemma3   the llama shape fields, head_dim (default 256),
//              hidden_activation or hidden_act (a GELU: GeGLU), tie_word_embeddings (default
//              true); gemma2 and gemma3 also sliding_window, layer_types or the layer pattern,
//              final_logit_softcapping; gemma3 reads its text_config, absent fields at their
//              Gemma3TextConfig defaults.
//   gpt_oss    as mixtral, with attention_bias and layer_types (sliding_window on the layers it
//   names). llama4, llama4_text   the llama fields (llama4: of its text_config) plus
//   num_local_experts,
//              num_experts_per_tok, intermediate_size (an expert), intermediate_size_mlp (a dense
//              layer), interleave_moe_layer_step, moe_layers, attention_chunk_size, layer_types
//              or no_rope_layers.
//   gpt2       n_layer, n_embd, n_head, n_inner (absent or null: 4 * n_embd), n_positions,
//              vocab_size, activation_function, layer_norm_epsilon, tie_word_embeddings
//              (default true)
//   gpt_neox   num_hidden_layers, hidden_size, intermediate_size, num_attention_heads, vocab_size,
//              max_position_embeddings, hidden_act, layer_norm_eps, tie_word_embeddings (default
//              false). Partial rotary (rotary_pct) is still RoPE; use_parallel_residual changes
//              neither FLOPs nor memory, so it is not read.
//   deepseek_v2, deepseek_v3   the llama fields plus n_routed_experts, num_experts_per_tok,
//              moe_intermediate_size, n_shared_experts, first_k_dense_replace, moe_layer_freq
//              (MoE every that many layers),
//              and multi-head latent attention (ModelSpec::mla): qk_nope_head_dim,
//              qk_rope_head_dim (head_dim is their sum), q_lora_rank (null: queries projected
//              directly, as V2-Lite), kv_lora_rank, v_head_dim. DeepSeek-V3 comes out at 671 B
//              parameters, 36.6 B activated per token (the paper: 671 B and 37 B). The
//              multi-token-prediction module (num_nextn_predict_layers) is left out.
//
// Keys the reader does not use are ignored rather than rejected: a config.json carries dozens of
// keys for inference, tokenisation and quantisation that do not change the training step.
#pragma once

#include <string_view>

#include "spec/model_spec.h"

namespace stepcast::spec {

/// The model described by the config.json `text`; `source_name` (a path or a label) is used in
/// error locations and, when the JSON has no `_name_or_path`, for the name: the file's stem, or
/// the name of its folder when the file is called config.json (Hub checkouts always are).
/// Throws Error(kInvalidInput) for malformed JSON (file:line:column, the line and a caret), a
/// missing or unsupported model_type (the supported ones listed, did-you-mean in the hint), a
/// missing required field (named, with the model_type), a value of the wrong type or out of range
/// (named, with the line that holds it), and head counts that do not divide. Throws
/// Error(kUnsupported) for layouts ModelSpec cannot express (MoE layers that are not all after a
/// leading run of dense ones, a gated MLP whose activation is not SiLU, a GPT-2 or GPT-NeoX MLP
/// whose activation is not a GELU).
ModelSpec read_hf_config(std::string_view source_name, std::string_view text);

}  // namespace stepcast::spec
