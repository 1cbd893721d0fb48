#include "spec/yaml_reader.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "core/error.h"
#include "core/units.h"
#include "spec/presets.h"
#include "spec/yaml_document.h"

namespace stepcast::spec {
namespace {

using core::Dimension;

// gemm_efficiency: {sizes: [...], bf16: [m][n][k]}, measured GEMM rates (GpuSpec::GemmGrid).
GpuSpec::GemmGrid gemm_grid_from(MapReader r) {
  GpuSpec::GemmGrid g;
  const Source& src = r.source();
  const YAML::Node sizes = r.value("sizes");
  if (!sizes.IsSequence() || sizes.size() < 2) {
    src.fail(sizes.Mark(), r.field("sizes"), "expected a list of at least 2 GEMM dimensions, got " + describe(sizes));
  }
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    const std::string field = r.field("sizes") + "[" + std::to_string(i) + "]";
    const double low = g.sizes.empty() ? 1 : g.sizes.back();
    const double size = number_in(src, sizes[i], field, low, std::numeric_limits<double>::infinity(), !g.sizes.empty());
    g.sizes.push_back(size);
  }
  const std::size_t count = g.sizes.size();
  const YAML::Node grid = r.value("bf16");
  require_list(src, grid, r.field("bf16"), count);
  for (std::size_t m = 0; m < count; ++m) {
    const std::string at_m = r.field("bf16") + "[" + std::to_string(m) + "]";
    require_list(src, grid[m], at_m, count);
    for (std::size_t n = 0; n < count; ++n) {
      const std::string at_n = at_m + "[" + std::to_string(n) + "]";
      require_list(src, grid[m][n], at_n, count);
      for (std::size_t k = 0; k < count; ++k) {
        g.efficiency.push_back(number_in(src, grid[m][n][k], at_n + "[" + std::to_string(k) + "]", kSmallestRateFraction, 1, false));
      }
    }
  }
  r.reject_unknown_keys();
  return g;
}

GpuSpec gpu_from(MapReader r) {
  GpuSpec g;
  g.name = r.text("name");
  g.peak_fp32_flops = r.quantity("peak_fp32", Dimension::kFlopRate);
  g.peak_tf32_flops = r.quantity("peak_tf32", Dimension::kFlopRate);
  g.peak_bf16_flops = r.positive_quantity("peak_bf16", Dimension::kFlopRate);
  g.peak_fp8_flops = r.quantity("peak_fp8", Dimension::kFlopRate, 0);
  g.hbm_bytes = r.positive_quantity("hbm", Dimension::kBytes);
  g.hbm_bandwidth_Bps = r.positive_quantity("hbm_bandwidth", Dimension::kBandwidth);
  g.tdp_w = r.positive_quantity("tdp", Dimension::kPower);
  g.power_limit_w = r.quantity("power_limit", Dimension::kPower, 0);
  g.sm_count = r.count("sm_count", 1);
  g.collective_sms = r.count("collective_sms", 0, 0);
  if (g.collective_sms >= g.sm_count) {
    r.source().fail(r.value("collective_sms").Mark(), r.field("collective_sms"),
                    "collective_sms " + std::to_string(g.collective_sms) + " leaves no SM of the " +
                        std::to_string(g.sm_count) + " for compute; valid: 0 to " + std::to_string(g.sm_count - 1));
  }
  g.matmul_efficiency = r.fraction("matmul_efficiency");
  g.fp8_matmul_efficiency = r.fraction("fp8_matmul_efficiency", 0);
  g.memory_efficiency = r.fraction("memory_efficiency");
  g.attention_efficiency = r.fraction("attention_efficiency");
  // Measured half points are hundreds of keys; a million keeps a typo from pricing attention absurdly.
  g.attention_half_keys = r.number("attention_half_keys", 0, 1e6, false, g.attention_half_keys);
  g.cudnn_attention_half_keys = r.number("cudnn_attention_half_keys", 0, 1e6, false, g.cudnn_attention_half_keys);
  g.cudnn_attention_efficiency = r.fraction("cudnn_attention_efficiency", 0);
  g.attention_head64_rate = r.fraction("attention_head64_rate", 1);
  g.cudnn_attention_head64_rate = r.fraction("cudnn_attention_head64_rate", 1);
  g.misaligned_gemm_efficiency = r.fraction("misaligned_gemm_efficiency", 0);
  // A chain of a few passes over FP32 copies moves tens to hundreds of bytes per element; a
  // thousand keeps a typo from pricing it absurdly.
  g.eager_rmsnorm_bytes = r.number("eager_rmsnorm_bytes", 0, 1000, true, g.eager_rmsnorm_bytes);
  g.eager_rmsnorm_backward_bytes =
      r.number("eager_rmsnorm_backward_bytes", 0, 1000, true, g.eager_rmsnorm_backward_bytes);
  g.optimizer_memory_efficiency = r.fraction("optimizer_memory_efficiency", 0);
  g.kernel_overhead_s = r.quantity("kernel_overhead", Dimension::kTime);
  if (r.has("gemm_efficiency")) {
    g.gemm_grid = gemm_grid_from(MapReader(r.source(), r.value("gemm_efficiency"), r.field("gemm_efficiency")));
  }
  r.reject_unknown_keys();
  return g;
}

MoeSpec moe_from(MapReader r, const ModelSpec& m) {
  MoeSpec moe;
  moe.experts = r.count("experts", 1);
  moe.top_k = r.count("top_k", 1);
  if (moe.top_k > moe.experts) {
    r.source().fail(r.value("top_k").Mark(), r.field("top_k"),
                    "top_k " + std::to_string(moe.top_k) + " exceeds the " +
                        std::to_string(moe.experts) + " experts");
  }
  moe.expert_ffn = r.count("expert_ffn", 1);
  moe.shared_experts = r.count("shared_experts", 0, 0);
  moe.dense_layers = r.count("dense_layers", 0, 0);
  if (moe.dense_layers >= m.layers) {
    r.source().fail(r.value("dense_layers").Mark(), r.field("dense_layers"),
                    "dense_layers " + std::to_string(moe.dense_layers) +
                        " leaves no MoE layer among the " + std::to_string(m.layers) + " layers");
  }
  moe.layer_interval = r.count("layer_interval", 1, 1);
  moe.capacity_factor =
      r.has("capacity_factor")
          ? r.number("capacity_factor", 0, std::numeric_limits<double>::infinity(), true)
          : 1.0;
  r.reject_unknown_keys();
  return moe;
}

// attention_window with local_layers (default: every layer) and attention_chunked; neither of
// the two without the window.
void read_attention_window(const Source& src, MapReader& r, ModelSpec& m) {
  if (!r.has("attention_window")) {
    for (const char* key : {"local_layers", "attention_chunked"}) {
      if (r.has(key)) {
        src.fail(r.value(key).Mark(), key, std::string(key) + " without an attention_window",
                 "give attention_window, the positions a query sees on those layers");
      }
    }
    return;
  }
  m.attention_window = r.count("attention_window", 1);
  m.local_layers = r.count("local_layers", 1, m.layers);
  if (r.has("attention_chunked")) m.attention_chunked = r.boolean("attention_chunked");
  if (m.local_layers > m.layers) {
    src.fail(r.value("local_layers").Mark(), "local_layers",
             "local_layers " + std::to_string(m.local_layers) + " exceeds the " +
                 std::to_string(m.layers) + " layers");
  }
}

// Multi-head latent attention: the rotary part is a part of head_dim.
MlaSpec mla_from(MapReader r, const ModelSpec& m) {
  MlaSpec mla;
  mla.q_lora_rank = r.count("q_lora_rank", 0, 0);
  mla.kv_lora_rank = r.count("kv_lora_rank", 1);
  mla.qk_rope_head_dim = r.count("qk_rope_head_dim", 1);
  if (mla.qk_rope_head_dim >= m.effective_head_dim()) {
    r.source().fail(
        r.value("qk_rope_head_dim").Mark(), r.field("qk_rope_head_dim"),
        "qk_rope_head_dim " + std::to_string(mla.qk_rope_head_dim) +
            " leaves nothing of head_dim " + std::to_string(m.effective_head_dim()),
        "head_dim is the whole query and key head: qk_nope_head_dim + qk_rope_head_dim");
  }
  mla.v_head_dim = r.count("v_head_dim", 1);
  r.reject_unknown_keys();
  return mla;
}

}  // namespace

