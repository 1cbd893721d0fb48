// ModelSpec: the shape of a decoder-only transformer, dense or mixture-of-experts.
// Read from presets (data/models/*.yaml), YAML files or Hugging Face config.json (spec/readers.h).
#pragma once

#include <algorithm>
#include <limits>
#include <string>
#include <vector>

namespace stepcast::spec {

// Gated MLPs (SwiGLU, GeGLU: gate, up and down projections) differ only in the activation, which
// costs the same; GELU is the two-matrix MLP.
enum class MlpKind { kGelu, kSwiglu, kGeglu };
enum class NormKind { kLayerNorm, kRmsNorm };
enum class PositionKind { kLearned, kRope, kAlibi, kNone };

/// Mixture-of-experts fields; experts == 0 means a dense model.
struct MoeSpec {
  int experts = 0;               // routed experts per MoE layer
  int top_k = 0;                 // routed experts each token visits; REQUIRES: 1..experts
  int expert_ffn = 0;            // FFN inner size of one routed expert
  int shared_experts = 0;        // experts every token visits, same size as a routed expert
  int dense_layers = 0;          // leading layers with a dense MLP of size ModelSpec::ffn
  // From the first MoE layer on, every layer_interval-th layer is MoE, the others dense (Llama 4
  // Maverick: 2); 1: every one.
  int layer_interval = 1;
  double capacity_factor = 1.0;  // tokens an expert accepts, relative to a perfectly even split
};

/// DeepSeek-V2/V3 multi-head latent attention (DeepSeek-V2 paper §2.1; transformers
/// DeepseekV3Attention). Queries and keys have head_dim = qk_nope + qk_rope_head_dim per head;
/// the keys' RoPE part is one head shared by all. kv_lora_rank == 0 means ordinary attention.
struct MlaSpec {
  int q_lora_rank = 0;   // queries through a down projection of this rank and its norm; 0: direct
  int kv_lora_rank = 0;  // keys and values through one down projection of this rank and its norm
  int qk_rope_head_dim = 0;  // the rotary part of each query and key head
  int v_head_dim = 0;        // each value head's width, and the attention output's per head
};

struct ModelSpec {
  std::string name;
  int layers = 0;       // transformer blocks
  int hidden = 0;       // model width d
  int ffn = 0;          // dense MLP inner size
  int heads = 0;        // attention (query) heads
  int kv_heads = 0;     // key/value heads: == heads for MHA, 1 for MQA, between for GQA
  int head_dim = 0;     // per-head width; 0 means hidden / heads
  int vocab = 0;        // vocabulary size
  int max_seq = 0;      // longest sequence the model was built for (tokens)
  MlpKind mlp = MlpKind::kGelu;
  NormKind norm = NormKind::kLayerNorm;
  PositionKind position = PositionKind::kLearned;
  bool tied_embeddings = false;  // input embedding and output projection share weights
  bool bias = false;             // linear layers carry biases (GPT-2/3, Megatron GPT)
  bool qk_norm = false;          // an RMSNorm over each query and key head before RoPE (Qwen3)
  // Norms after the attention and the MLP too, before each residual add (Gemma 2 and 3): four a
  // layer instead of two.
  bool sandwich_norm = false;
  // Final logits squashed as cap * tanh(logits / cap) before the loss (Gemma 2: 30); 0: none.
  double logit_softcap = 0;
  double hidden_dropout = 0;     // dropout probability on each residual branch; 0: no dropout
  // Sliding-window (local) attention: on `local_layers` of the layers a query attends to at most
  // the `attention_window` positions up to itself (Mistral 7B v0.1: all 32 layers, 4096; Gemma 2:
  // every other layer). 0 local layers: every layer attends to the whole sequence.
  int attention_window = 0;
  int local_layers = 0;
  // The local layers attend within fixed chunks of attention_window positions (from the chunk's
  // start to the query) instead of a window sliding with the query (Llama 4: 8192).
  bool attention_chunked = false;
  MoeSpec moe;
  MlaSpec mla;

  bool is_moe() const { return moe.experts > 0; }
  // Share of the layers that are MoE layers (0 for a dense model): the ones after the leading
  // dense layers.
  bool is_moe_layer(int layer) const {
    return is_moe() && layer >= moe.dense_layers &&
           (layer - moe.dense_layers) % moe.layer_interval == 0;
  }
  // The MoE layers among the first `count` layers.
  int moe_layers_before(int count) const {
    if (!is_moe() || count <= moe.dense_layers) return 0;
    // Summed wide: an interval near 2^31 (a typing slip, refused by the limits) must not wrap.
    return static_cast<int>((static_cast<long long>(count) - moe.dense_layers + moe.layer_interval - 1) /
                            moe.layer_interval);
  }
  int moe_layers() const { return moe_layers_before(layers); }
  double moe_layer_fraction() const {
    return layers > 0 ? static_cast<double>(moe_layers()) / layers : 0;
  }
  // Without an explicit head_dim the heads split the hidden size, which they must divide.
  bool head_dim_whole() const { return head_dim > 0 || hidden % heads == 0; }
  int effective_head_dim() const { return head_dim > 0 ? head_dim : hidden / heads; }
  bool is_mla() const { return mla.kv_lora_rank > 0; }
  bool gated_mlp() const { return mlp != MlpKind::kGelu; }
  double local_layer_fraction() const {
    return layers > 0 ? static_cast<double>(local_layers) / layers : 0;
  }
  // Width of a value head, and of the attention output per head.
  int value_head_dim() const { return is_mla() ? mla.v_head_dim : effective_head_dim(); }
};

/// `v` as a model count, held at INT_MAX where larger: a count a typing slip made huge stays huge
/// for the model limits to refuse, instead of wrapping to a small one that passes.
inline int saturated_count(long long v) { return static_cast<int>(std::min<long long>(v, std::numeric_limits<int>::max())); }

/// GPT's MLP width when a config leaves it out: four times the hidden size.
inline int gpt_ffn(int hidden) { return saturated_count(4LL * hidden); }

/// A count or width of a model above the most stepcast takes: far above any model trained, and
/// low enough that no count, nor the product of two widths, overflows the model's arithmetic.
struct ModelLimitExceeded {
  const char* key;  // as a model YAML file spells it: "hidden", "moe.experts"
  int value;
  int limit;
  /// "the model's experts is 2147483647, more than the 65536 stepcast takes"
  std::string message() const;
};

/// The fields of `m` above their limits, in the order of the YAML schema.
std::vector<ModelLimitExceeded> model_limits_exceeded(const ModelSpec& m);

}  // namespace stepcast::spec
