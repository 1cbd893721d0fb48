// ModelSpec, GpuSpec and ClusterSpec from YAML: the format of the presets in data/ and of the
// files `stepcast presets show NAME` prints for editing.
//
//   spec::ClusterSpec c = spec::read_cluster_yaml("my-cluster.yaml", core::read_file(path));
//
// Every dimensional value carries its unit ("900 GB/s", "400 Gbit/s", "80 GiB", "2 us",
// "989 TFLOP/s", "700 W"); counts are whole numbers, efficiencies plain fractions. The keys of each
// schema are those of the files in data/{models,gpus,clusters}/, which document them.
//
// Errors: malformed YAML, an unknown or duplicated key (with a did-you-mean), a missing required
// key, a value of the wrong type or out of range, a bare number where a unit is required (the hint
// lists the accepted units) and an unknown enum value all throw Error(kInvalidInput) located at
// source_name:line:column (1-based), naming the field (e.g. `levels[1].bandwidth_per_gpu`) and
// quoting the offending line. No other exception escapes.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "spec/cluster_spec.h"
#include "spec/gpu_spec.h"
#include "spec/model_spec.h"

namespace stepcast::spec {

/// Required: name, layers, hidden, ffn, heads, vocab, mlp (gelu|swiglu|geglu), norm
/// (layernorm|rmsnorm), position (learned|rope|alibi|none), tied_embeddings, bias, and max_seq
/// with learned positions (optional otherwise). Optional: kv_heads (default heads; must divide
/// heads), head_dim, qk_norm, sandwich_norm, logit_softcap, hidden_dropout, attention_window
/// {local_layers, attention_chunked}, moe {experts, top_k, expert_ffn, shared_experts,
/// dense_layers, layer_interval, capacity_factor}, mla {q_lora_rank, kv_lora_rank,
/// qk_rope_head_dim, v_head_dim}.
ModelSpec read_model_yaml(std::string_view source_name, std::string_view text);

/// Required: name, peak_fp32, peak_tf32, peak_bf16 (FLOP rates), hbm, hbm_bandwidth, tdp,
/// sm_count, matmul_efficiency, memory_efficiency, attention_efficiency (fractions of the peak, 1e-6 to 1),
/// kernel_overhead. Optional: peak_fp8, power_limit, fp8_matmul_efficiency, collective_sms
/// (0 to sm_count - 1, default 0), attention_half_keys (0 to 10^6, default 384).
GpuSpec read_gpu_yaml(std::string_view source_name, std::string_view text);

/// Required: name, gpu (a GPU preset name or an inline map in the GPU schema), gpus_per_node,
/// levels (innermost first), each {name, domain_gpus (0 = the whole cluster, outermost only),
/// latency, and bandwidth_per_gpu per direction or nics_per_node with nic_bandwidth, converted to
/// nics_per_node * nic_bandwidth / gpus_per_node}. Optional: max_gpus (0 = unbounded), a level's
/// oversubscription (>= 1, default 1; 7 for 1:7).
ClusterSpec read_cluster_yaml(std::string_view source_name, std::string_view text);

/// One `key: value` of a flat YAML map (a scenario file), with where its key and its value stand
/// and the text of its line, for the errors that a reader of the setting raises later.
struct YamlSetting {
  std::string key, value;
  SourceLocation key_at, value_at;
  std::string line;
};

/// The settings of a flat map of scalars, in file order. Malformed YAML, a document that is not
/// a map, a duplicated key and a value that is empty, a list or a map throw as above.
std::vector<YamlSetting> read_yaml_settings(std::string_view source_name, std::string_view text);

}  // namespace stepcast::spec