ModelSpec read_model_yaml(std::string_view source_name, std::string_view text) {
  return read_document(source_name, text, [](const Source& src, const YAML::Node& root) {
    MapReader r(src, root, "");
    r.read_later({"moe", "mla"});
    ModelSpec m;
    m.name = r.text("name");
    m.layers = r.count("layers", 1);
    m.hidden = r.count("hidden", 1);
    m.ffn = r.count("ffn", 1);
    m.heads = r.count("heads", 1);
    m.kv_heads = r.count("kv_heads", 1, m.heads);
    if (m.heads % m.kv_heads != 0) {
      src.fail(r.value("kv_heads").Mark(), "kv_heads",
               "kv_heads " + std::to_string(m.kv_heads) + " does not divide heads " +
                   std::to_string(m.heads));
    }
    m.head_dim = r.count("head_dim", 1, 0);
    if (!m.head_dim_whole()) {
      src.fail(r.value("heads").Mark(), "heads",
               std::to_string(m.heads) + " heads do not divide hidden " + std::to_string(m.hidden),
               "give head_dim, or a head count that divides the hidden size");
    }
    m.vocab = r.count("vocab", 1);
    m.max_seq = r.count("max_seq", 1, 0);
    m.mlp = r.choice<MlpKind>(
        "mlp",
        {{"gelu", MlpKind::kGelu}, {"swiglu", MlpKind::kSwiglu}, {"geglu", MlpKind::kGeglu}});
    m.norm = r.choice<NormKind>(
        "norm", {{"layernorm", NormKind::kLayerNorm}, {"rmsnorm", NormKind::kRmsNorm}});
    m.position = r.choice<PositionKind>("position", {{"learned", PositionKind::kLearned},
                                                     {"rope", PositionKind::kRope},
                                                     {"alibi", PositionKind::kAlibi},
                                                     {"none", PositionKind::kNone}});
    if (m.position == PositionKind::kLearned && m.max_seq == 0) {
      src.fail(r.value("position").Mark(), "max_seq",
               "learned positions need max_seq, the positions the table holds");
    }
    m.tied_embeddings = r.boolean("tied_embeddings");
    m.bias = r.boolean("bias");
    if (r.has("qk_norm")) m.qk_norm = r.boolean("qk_norm");
    if (r.has("sandwich_norm")) m.sandwich_norm = r.boolean("sandwich_norm");
    if (r.has("logit_softcap"))
      m.logit_softcap = r.number("logit_softcap", 0, std::numeric_limits<double>::infinity(), true);
    if (r.has("hidden_dropout")) m.hidden_dropout = r.number("hidden_dropout", 0, 1, false);
    read_attention_window(src, r, m);
    if (r.has("moe")) m.moe = moe_from(MapReader(src, r.value("moe"), "moe"), m);
    if (r.has("mla")) {
      m.mla = mla_from(MapReader(src, r.value("mla"), "mla"), m);
      // Every head reads the shared latent: keys and values have as many heads as queries.
      if (m.kv_heads != m.heads) {
        src.fail(r.value("mla").Mark(), "mla",
                 "multi-head latent attention needs kv_heads equal to heads " +
                     std::to_string(m.heads) + ", got " + std::to_string(m.kv_heads),
                 "drop kv_heads, or set it to heads");
      }
    }
    r.reject_unknown_keys();
    for (const ModelLimitExceeded& over : model_limits_exceeded(m)) {
      const std::string key(over.key);
      const size_t dot = key.find('.');
      const YAML::Node at = dot == std::string::npos ? r.value(key) : r.value(key.substr(0, dot))[key.substr(dot + 1)];
      src.fail(at.Mark(), key, over.message());
    }
    return m;
  });
}

