#include "spec/yaml_reader.h"

#include <yaml-cpp/yaml.h>

#include <string>
#include <vector>

#include "core/error.h"
#include "core/spellcheck.h"
#include "core/units.h"
#include "spec/presets.h"

namespace stepcast::spec {
namespace {

using core::Dimension;

// One YAML document with its text, so that errors can quote the offending line.
struct Source {
  std::string name;
  std::vector<std::string> lines;

  Source(std::string_view n, std::string_view text) : name(n) {
    size_t start = 0;
    while (start <= text.size()) {
      const size_t end = text.find('\n', start);
      lines.emplace_back(text.substr(start, end == std::string_view::npos ? text.size() - start : end - start));
      if (end == std::string_view::npos) break;
      start = end + 1;
    }
  }

  [[noreturn]] void fail(const YAML::Mark& mark, const std::string& field, std::string message,
                         std::string hint = {}) const {
    Error e(ErrorKind::kInvalidInput, std::move(message), std::move(hint));
    if (mark.line >= 0) {
      e.at({name, mark.line + 1, mark.column + 1});
      if (static_cast<size_t>(mark.line) < lines.size()) e.with_excerpt(lines[static_cast<size_t>(mark.line)]);
    } else {
      e.at({name, 0, 0});
    }
    if (!field.empty()) e.in_field(field);
    throw e;
  }
};

// Reads the keys of one YAML map, remembering which were used so that the rest can be reported
// as unknown with a did-you-mean.
class MapReader {
 public:
  MapReader(const Source& src, const YAML::Node& node, std::string path)
      : src_(src), node_(node), path_(std::move(path)) {
    if (!node_.IsMap()) src_.fail(node_.Mark(), path_.empty() ? "(document)" : path_, "expected a map of keys");
  }

  bool has(const char* key) {
    known_.emplace_back(key);
    return static_cast<bool>(node_[key]);
  }

  YAML::Node node(const char* key, bool required = true) {
    known_.emplace_back(key);
    YAML::Node n = node_[key];
    if (!n && required) src_.fail(node_.Mark(), path_, std::string("missing required key \"") + key + "\"");
    return n;
  }

  std::string field(const char* key) const { return path_.empty() ? key : path_ + "." + key; }

  std::string text(const char* key, bool required = true, std::string fallback = {}) {
    const YAML::Node n = node(key, required);
    if (!n) return fallback;
    if (!n.IsScalar()) src_.fail(n.Mark(), field(key), "expected a string");
    return n.Scalar();
  }

  long long integer(const char* key, bool required = true, long long fallback = 0) {
    const YAML::Node n = node(key, required);
    if (!n) return fallback;
    try {
      const long long v = n.as<long long>();
      if (v < 0) src_.fail(n.Mark(), field(key), "expected a non-negative whole number, got " + n.Scalar());
      return v;
    } catch (const YAML::Exception&) {
      src_.fail(n.Mark(), field(key), "expected a whole number, got \"" + scalar(n) + "\"");
    }
  }

  double fraction(const char* key, bool required = true, double fallback = 0) {
    const YAML::Node n = node(key, required);
    if (!n) return fallback;
    double v = 0;
    try {
      v = n.as<double>();
    } catch (const YAML::Exception&) {
      src_.fail(n.Mark(), field(key), "expected a number, got \"" + scalar(n) + "\"");
    }
    if (v < 0) src_.fail(n.Mark(), field(key), "expected a non-negative number, got " + n.Scalar());
    return v;
  }

  double quantity(const char* key, Dimension dim, bool required = true, double fallback = 0) {
    const YAML::Node n = node(key, required);
    if (!n) return fallback;
    try {
      return core::parse_quantity(scalar(n), dim);
    } catch (const Error& e) {
      src_.fail(n.Mark(), field(key), e.message(), e.hint());
    }
  }

  bool boolean(const char* key, bool fallback) {
    const YAML::Node n = node(key, false);
    if (!n) return fallback;
    try {
      return n.as<bool>();
    } catch (const YAML::Exception&) {
      src_.fail(n.Mark(), field(key), "expected true or false, got \"" + scalar(n) + "\"");
    }
  }

