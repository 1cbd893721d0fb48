#include "spec/hf_config.h"

#include <cstdint>
#include <filesystem>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/error.h"
#include "core/spellcheck.h"
#include "spec/config_fields.h"

namespace stepcast::spec {
namespace {

using nlohmann::json;

const std::vector<std::string>& supported_model_types() {
  static const std::vector<std::string> kTypes = {
      "deepseek_v2", "deepseek_v3", "gemma",     "gemma2", "gemma3",      "gemma3_text", "gpt2",
      "gpt_neox",    "gpt_oss",     "llama",     "llama4", "llama4_text", "mistral",     "mixtral",
      "phi3",        "qwen2",       "qwen2_moe", "qwen3",  "qwen3_moe"};
  return kTypes;
}

std::string joined(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& item : items) out += (out.empty() ? "" : ", ") + item;
  return out;
}

// Llama-style MLPs are gated (gate_proj, up_proj, down_proj); stepcast models the gate as SwiGLU,
// which is what hidden_act "silu" means there.
MlpKind gated_mlp(const ConfigFields& f) {
  const std::string act = f.optional_string("hidden_act").value_or("silu");
  if (act != "silu" && act != "swish") {
    f.fail(ErrorKind::kUnsupported, "hidden_act",
           "a gated MLP with activation \"" + act + "\" is not supported",
           "supported: silu (SwiGLU)");
  }
  return MlpKind::kSwiglu;
}

// GPT-2 and GPT-NeoX MLPs are two matrices around a GELU; the GELU approximations (gelu_new,
// gelu_fast, gelu_pytorch_tanh) cost the same.
MlpKind plain_mlp(const ConfigFields& f, const char* key, const char* fallback) {
  const std::string act = f.optional_string(key).value_or(fallback);
  if (!act.starts_with("gelu")) {
    f.fail(ErrorKind::kUnsupported, key, "an MLP with activation \"" + act + "\" is not supported",
           "supported: gelu, gelu_new, gelu_fast, gelu_pytorch_tanh");
  }
  return MlpKind::kGelu;
}

NormKind norm_kind(const ConfigFields& f, NormKind fallback) {
  if (f.has("rms_norm_eps")) return NormKind::kRmsNorm;
  if (f.has("layer_norm_eps") || f.has("layer_norm_epsilon")) return NormKind::kLayerNorm;
  return fallback;
}

// Layers, widths and heads under the field names the llama family and GPT-NeoX share.
ModelSpec read_transformer_shape(const ConfigFields& f) {
  ModelSpec m;
  m.layers = f.required_int("num_hidden_layers");
  m.hidden = f.required_int("hidden_size");
  m.ffn = f.required_int("intermediate_size");
  m.heads = f.required_int("num_attention_heads");
  return m;
}

// The fields llama, mistral, mixtral, qwen2, qwen2_moe and deepseek share.
ModelSpec read_llama_like(const ConfigFields& f) {
  ModelSpec m = read_transformer_shape(f);
  // transformers: num_key_value_heads unset means multi-head attention.
  m.kv_heads = f.optional_int("num_key_value_heads", m.heads);
  m.head_dim = f.optional_int("head_dim", 0);
  m.vocab = f.required_int("vocab_size");
  m.max_seq = f.optional_int("max_position_embeddings", 0);
  m.mlp = gated_mlp(f);
  m.norm = norm_kind(f, NormKind::kRmsNorm);
  m.position = PositionKind::kRope;
  m.tied_embeddings = f.optional_bool("tie_word_embeddings", false);
  return m;
}

void read_top_k(const ConfigFields& f, const char* experts_key, ModelSpec& m) {
  m.moe.top_k = f.required_int("num_experts_per_tok");
  if (m.moe.top_k > m.moe.experts) {
    f.fail(ErrorKind::kInvalidInput, "num_experts_per_tok",
           "expected at most " + std::string(experts_key) + " " + std::to_string(m.moe.experts) +
               ", got " + std::to_string(m.moe.top_k));
  }
}

ModelSpec read_llama(const ConfigFields& f) {
  ModelSpec m = read_llama_like(f);
  m.bias = f.optional_bool("attention_bias", false) || f.optional_bool("mlp_bias", false);
  return m;
}

// Mistral, Mixtral and Phi-3: sliding_window positions on every layer (Mistral 7B v0.1: 4096), or
// null (later versions) for full attention.
void read_sliding_window(const ConfigFields& f, ModelSpec& m) {
  m.attention_window = f.optional_int("sliding_window", 0);
  m.local_layers = m.attention_window > 0 ? m.layers : 0;
}

// layer_types, where a config lists it, names each layer's attention: the layers with `local`
// ("sliding_attention", or Llama 4's "chunked_attention") have the window. Returns whether the
// config lists them.
bool read_layer_types(const ConfigFields& f, ModelSpec& m, const char* local = "sliding_attention") {
  const json* types = f.find("layer_types");
  if (types == nullptr || types->is_null()) return false;
  if (!types->is_array()) f.wrong_type("layer_types", "a list of attention kinds, one per layer");
  if (static_cast<int>(types->size()) != m.layers) {
    f.fail(ErrorKind::kInvalidInput, "layer_types",
           "expected one attention kind per layer, " + std::to_string(m.layers) +
               " (num_hidden_layers), got " + std::to_string(types->size()));
  }
  m.local_layers = 0;
  for (const json& type : *types) {
    if (type == local) {
      ++m.local_layers;
    } else if (type != "full_attention") {
      f.fail(ErrorKind::kUnsupported, "layer_types",
             "attention kind " + type.dump() + " is not supported",
             std::string("supported: full_attention, ") + local);
    }
  }
  return true;
}

// Qwen2 and Qwen3 configs carry a sliding_window that applies only with use_sliding_window, which
// their published configs set false.
void reject_qwen_sliding_window(const ConfigFields& f) {
  if (f.optional_bool("use_sliding_window", false)) {
    f.fail(
        ErrorKind::kUnsupported, "use_sliding_window",
        "Qwen's sliding window on the layers from max_window_layers up is not supported",
        "stepcast reads a window on every layer (Mistral) or on a pattern of layers (Gemma); set "
        "use_sliding_window false, as Qwen's published configs do");
  }
}

ModelSpec read_mixtral(const ConfigFields& f) {
  ModelSpec m = read_llama_like(f);
  m.moe.experts = f.required_int("num_local_experts");
  read_top_k(f, "num_local_experts", m);
  m.moe.expert_ffn = m.ffn;  // every Mixtral layer is MoE; each expert has intermediate_size
  read_sliding_window(f, m);
  return m;
}

// Leading dense layers (`dense`, given by `key` set to `value`) that leave a MoE config no MoE
// layer: refused at the key, as a model file's moe block is (dense_layers below layers).
void require_moe_layer(const ConfigFields& f, const char* key, int value, std::int64_t dense, const ModelSpec& m) {
  if (dense < m.layers) return;
  f.fail(ErrorKind::kInvalidInput, key,
         std::string(key) + " " + std::to_string(value) + " leaves no MoE layer among the " +
             std::to_string(m.layers) + " layers");
}

// Qwen2-MoE: one shared expert of shared_expert_intermediate_size, expressed as that many
// routed-expert-sized copies, and the layers in mlp_only_layers dense (transformers
// Qwen2MoeDecoderLayer: sparse when not in mlp_only_layers and (i + 1) % decoder_sparse_step == 0).
ModelSpec read_qwen2_moe(const ConfigFields& f) {
  ModelSpec m = read_llama_like(f);
  m.moe.experts = f.required_int("num_experts");
  read_top_k(f, "num_experts", m);
  m.moe.expert_ffn = f.required_int("moe_intermediate_size");
  const int shared = f.optional_int("shared_expert_intermediate_size", 0, 0);
  if (shared % m.moe.expert_ffn != 0) {
    f.fail(ErrorKind::kUnsupported, "shared_expert_intermediate_size",
           std::to_string(shared) + " is not a multiple of moe_intermediate_size " +
               std::to_string(m.moe.expert_ffn),
           "stepcast models shared experts as copies of a routed expert");
  }
  m.moe.shared_experts = shared / m.moe.expert_ffn;
  int leading_dense = 0;
  if (const json* only = f.find("mlp_only_layers"); only != nullptr && !only->is_null()) {
    if (!only->is_array()) f.wrong_type("mlp_only_layers", "an array of layer indices");
    for (size_t i = 0; i < only->size(); ++i) {
      if (!(*only)[i].is_number_integer() || (*only)[i].get<std::int64_t>() != std::int64_t(i)) {
        f.fail(ErrorKind::kUnsupported, "mlp_only_layers",
               "dense layers other than a leading run 0, 1, 2, ... are not supported",
               "stepcast models a leading run of dense layers only");
      }
    }
    leading_dense = static_cast<int>(only->size());
  }
  // Sparse where (i + 1) % decoder_sparse_step == 0: from the first such layer after the leading
  // dense ones, every decoder_sparse_step-th.
  const int step = f.optional_int("decoder_sparse_step", 1);
  m.moe.layer_interval = step;
  const std::int64_t dense = (std::int64_t{leading_dense} + step) / step * step - 1;  // wide: step may be 2^31 - 1
  require_moe_layer(f, "decoder_sparse_step", step, dense, m);
  m.moe.dense_layers = static_cast<int>(dense);
  return m;
}

// DeepSeek-V2/V3: multi-head latent attention (q_lora_rank null or absent: queries projected
// directly, as in DeepSeek-V2-Lite); the first first_k_dense_replace
// layers have a dense MLP of intermediate_size, the rest n_routed_experts routed and
// n_shared_experts shared experts of moe_intermediate_size (DeepseekV3DecoderLayer).
ModelSpec read_deepseek(const ConfigFields& f) {
  ModelSpec m = read_llama_like(f);
  m.kv_heads = m.heads;
  m.mla.qk_rope_head_dim = f.required_int("qk_rope_head_dim");
  // Summed wide: two ints of up to 2^31 - 1 (a typing slip) must not wrap to a small head.
  m.head_dim = saturated_count(std::int64_t{f.required_int("qk_nope_head_dim")} + m.mla.qk_rope_head_dim);
  m.mla.q_lora_rank = f.optional_int("q_lora_rank", 0);
  m.mla.kv_lora_rank = f.required_int("kv_lora_rank");
  m.mla.v_head_dim = f.required_int("v_head_dim");
  m.moe.experts = f.required_int("n_routed_experts");
  read_top_k(f, "n_routed_experts", m);
  m.moe.expert_ffn = f.required_int("moe_intermediate_size");
  m.moe.shared_experts = f.required_int("n_shared_experts", 0);
  const int first_k = f.required_int("first_k_dense_replace", 0);
  require_moe_layer(f, "first_k_dense_replace", first_k, first_k, m);
  // MoE where layer_idx >= first_k_dense_replace and layer_idx % moe_layer_freq == 0
  // (DeepseekV3DecoderLayer): from the first such layer on, every moe_layer_freq-th.
  const int freq = f.optional_int("moe_layer_freq", 1);
  m.moe.layer_interval = freq;
  // Wide: a frequency near 2^31 must not wrap to a small count (it leaves no MoE layer).
  const std::int64_t dense = (std::int64_t{first_k} + freq - 1) / freq * freq;
  require_moe_layer(f, "moe_layer_freq", freq, dense, m);
  m.moe.dense_layers = static_cast<int>(dense);
  return m;
}

// Gemma's MLP is gated by a GELU (GeGLU): hidden_activation, or hidden_act in the first Gemma
// configs, both GELU approximations.
MlpKind geglu_mlp(const ConfigFields& f) {
  const char* key = f.has("hidden_activation") ? "hidden_activation" : "hidden_act";
  const std::string act = f.optional_string(key).value_or("gelu_pytorch_tanh");
  if (!act.starts_with("gelu")) {
    f.fail(ErrorKind::kUnsupported, key,
           "a Gemma MLP with activation \"" + act + "\" is not supported",
           "supported: gelu, gelu_pytorch_tanh (GeGLU)");
  }
  return MlpKind::kGeglu;
}

// Gemma 1, 2 and 3 (transformers GemmaConfig, Gemma2Config, Gemma3TextConfig): Llama's layer with
// a GeGLU MLP and tied embeddings. Gemma 2 adds a norm after the attention and after the MLP, a
// sliding window on every other layer (layer_idx % 2 == 0) and final logit soft-capping; Gemma 3
// keeps the norms, sets the window on all but every sliding_window_pattern-th layer and adds
// query and key norms. layer_types, where a config lists it, names each layer's attention.
// Gemma 3's multimodal checkpoints leave out fields at their Gemma3TextConfig defaults, so the
// defaults stand in for absent fields there; attention soft-capping and the embedding scale are
// elementwise work inside other kernels and are not priced.
ModelSpec read_gemma(const ConfigFields& f, int generation) {
  const bool defaults = generation == 3;
  const auto count = [&](const char* key, int fallback) {
    return defaults ? f.optional_int(key, fallback) : f.required_int(key);
  };
  ModelSpec m;
  m.layers = count("num_hidden_layers", 26);
  m.hidden = count("hidden_size", 2304);
  m.ffn = count("intermediate_size", 9216);
  m.heads = count("num_attention_heads", 8);
  m.kv_heads = f.optional_int("num_key_value_heads", defaults ? 4 : m.heads);
  m.head_dim = f.optional_int("head_dim", 256);
  m.vocab = count("vocab_size", 262208);
  m.max_seq = f.optional_int("max_position_embeddings", defaults ? 131072 : 0);
  m.mlp = geglu_mlp(f);
  m.norm = NormKind::kRmsNorm;
  m.position = PositionKind::kRope;
  m.tied_embeddings = f.optional_bool("tie_word_embeddings", true);
  m.bias = f.optional_bool("attention_bias", false);
  if (generation == 1) return m;
  m.sandwich_norm = true;
  m.qk_norm = generation == 3;
  // transformers divides the logits by it where it is not None: null means no capping, and a cap
  // of zero or below is no cap at all (it was taken as none).
  m.logit_softcap = f.optional_number("final_logit_softcapping", 0);
  if (f.has("final_logit_softcapping") && m.logit_softcap <= 0) {
    f.wrong_type("final_logit_softcapping", "a number above zero (Gemma 2: 30.0), or null for no capping");
  }
  m.attention_window = f.optional_int("sliding_window", 4096);
  if (!read_layer_types(f, m)) {
    m.local_layers = generation == 2
                         ? m.layers / 2 + m.layers % 2  // every other layer, from the first
                         : m.layers - m.layers / f.optional_int("sliding_window_pattern", 6);
  }
  return m;
}

// gpt-oss (transformers GptOssConfig): every layer MoE with num_local_experts experts of
// intermediate_size, a sliding window on the layers layer_types names (every other one), biases
// on the attention and expert projections (attention_bias). Its attention sinks (a learned logit
// per head in the softmax) and the clamp in its SwiGLU are elementwise work inside other kernels.
ModelSpec read_gpt_oss(const ConfigFields& f) {
  ModelSpec m = read_mixtral(f);
  m.bias = f.optional_bool("attention_bias", false);
  if (!read_layer_types(f, m)) m.local_layers = m.attention_window > 0 ? (m.layers + 1) / 2 : 0;
  if (m.local_layers > 0 && m.attention_window == 0) {
    f.fail(ErrorKind::kInvalidInput, "sliding_window",
           "layer_types makes " + std::to_string(m.local_layers) + " of the " + std::to_string(m.layers) +
               " layers sliding_attention, but sliding_window is unset",
           "give sliding_window, the positions each of those layers attends to (gpt-oss: 128)");
  }
  return m;
}

// Llama 4 (transformers Llama4TextConfig): MoE layers of num_local_experts routed experts of
// intermediate_size, top num_experts_per_tok, and one shared expert of the same size, every
// interleave_moe_layer_step-th layer (layers step - 1, 2 step - 1, ...); the other layers dense of
// intermediate_size_mlp. The RoPE layers attend within chunks of attention_chunk_size, every
// fourth layer (no RoPE) the whole sequence; layer_types or no_rope_layers, where listed, say
// which. Its L2 norm of the rotary queries and keys is elementwise work inside other kernels.
ModelSpec read_llama4(const ConfigFields& f) {
  ModelSpec m = read_llama_like(f);
  m.moe.expert_ffn = m.ffn;
  m.ffn = f.optional_int("intermediate_size_mlp", 16384);
  m.moe.experts = f.optional_int("num_local_experts", 16);
  m.moe.top_k = 1;
  if (f.has("num_experts_per_tok")) read_top_k(f, "num_local_experts", m);
  m.moe.shared_experts = 1;
  const int step = f.optional_int("interleave_moe_layer_step", 1);
  require_moe_layer(f, "interleave_moe_layer_step", step, step - 1, m);
  m.moe.dense_layers = step - 1;
  m.moe.layer_interval = step;
  if (const json* listed = f.find("moe_layers"); listed != nullptr && !listed->is_null()) {
    bool pattern = listed->is_array() && static_cast<int>(listed->size()) == m.moe_layers();
    for (std::size_t i = 0; pattern && i < listed->size(); ++i) {
      pattern = (*listed)[i].is_number_integer() &&
                (*listed)[i].get<int>() == step - 1 + static_cast<int>(i) * step;
    }
    if (!pattern) {
      f.fail(ErrorKind::kUnsupported, "moe_layers",
             "MoE layers other than every interleave_moe_layer_step-th",
             "stepcast models MoE layers at a fixed interval");
    }
  }
  m.attention_window = f.optional_int("attention_chunk_size", 8192);
  m.attention_chunked = true;
  if (!read_layer_types(f, m, "chunked_attention")) {
    // no_rope_layers: 1 for a layer that uses RoPE (and chunked attention), 0 for one that does
    // not, one per layer; empty, as Meta's configs give it, transformers takes the default
    // pattern. Any other list was taken as the default pattern too.
    const json* listed = f.find("no_rope_layers");
    if (listed != nullptr && !listed->is_null() && !(listed->is_array() && listed->empty())) {
      const json& rope = *listed;
      bool per_layer = rope.is_array() && static_cast<int>(rope.size()) == m.layers;
      for (std::size_t i = 0; per_layer && i < rope.size(); ++i) per_layer = rope[i] == 0 || rope[i] == 1;
      if (!per_layer) {
        f.wrong_type("no_rope_layers", "a list of " + std::to_string(m.layers) +
                                           " entries of 0 or 1, one per layer (num_hidden_layers)");
      }
      m.local_layers = 0;
      for (const json& uses_rope : rope) m.local_layers += uses_rope == 1 ? 1 : 0;
    } else {
      m.local_layers = m.layers - m.layers / 4;
    }
  }
  return m;
}

// GPT-2 (GPT2Config): learned positions, biases everywhere, tied embeddings unless stated.
ModelSpec read_gpt2(const ConfigFields& f) {
  ModelSpec m;
  m.layers = f.required_int("n_layer");
  m.hidden = f.required_int("n_embd");
  m.heads = f.required_int("n_head");
  m.kv_heads = m.heads;
  m.ffn = f.optional_int("n_inner", gpt_ffn(m.hidden));
  m.vocab = f.required_int("vocab_size");
  m.max_seq = f.optional_int("n_positions", f.optional_int("n_ctx", 0));
  m.mlp = plain_mlp(f, "activation_function", "gelu_new");
  m.norm = norm_kind(f, NormKind::kLayerNorm);
  m.position = PositionKind::kLearned;
  m.tied_embeddings = f.optional_bool("tie_word_embeddings", true);
  m.bias = true;
  m.hidden_dropout = f.optional_probability("resid_pdrop", 0.1);  // GPT2Config default
  return m;
}

// GPT-NeoX (Pythia, GPT-NeoX-20B): rotary on rotary_pct of each head, biases, untied embeddings.
ModelSpec read_gpt_neox(const ConfigFields& f) {
  ModelSpec m = read_transformer_shape(f);
  m.kv_heads = m.heads;
  m.vocab = f.required_int("vocab_size");
  m.max_seq = f.optional_int("max_position_embeddings", 0);
  m.mlp = plain_mlp(f, "hidden_act", "gelu");
  m.norm = norm_kind(f, NormKind::kLayerNorm);
  m.position = PositionKind::kRope;
  m.tied_embeddings = f.optional_bool("tie_word_embeddings", false);
  m.bias = true;
  m.hidden_dropout = f.optional_probability("hidden_dropout", 0);  // GPTNeoXConfig default
  return m;
}

// The config keys that hold the head counts, for messages.
struct HeadKeys {
  const char* heads;
  const char* hidden;
  const char* kv_heads;
};
constexpr HeadKeys kGpt2Keys = {"n_head", "n_embd", "n_head"};
constexpr HeadKeys kHeadKeys = {"num_attention_heads", "hidden_size", "num_key_value_heads"};

// The keys of a config that give each model field (ModelLimitExceeded::key), the first present
// being the one located; a field derived from others (DeepSeek's head_dim) names the first.
struct HfKeys {
  const char* field;
  std::initializer_list<const char*> keys;
};
const HfKeys kHfKeys[] = {
    {"layers", {"num_hidden_layers", "n_layer"}},
    {"hidden", {"hidden_size", "n_embd"}},
    {"ffn", {"intermediate_size", "intermediate_size_mlp", "n_inner"}},
    {"heads", {"num_attention_heads", "n_head"}},
    {"kv_heads", {"num_key_value_heads"}},
    {"head_dim", {"head_dim", "qk_nope_head_dim"}},
    {"vocab", {"vocab_size"}},
    {"max_seq", {"max_position_embeddings", "n_positions"}},
    {"attention_window", {"sliding_window", "attention_chunk_size"}},
    {"moe.experts", {"num_local_experts", "num_experts", "n_routed_experts"}},
    {"moe.top_k", {"num_experts_per_tok"}},
    {"moe.expert_ffn", {"moe_intermediate_size", "intermediate_size"}},
    {"moe.shared_experts", {"n_shared_experts", "shared_expert_intermediate_size"}},
    {"moe.layer_interval", {"moe_layer_freq", "decoder_sparse_step", "interleave_moe_layer_step"}},
    {"moe.dense_layers", {"first_k_dense_replace", "mlp_only_layers", "decoder_sparse_step", "interleave_moe_layer_step"}},
    {"mla.q_lora_rank", {"q_lora_rank"}},
    {"mla.kv_lora_rank", {"kv_lora_rank"}},
    {"mla.qk_rope_head_dim", {"qk_rope_head_dim"}},
    {"mla.v_head_dim", {"v_head_dim"}}};

// Refuses a model field above the most stepcast takes, at the config key that gave it.
void check_limits(const ConfigFields& f, const ModelSpec& m) {
  for (const ModelLimitExceeded& over : model_limits_exceeded(m)) {
    for (const HfKeys& entry : kHfKeys) {
      if (std::string_view(entry.field) != over.key) continue;
      const char* key = *entry.keys.begin();
      for (const char* candidate : entry.keys) {
        if (f.has(candidate)) {
          key = candidate;
          break;
        }
      }
      f.fail(ErrorKind::kInvalidInput, key, over.message());
    }
  }
}

// Checks the head counts the rest of stepcast divides by.
void check_heads(const ConfigFields& f, const ModelSpec& m, const HeadKeys& keys) {
  if (!m.head_dim_whole()) {
    f.fail(ErrorKind::kInvalidInput, keys.heads,
           std::to_string(m.heads) + " heads do not divide " + keys.hidden + " " +
               std::to_string(m.hidden),
           "give head_dim, or a head count that divides the hidden size");
  }
  if (m.heads % m.kv_heads != 0) {
    f.fail(ErrorKind::kInvalidInput, keys.kv_heads,
           std::to_string(m.kv_heads) + " key/value heads do not divide " + keys.heads + " " +
               std::to_string(m.heads));
  }
}

// The Hub id when the config names one; the last path component when it names a local folder
// (save_pretrained writes the checkpoint path there); otherwise the file's stem or folder.
std::string model_name(const ConfigFields& f, std::string_view source_name) {
  if (const auto named = f.optional_string("_name_or_path"); named && !named->empty()) {
    const char first = named->front();
    if (first != '/' && first != '.' && first != '~') return *named;
    std::filesystem::path path(*named);
    if (!path.has_filename()) path = path.parent_path();
    return path.filename().string();
  }
  const std::filesystem::path path(source_name);
  if (path.stem() == "config" && path.parent_path().has_filename()) {
    return path.parent_path().filename().string();
  }
  return path.stem().string();
}

}  // namespace

