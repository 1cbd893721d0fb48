#include "spec/model_spec.h"

#include <string_view>

namespace stepcast::spec {

std::string ModelLimitExceeded::message() const {
  const std::string_view name(key);
  const std::string_view field = name.substr(name.find('.') + 1);  // "moe.experts": "experts"
  return "the model's " + std::string(field) + " is " + std::to_string(value) + ", more than the " +
         std::to_string(limit) + " stepcast takes";
}

std::vector<ModelLimitExceeded> model_limits_exceeded(const ModelSpec& m) {
  // Megatron's 1T GPT has hidden 25,600 and 128 layers, DeepSeek-V3 256 experts, vocabularies
  // reach 256K: a value beyond these limits is a typing slip, and would otherwise come out as a
  // step of years or a negative size.
  constexpr int kMaxWidth = 1 << 20, kMaxCount = 1 << 16;
  const ModelLimitExceeded fields[] = {
      {"layers", m.layers, kMaxCount},
      {"hidden", m.hidden, kMaxWidth},
      {"ffn", m.ffn, kMaxWidth},
      {"heads", m.heads, kMaxCount},
      {"kv_heads", m.kv_heads, kMaxCount},
      {"head_dim", m.head_dim, kMaxCount},
      {"vocab", m.vocab, 1 << 24},
      {"max_seq", m.max_seq, 1 << 30},
      {"attention_window", m.attention_window, 1 << 30},
      {"moe.experts", m.moe.experts, kMaxCount},
      {"moe.top_k", m.moe.top_k, kMaxCount},
      {"moe.expert_ffn", m.moe.expert_ffn, kMaxWidth},
      {"moe.shared_experts", m.moe.shared_experts, kMaxCount},
      {"moe.layer_interval", m.moe.layer_interval, kMaxCount},  // before what it derives
      {"moe.dense_layers", m.moe.dense_layers, kMaxCount},
      {"mla.q_lora_rank", m.mla.q_lora_rank, kMaxWidth},
      {"mla.kv_lora_rank", m.mla.kv_lora_rank, kMaxWidth},
      {"mla.qk_rope_head_dim", m.mla.qk_rope_head_dim, kMaxCount},
      {"mla.v_head_dim", m.mla.v_head_dim, kMaxCount}};
  std::vector<ModelLimitExceeded> out;
  for (const ModelLimitExceeded& f : fields) {
    if (f.value > f.limit) out.push_back(f);
  }
  return out;
}

}  // namespace stepcast::spec
