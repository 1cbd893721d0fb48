#include "spec/yaml_writer.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "spec/scenario.h"

namespace stepcast::spec {
namespace {

// A scalar as YAML would read it back: names quoted where YAML needs it, numbers in their
// shortest round-trip form.
std::string scalar(std::string_view text) {
  YAML::Emitter out;
  out << std::string(text);
  return out.c_str();
}

}  // namespace

std::string model_yaml(const ModelSpec& m, std::string_view header) {
  std::string out(header);
  const auto key = [&](std::string_view name, const auto& value) {
    out += fmt::format("{}: {}\n", name, value);
  };
  const auto flag = [](bool b) { return b ? "true" : "false"; };
  key("name", scalar(m.name));
  key("layers", m.layers);
  key("hidden", m.hidden);
  key("ffn", m.ffn);
  key("heads", m.heads);
  key("kv_heads", m.kv_heads);
  if (m.head_dim > 0) key("head_dim", m.head_dim);
  key("vocab", m.vocab);
  if (m.max_seq > 0) key("max_seq", m.max_seq);
  key("mlp", name(m.mlp));
  key("norm", name(m.norm));
  key("position", name(m.position));
  key("tied_embeddings", flag(m.tied_embeddings));
  key("bias", flag(m.bias));
  if (m.qk_norm) key("qk_norm", "true");
  if (m.sandwich_norm) key("sandwich_norm", "true");
  if (m.logit_softcap > 0) key("logit_softcap", m.logit_softcap);
  if (m.hidden_dropout > 0) key("hidden_dropout", m.hidden_dropout);
  if (m.attention_window > 0 && m.local_layers > 0) {
    key("attention_window", m.attention_window);
    key("local_layers", m.local_layers);
    if (m.attention_chunked) key("attention_chunked", "true");
  }
  if (m.is_mla()) {
    out += "mla:\n";
    key("  q_lora_rank", m.mla.q_lora_rank);
    key("  kv_lora_rank", m.mla.kv_lora_rank);
    key("  qk_rope_head_dim", m.mla.qk_rope_head_dim);
    key("  v_head_dim", m.mla.v_head_dim);
  }
  if (m.is_moe()) {
    out += "moe:\n";
    key("  experts", m.moe.experts);
    key("  top_k", m.moe.top_k);
    key("  expert_ffn", m.moe.expert_ffn);
    key("  shared_experts", m.moe.shared_experts);
    key("  dense_layers", m.moe.dense_layers);
    key("  layer_interval", m.moe.layer_interval);
    key("  capacity_factor", m.moe.capacity_factor);
  }
  return out;
}

std::string settings_yaml(const std::vector<std::pair<std::string, std::string>>& settings,
                          std::string_view header) {
  std::string out(header);
  for (const auto& [key, value] : settings) out += fmt::format("{}: {}\n", key, scalar(value));
  // No setting, every option at its default: an empty map, where comments alone read as no
  // document.
  if (settings.empty()) out += "{}\n";
  return out;
}

}  // namespace stepcast::spec