ModelSpec read_hf_config(std::string_view source_name, std::string_view text) {
  const json root = parse_config_json(source_name, text);
  if (!root.is_object()) {
    throw Error(ErrorKind::kInvalidInput,
                "expected a JSON object as in a transformers config.json, got " + describe_json(root))
        .at({std::string(source_name)});
  }

  ConfigFields f(source_name, text, root);
  const std::optional<std::string> type = f.optional_string("model_type");
  const std::string supported = joined(supported_model_types());
  if (!type) {
    throw Error(ErrorKind::kInvalidInput, "missing; expected one of " + supported)
        .at({std::string(source_name)})
        .in_field("model_type");
  }
  f.set_model_type(*type);

  ModelSpec m;
  std::optional<ConfigFields> language;  // a multimodal config's language model, where it has one
  if (*type == "llama") {
    m = read_llama(f);
  } else if (*type == "mistral" || *type == "phi3") {
    // Phi-3 is Llama's layer with fused QKV and gate-up projections (the same GEMMs), and a
    // sliding window where its config sets one (Phi-3-mini-4k: 2047).
    m = read_llama_like(f);
    read_sliding_window(f, m);
  } else if (*type == "qwen2") {
    // Qwen2 puts biases on the Q, K and V projections only (under 0.01% of the parameters), so
    // it is modelled without biases, like Mistral.
    m = read_llama_like(f);
    reject_qwen_sliding_window(f);
  } else if (*type == "mixtral") {
    m = read_mixtral(f);
  } else if (*type == "qwen2_moe") {
    m = read_qwen2_moe(f);
    reject_qwen_sliding_window(f);
  } else if (*type == "qwen3" || *type == "qwen3_moe") {
    // Qwen3 is Llama's layer with q_norm and k_norm on each head (transformers Qwen3Attention);
    // Qwen3-MoE routes as Qwen2-MoE does, without the shared expert.
    m = *type == "qwen3" ? read_llama_like(f) : read_qwen2_moe(f);
    m.bias = f.optional_bool("attention_bias", false);
    m.qk_norm = true;
    reject_qwen_sliding_window(f);
  } else if (*type == "deepseek_v2" || *type == "deepseek_v3") {
    m = read_deepseek(f);
  } else if (*type == "gemma" || *type == "gemma2" || *type == "gemma3_text") {
    m = read_gemma(f, *type == "gemma" ? 1 : *type == "gemma2" ? 2 : 3);
  } else if (*type == "llama4_text") {
    m = read_llama4(f);
  } else if (*type == "llama4") {
    // Llama 4's checkpoints: the language model's config is text_config (the vision tower is not
    // modelled).
    if (f.find("text_config") == nullptr) f.missing("text_config");
    language.emplace(f.nested("text_config"));
    m = read_llama4(*language);
  } else if (*type == "gemma3") {
    // Gemma 3's multimodal checkpoints: the language model's config is text_config (the vision
    // tower is not modelled).
    if (f.find("text_config") == nullptr) f.missing("text_config");
    language.emplace(f.nested("text_config"));
    m = read_gemma(*language, 3);
  } else if (*type == "gpt_oss") {
    m = read_gpt_oss(f);
  } else if (*type == "gpt2") {
    m = read_gpt2(f);
  } else if (*type == "gpt_neox") {
    m = read_gpt_neox(f);
  } else {
    const std::string close = core::closest_match(*type, supported_model_types());
    f.fail(ErrorKind::kInvalidInput, "model_type", "\"" + *type + "\" is not one of " + supported,
           close.empty() ? std::string() : "did you mean \"" + close + "\"?");
  }
  check_limits(language ? *language : f, m);
  check_heads(language ? *language : f, m, *type == "gpt2" ? kGpt2Keys : kHeadKeys);
  m.name = model_name(f, source_name);
  return m;
}

}  // namespace stepcast::spec
