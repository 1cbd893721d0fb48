#include "workload/model_size.h"

#include <algorithm>

#include "workload/pipeline_schedule.h"

namespace stepcast::workload {
namespace {

double norm_params(const spec::ModelSpec& m) {
  return m.norm == spec::NormKind::kLayerNorm ? 2.0 * m.hidden : 1.0 * m.hidden;
}

double mlp_params(const spec::ModelSpec& m, double ffn) {
  const double h = m.hidden;
  const double matrices = m.gated_mlp() ? 3 * h * ffn : 2 * h * ffn;
  const double biases = m.bias ? ffn * (m.gated_mlp() ? 2 : 1) + h : 0;
  return matrices + biases;
}

// MLA: each path through a down projection, its norm and an up projection, or queries projected
// directly; the keys' shared RoPE head comes out of the key-value down projection.
double mla_params(const spec::ModelSpec& m) {
  const spec::MlaSpec& a = m.mla;
  const double h = m.hidden, heads = m.heads, qk = m.effective_head_dim(), v = m.value_head_dim();
  const double q = a.q_lora_rank > 0
                       ? h * a.q_lora_rank + a.q_lora_rank + a.q_lora_rank * heads * qk
                       : h * heads * qk;
  const double kv = h * (a.kv_lora_rank + a.qk_rope_head_dim) + a.kv_lora_rank +
                    a.kv_lora_rank * heads * (qk - a.qk_rope_head_dim + v);
  return q + kv + heads * v * h;
}

double attention_params(const spec::ModelSpec& m) {
  if (m.is_mla()) return mla_params(m);
  const double h = m.hidden;
  const double hd = m.effective_head_dim();
  const double qkv = h * (m.heads + 2.0 * m.kv_heads) * hd;
  const double out = m.heads * hd * h;
  const double biases = m.bias ? (m.heads + 2.0 * m.kv_heads) * hd + h : 0;
  const double qk_norms = m.qk_norm ? 2 * hd : 0;
  return qkv + out + biases + qk_norms;
}

}  // namespace

ParamCounts param_counts(const spec::ModelSpec& m) {
  ParamCounts p;
  const double attention = attention_params(m) + (m.sandwich_norm ? 4 : 2) * norm_params(m);
  p.per_layer_dense = attention + mlp_params(m, m.ffn);
  if (m.is_moe()) {
    const double expert = mlp_params(m, m.moe.expert_ffn);
    const double router = static_cast<double>(m.hidden) * m.moe.experts;
    p.per_layer_moe = attention + router + expert * (1.0 * m.moe.experts + m.moe.shared_experts);
    p.per_layer_moe_active = attention + router + expert * (1.0 * m.moe.top_k + m.moe.shared_experts);
  }
  p.embedding = static_cast<double>(m.vocab) * m.hidden;
  if (m.position == spec::PositionKind::kLearned) p.embedding += static_cast<double>(m.max_seq) * m.hidden;
  p.output = m.tied_embeddings ? 0 : static_cast<double>(m.vocab) * m.hidden;
  p.final_norm = norm_params(m);
  const int moe_layers = m.moe_layers();
  const int dense_layers = m.layers - moe_layers;
  p.total = dense_layers * p.per_layer_dense + moe_layers * p.per_layer_moe + p.embedding +
            p.output + p.final_norm;
  // The output projection is multiplied by every token whether or not it is tied.
  p.active = dense_layers * p.per_layer_dense + moe_layers * p.per_layer_moe_active +
             static_cast<double>(m.vocab) * m.hidden + p.final_norm;
  return p;
}

double layer_params_per_gpu(const ParamCounts& p, const spec::Strategy& st, bool moe_layer) {
  if (!moe_layer) return p.per_layer_dense / st.tp;
  return (p.per_layer_dense + (p.per_layer_moe - p.per_layer_dense) / st.ep) / st.tp;
}

double layer_params_per_gpu(const ParamCounts& p, const spec::ModelSpec& m, const spec::Strategy& st) {
  if (!m.is_moe()) return layer_params_per_gpu(p, st, false);
  const double moe_fraction = m.moe_layer_fraction();
  return (1 - moe_fraction) * layer_params_per_gpu(p, st, false) + moe_fraction * layer_params_per_gpu(p, st, true);
}

double stage_params_per_gpu(const ParamCounts& p, const spec::ModelSpec& m, const spec::Strategy& st) {
  const double edge = st.pp == 1 ? (p.embedding + p.output) / st.tp
                                 : std::max(p.embedding / st.tp,
                                            p.output / st.tp + tied_embedding_copy_params(m, st));
  return static_cast<double>(m.layers) / st.pp * layer_params_per_gpu(p, m, st) + edge;
}

double stage_own_params_per_gpu(const ParamCounts& p, const spec::ModelSpec& m, const spec::Strategy& st, int stage) {
  return stage_own_params_per_gpu(p, m, st, stage, ChunkLayout(m.layers, st.pp * st.vp).stage(st.pp, stage));
}

double stage_own_params_per_gpu(const ParamCounts& p, const spec::ModelSpec& m, const spec::Strategy& st, int stage,
                                double layers) {
  return layers * layer_params_per_gpu(p, m, st) + (stage == 0 ? embedding_params_per_gpu(p, st) : 0) +
         (stage == st.pp - 1 ? head_params_per_gpu(p, m, st) : 0);
}

double embedding_params_per_gpu(const ParamCounts& p, const spec::Strategy& st) { return p.embedding / st.tp; }

double head_params_per_gpu(const ParamCounts& p, const spec::ModelSpec& m, const spec::Strategy& st) {
  return (p.output + p.final_norm) / st.tp + tied_embedding_copy_params(m, st);
}

double fsdp_root_params_per_gpu(const ParamCounts& p, const spec::ModelSpec& m, const spec::Strategy& st) {
  return has_fsdp_root_unit(st) ? embedding_params_per_gpu(p, st) + head_params_per_gpu(p, m, st) : 0;
}

double tied_embedding_copy_params(const spec::ModelSpec& m, const spec::Strategy& st) {
  if (!m.tied_embeddings || st.pp <= 1) return 0;
  return static_cast<double>(m.vocab) * m.hidden / st.tp;
}

double attention_flops_per_token(const spec::ModelSpec& m, int seq_len) {
  const double seq = seq_len;
  const double window = m.attention_window > 0 ? std::min<double>(m.attention_window, seq) : seq;
  const double keys = (m.layers - m.local_layers) * seq + m.local_layers * window;
  return 6.0 * m.heads * (1.0 * m.effective_head_dim() + m.value_head_dim()) * keys;
}

double model_flops_per_token(const ParamCounts& p, const spec::ModelSpec& m, int seq_len) {
  return 6 * p.active + attention_flops_per_token(m, seq_len);
}

double megatron_eq3_flops(const spec::ModelSpec& m, int global_batch, int seq_len) {
  const double B = global_batch, s = seq_len, l = m.layers, h = m.hidden, V = m.vocab;
  return 96 * B * s * l * h * h * (1 + s / (6 * h) + V / (16 * l * h));
}

}  // namespace stepcast::workload