  template <typename Enum>
  Enum choice(const char* key, const std::vector<std::pair<std::string, Enum>>& options, Enum fallback) {
    const YAML::Node n = node(key, false);
    if (!n) return fallback;
    const std::string v = scalar(n);
    std::vector<std::string> names;
    for (const auto& [name, value] : options) {
      if (name == v) return value;
      names.push_back(name);
    }
    src_.fail(n.Mark(), field(key), "unknown value \"" + v + "\"", core::suggestion(v, names));
  }

  /// Throws for the first key that no reader asked for.
  void reject_unknown_keys() const {
    for (const auto& entry : node_) {
      const std::string key = entry.first.Scalar();
      bool known = false;
      for (const std::string& k : known_) known = known || k == key;
      if (!known) {
        src_.fail(entry.first.Mark(), field(key.c_str()), "unknown key \"" + key + "\"",
                  core::suggestion(key, known_));
      }
    }
  }

 private:
  std::string scalar(const YAML::Node& n) const { return n.IsScalar() ? n.Scalar() : std::string("(not a scalar)"); }

  const Source& src_;
  YAML::Node node_;
  std::string path_;
  std::vector<std::string> known_;
};

YAML::Node parse(const Source& src, std::string_view text) {
  try {
    return YAML::Load(std::string(text));
  } catch (const YAML::ParserException& e) {
    src.fail(e.mark, "", "malformed YAML: " + e.msg);
  }
}

int to_int(long long v) { return static_cast<int>(std::min<long long>(v, 1'000'000'000)); }

GpuSpec gpu_from(const Source& src, MapReader r) {
  GpuSpec g;
  g.name = r.text("name");
  g.peak_fp32_flops = r.quantity("peak_fp32", Dimension::kFlopRate);
  g.peak_tf32_flops = r.quantity("peak_tf32", Dimension::kFlopRate, false);
  g.peak_bf16_flops = r.quantity("peak_bf16", Dimension::kFlopRate);
  g.peak_fp8_flops = r.quantity("peak_fp8", Dimension::kFlopRate, false);
  g.hbm_bytes = r.quantity("hbm", Dimension::kBytes);
  g.hbm_bandwidth_Bps = r.quantity("hbm_bandwidth", Dimension::kBandwidth);
  g.tdp_w = r.quantity("tdp", Dimension::kPower);
  g.power_limit_w = r.quantity("power_limit", Dimension::kPower, false);
  g.sm_count = to_int(r.integer("sm_count"));
  g.matmul_efficiency = r.fraction("matmul_efficiency");
  g.fp8_matmul_efficiency = r.fraction("fp8_matmul_efficiency", false);
  g.memory_efficiency = r.fraction("memory_efficiency");
  g.attention_efficiency = r.fraction("attention_efficiency");
  g.kernel_overhead_s = r.quantity("kernel_overhead", Dimension::kTime);
  r.reject_unknown_keys();
  for (const double f : {g.matmul_efficiency, g.memory_efficiency, g.attention_efficiency}) {
    if (f <= 0 || f > 1) src.fail(YAML::Mark::null_mark(), "", "efficiencies must lie in (0, 1]");
  }
  return g;
}

}  // namespace

ModelSpec read_model_yaml(std::string_view source_name, std::string_view text) {
  const Source src(source_name, text);
  MapReader r(src, parse(src, text), "");
  ModelSpec m;
  m.name = r.text("name");
  m.layers = to_int(r.integer("layers"));
  m.hidden = to_int(r.integer("hidden"));
  m.ffn = to_int(r.integer("ffn"));
  m.heads = to_int(r.integer("heads"));
  m.kv_heads = to_int(r.integer("kv_heads", false, m.heads));
  m.head_dim = to_int(r.integer("head_dim", false, 0));
  m.vocab = to_int(r.integer("vocab"));
  m.max_seq = to_int(r.integer("max_seq"));
  m.mlp = r.choice<MlpKind>("mlp", {{"gelu", MlpKind::kGelu}, {"swiglu", MlpKind::kSwiglu}}, MlpKind::kGelu);
  m.norm = r.choice<NormKind>("norm", {{"layernorm", NormKind::kLayerNorm}, {"rmsnorm", NormKind::kRmsNorm}},
                              NormKind::kLayerNorm);
  m.position = r.choice<PositionKind>("position",
                                      {{"learned", PositionKind::kLearned}, {"rope", PositionKind::kRope},
                                       {"alibi", PositionKind::kAlibi}, {"none", PositionKind::kNone}},
                                      PositionKind::kLearned);
  m.tied_embeddings = r.boolean("tied_embeddings", false);
  m.bias = r.boolean("bias", false);
  if (r.has("moe")) {
    MapReader moe(src, r.node("moe"), "moe");
    m.moe.experts = to_int(moe.integer("experts"));
    m.moe.top_k = to_int(moe.integer("top_k"));
    m.moe.expert_ffn = to_int(moe.integer("expert_ffn"));
    m.moe.shared_experts = to_int(moe.integer("shared_experts", false, 0));
    m.moe.dense_layers = to_int(moe.integer("dense_layers", false, 0));
    m.moe.capacity_factor = moe.fraction("capacity_factor", false, 1.0);
    moe.reject_unknown_keys();
  }
  r.reject_unknown_keys();
  if (m.layers == 0 || m.hidden == 0 || m.heads == 0 || m.vocab == 0) {
    src.fail(YAML::Mark::null_mark(), "", "layers, hidden, heads and vocab must be at least 1");
  }
  return m;
}

GpuSpec read_gpu_yaml(std::string_view source_name, std::string_view text) {
  const Source src(source_name, text);
  return gpu_from(src, MapReader(src, parse(src, text), ""));
}

ClusterSpec read_cluster_yaml(std::string_view source_name, std::string_view text) {
  const Source src(source_name, text);
  MapReader r(src, parse(src, text), "");
  ClusterSpec c;
  c.name = r.text("name");
  const YAML::Node gpu = r.node("gpu");
  if (gpu.IsScalar()) {
    try {
      c.gpu = gpu_preset(gpu.Scalar());
    } catch (const Error& e) {
      src.fail(gpu.Mark(), "gpu", e.message(), e.hint());
    }
  } else {
    c.gpu = gpu_from(src, MapReader(src, gpu, "gpu"));
  }
  c.gpus_per_node = to_int(r.integer("gpus_per_node"));
  c.max_gpus = to_int(r.integer("max_gpus", false, 0));
  const YAML::Node levels = r.node("levels");
  if (!levels.IsSequence() || levels.size() == 0) {
    src.fail(levels.Mark(), "levels", "expected a list of topology levels, innermost first");
  }
  for (size_t i = 0; i < levels.size(); ++i) {
    MapReader l(src, levels[i], "levels[" + std::to_string(i) + "]");
    TopologyLevel level;
    level.name = l.text("name");
    level.domain_gpus = to_int(l.integer("domain_gpus"));
    if (l.has("bandwidth_per_gpu")) {
      level.bandwidth_per_gpu_Bps = l.quantity("bandwidth_per_gpu", Dimension::kBandwidth);
      if (l.has("nics_per_node") || l.has("nic_bandwidth")) {
        src.fail(levels[i].Mark(), l.field("bandwidth_per_gpu"),
                 "give bandwidth_per_gpu or nics_per_node with nic_bandwidth, not both");
      }
    } else {
      const double nics = static_cast<double>(l.integer("nics_per_node"));
      const double nic = l.quantity("nic_bandwidth", Dimension::kBandwidth);
      level.bandwidth_per_gpu_Bps = nics * nic / std::max(1, c.gpus_per_node);
    }
    level.latency_s = l.quantity("latency", Dimension::kTime);
    level.oversubscription = l.fraction("oversubscription", false, 1.0);
    if (level.oversubscription < 1) {
      src.fail(levels[i]["oversubscription"].Mark(), l.field("oversubscription"),
               "expected a ratio >= 1 (7 for 1:7 oversubscription)");
    }
    l.reject_unknown_keys();
    c.levels.push_back(level);
  }
  r.reject_unknown_keys();
  return c;
}

}  // namespace stepcast::spec