GpuSpec read_gpu_yaml(std::string_view source_name, std::string_view text) {
  return read_document(source_name, text, [](const Source& src, const YAML::Node& root) {
    return gpu_from(MapReader(src, root, ""));
  });
}

namespace {

// The GPU a cluster file's `gpu: NAME` names: a preset, or a GPU file (as `stepcast presets show`
// writes one) whose relative path is taken from the cluster file's directory. An error inside that
// file is reported there; any other (an unknown preset, a file that cannot be read) at `gpu:`.
GpuSpec named_gpu(const Source& src, std::string_view cluster_file, const YAML::Node& gpu) {
  const std::filesystem::path name(gpu.Scalar());
  const bool file = written_as_path(gpu.Scalar());
  const std::filesystem::path path =
      file && name.is_relative() ? std::filesystem::path(cluster_file).parent_path() / name : name;
  std::error_code ignored;
  if (file && std::filesystem::equivalent(path, cluster_file, ignored)) {
    src.fail(gpu.Mark(), "gpu", path.string() + " is this cluster file itself",
             "name a GPU file (stepcast presets show h100-sxm > my-gpu.yaml writes one) or a GPU preset");
  }
  try {
    return load_gpu(path.string());
  } catch (const Error& e) {
    if (e.where().line > 0) throw;
    const std::string in_file = e.where().file.empty() ? std::string() : e.where().file + ": ";
    src.fail(gpu.Mark(), "gpu", in_file + e.message(), e.hint());
  }
}

}  // namespace

ClusterSpec read_cluster_yaml(std::string_view source_name, std::string_view text) {
  return read_document(source_name, text, [source_name](const Source& src, const YAML::Node& root) {
    MapReader r(src, root, "");
    ClusterSpec c;
    c.name = r.text("name");
    const YAML::Node gpu = r.value("gpu");
    if (gpu.IsScalar()) {
      c.gpu = named_gpu(src, source_name, gpu);
    } else {
      c.gpu = gpu_from(MapReader(src, gpu, "gpu"));
    }
    c.gpus_per_node = r.count("gpus_per_node", 1);
    c.max_gpus = r.count("max_gpus", 0, 0);
    const YAML::Node levels = r.value("levels");
    if (!levels.IsSequence() || levels.size() == 0) {
      src.fail(levels.Mark(), "levels",
               "expected a list of topology levels, innermost first, got " + describe(levels));
    }
    for (size_t i = 0; i < levels.size(); ++i) {
      MapReader l(src, levels[i], "levels[" + std::to_string(i) + "]");
      TopologyLevel level;
      level.name = l.text("name");
      level.domain_gpus = l.count("domain_gpus", 0);
      const int previous = c.levels.empty() ? 0 : c.levels.back().domain_gpus;
      if (!c.levels.empty() && previous == 0) {
        src.fail(levels[i].Mark(), l.field("domain_gpus"),
                 "a level follows one that spans the whole cluster (domain_gpus 0)",
                 "only the outermost level may have domain_gpus 0");
      }
      if (level.domain_gpus != 0 && level.domain_gpus <= previous) {
        src.fail(
            l.value("domain_gpus").Mark(), l.field("domain_gpus"),
            "expected more than the " + std::to_string(previous) + " GPUs of the level inside it",
            "levels are listed innermost first");
      }
      // Domains nest: one is made of whole domains of the level inside it, and either lies
      // within a node or is made of whole nodes.
      if (level.domain_gpus != 0 && previous != 0 && level.domain_gpus % previous != 0) {
        src.fail(l.value("domain_gpus").Mark(), l.field("domain_gpus"),
                 "expected a multiple of the " + std::to_string(previous) +
                     " GPUs of the level inside it, got " + std::to_string(level.domain_gpus));
      }
      if (level.domain_gpus != 0 && c.gpus_per_node % level.domain_gpus != 0 &&
          level.domain_gpus % c.gpus_per_node != 0) {
        src.fail(l.value("domain_gpus").Mark(), l.field("domain_gpus"),
                 std::to_string(level.domain_gpus) + " GPUs neither lie within a node of " +
                     std::to_string(c.gpus_per_node) + " nor make whole nodes",
                 "give a divisor or a multiple of gpus_per_node");
      }
      for (const TopologyLevel& inner : c.levels) {
        if (inner.name == level.name) {
          src.fail(l.value("name").Mark(), l.field("name"), "a second level named \"" + level.name + "\"",
                   "each level needs its own name: reports and traces tell the levels apart by it");
        }
      }
      const bool nic_form = l.has("nics_per_node") || l.has("nic_bandwidth");
      if (l.has("bandwidth_per_gpu")) {
        if (nic_form) {
          const char* extra = l.has("nics_per_node") ? "nics_per_node" : "nic_bandwidth";
          src.fail(l.key_mark(extra), l.field(extra),
                   "give bandwidth_per_gpu or nics_per_node with nic_bandwidth, not both");
        }
        level.bandwidth_per_gpu_Bps =
            l.positive_quantity("bandwidth_per_gpu", Dimension::kBandwidth);
      } else if (nic_form) {
        const double nics = l.count("nics_per_node", 1);
        const double nic_bandwidth = l.positive_quantity("nic_bandwidth", Dimension::kBandwidth);
        level.bandwidth_per_gpu_Bps = nics * nic_bandwidth / c.gpus_per_node;
      } else {
        src.fail(levels[i].Mark(), l.field("bandwidth_per_gpu"),
                 "missing required key \"bandwidth_per_gpu\" (or \"nics_per_node\" with "
                 "\"nic_bandwidth\")");
      }
      level.latency_s = l.quantity("latency", Dimension::kTime);
      // Light in fibre crosses half the globe in about 100 ms: a hop of a second or more is a
      // slip of the unit, and over a step's messages it overflowed the step's time unnamed.
      if (level.latency_s > 1) {
        src.fail(l.value("latency").Mark(), l.field("latency"),
                 "expected at most 1 s, got " + describe(l.value("latency")));
      }
      level.oversubscription =
          l.has("oversubscription")
              ? l.number("oversubscription", 1, std::numeric_limits<double>::infinity(), false)
              : 1.0;
      l.reject_unknown_keys();
      c.levels.push_back(level);
    }
    r.reject_unknown_keys();
    return c;
  });
}

std::vector<YamlSetting> read_yaml_settings(std::string_view source_name, std::string_view text) {
  return read_document(source_name, text, [](const Source& src, const YAML::Node& root) {
    const MapReader checked(src, root, "");  // a map, each key once
    std::vector<YamlSetting> settings;
    for (const auto& kv : root) {
      const std::string key = kv.first.Scalar();
      if (!kv.second.IsScalar() || kv.second.Scalar().empty()) {
        // yaml-cpp marks a missing value where the next line starts; the key is where it is missing.
        const YAML::Mark& at = kv.second.IsNull() ? kv.first.Mark() : kv.second.Mark();
        src.fail(at, key, "expected one value, got " + describe(kv.second));
      }
      // Spaces and line breaks around a value (a quoted "2 ", a block scalar's last line break)
      // are not part of it: options would read "2\n" as no number.
      std::string_view value = kv.second.Scalar();
      value.remove_prefix(std::min(value.size(), value.find_first_not_of(" \t\r\n")));
      value.remove_suffix(value.size() - std::min(value.size(), value.find_last_not_of(" \t\r\n") + 1));
      if (value.empty()) src.fail(kv.second.Mark(), key, "expected one value, got only spaces");
      settings.push_back({key, std::string(value), src.location(kv.first.Mark()),
                          src.location(kv.second.Mark()), src.line_at(kv.first.Mark())});
    }
    return settings;
  });
}

}  // namespace stepcast::spec
