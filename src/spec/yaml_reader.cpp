#include "spec/yaml_reader.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <initializer_list>
#include <climits>
#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "core/error.h"
#include "core/spellcheck.h"
#include "core/units.h"
#include "core/utf8.h"
#include "spec/presets.h"

namespace stepcast::spec {
namespace {

using core::Dimension;

// One YAML document and its lines, so that an error can quote the line it points at.
class Source {
 public:
  Source(std::string_view name, std::string_view text) : name_(name) {
    size_t start = 0;
    for (;;) {
      const size_t end = text.find('\n', start);
      std::string_view line =
          text.substr(start, end == std::string_view::npos ? text.npos : end - start);
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      lines_.emplace_back(line);
      if (end == std::string_view::npos) break;
      start = end + 1;
    }
  }

  // Where `mark` (yaml-cpp's 0-based line and column) points, 1-based; a null mark locates the
  // whole file.
  SourceLocation location(const YAML::Mark& mark) const {
    return {name_, mark.line >= 0 ? mark.line + 1 : 0, mark.line >= 0 ? mark.column + 1 : 0};
  }

  // The text of the line `mark` points at, or "" where it points at none.
  std::string line_at(const YAML::Mark& mark) const {
    const bool inside = mark.line >= 0 && static_cast<size_t>(mark.line) < lines_.size();
    return inside ? lines_[static_cast<size_t>(mark.line)] : std::string();
  }

  // Throws Error(kInvalidInput) at `mark`, quoting its line.
  [[noreturn]] void fail(const YAML::Mark& mark, const std::string& field, std::string message,
                         std::string hint = {}) const {
    Error e(ErrorKind::kInvalidInput, std::move(message), std::move(hint));
    e.at(location(mark));
    const std::string excerpt = line_at(mark);
    if (!excerpt.empty()) e.with_excerpt(excerpt);
    if (!field.empty()) e.in_field(field);
    throw e;
  }

 private:
  std::string name_;
  std::vector<std::string> lines_;
};

std::string describe(const YAML::Node& n) {
  if (n.IsScalar()) {
    const std::string& v = n.Scalar();
    return "\"" + (v.size() > 60 ? v.substr(0, 60) + "..." : v) + "\"";
  }
  if (n.IsMap()) return n.size() == 0 ? "an empty map" : "a map";
  if (n.IsSequence()) return n.size() == 0 ? "an empty list" : "a list";
  return "nothing";
}

std::string format_number(double v) {
  std::string s = std::to_string(v);
  s.erase(s.find_last_not_of('0') + 1);
  if (s.back() == '.') s.pop_back();
  return s;
}

// The smallest fraction of a peak rate a GPU file may give: a millionth, 1 GFLOP/s of an H100's
// BF16 peak, a three-thousandth of the slowest rate measured in data/gpus (0.3% of the B200's peak,
// its smallest GEMM). The cost model divides by these; a denormal one gave an infinite step time
// that named no field.
constexpr double kSmallestRateFraction = 1e-6;

// The plain number `n` (at `field`) within [low, high], or (low, high] when low_open.
double number_in(const Source& src, const YAML::Node& n, const std::string& field, double low, double high,
                 bool low_open) {
  const std::string s = n.IsScalar() ? n.Scalar() : std::string();
  double v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  const bool parsed = !s.empty() && ec == std::errc() && end == s.data() + s.size();
  if (!parsed || !std::isfinite(v) || v > high || v < low || (low_open && v == low)) {
    const std::string range = std::isinf(high) ? std::string(low_open ? "> " : ">= ") + format_number(low)
                                               : std::string(low_open ? "in (" : "in [") + format_number(low) +
                                                     ", " + format_number(high) + "]";
    src.fail(n.Mark(), field, "expected a number " + range + ", got " + describe(n));
  }
  return v;
}

// The keys of one YAML map. Readers ask for keys by name; whatever no reader asked for is then
// reported as unknown, with the nearest known key as a suggestion.
class MapReader {
 public:
  MapReader(const Source& src, const YAML::Node& node, std::string path)
      : src_(src), node_(node), path_(std::move(path)) {
    if (!node_.IsMap()) {
      src_.fail(node_.Mark(), path_, "expected a map of keys, got " + describe(node_));
    }
    for (const auto& kv : node_) {
      if (!kv.first.IsScalar()) src_.fail(kv.first.Mark(), path_, "expected a key name");
      const std::string key = kv.first.Scalar();
      for (const Entry& e : entries_) {
        if (e.key == key) src_.fail(kv.first.Mark(), path_, "duplicate key \"" + key + "\"");
      }
      entries_.push_back({key, kv.first.Mark(), kv.second});
    }
  }

  const Source& source() const { return src_; }
  std::string field(const std::string& key) const {
    return path_.empty() ? key : path_ + "." + key;
  }

  bool has(const std::string& key) {
    note_known(key);
    return find(key) != nullptr;
  }

  // The value of a required key; throws naming the key when it is absent.
  YAML::Node value(const std::string& key) {
    note_known(key);
    const Entry* e = find(key);
    if (e == nullptr) {
      // A misspelt required key is reported as the typo it is, not as a missing key; a key read
      // already, or to be read later, is no typo ("moe" beside a missing "mlp").
      for (const Entry& other : entries_) {
        if (in_schema(other.key)) continue;
        if (!core::closest_match(other.key, {key}).empty()) {
          src_.fail(other.key_mark, path_, "unknown key \"" + other.key + "\"",
                    core::suggestion(other.key, {key}));
        }
      }
      src_.fail(node_.Mark(), path_, "missing required key \"" + key + "\"");
    }
    return e->value;
  }

  // Keys this map may hold that are read after its required ones.
  void read_later(std::initializer_list<const char*> keys) { later_.insert(later_.end(), keys.begin(), keys.end()); }

  const YAML::Mark& key_mark(const std::string& key) const { return find(key)->key_mark; }

  std::string text(const std::string& key) {
    const YAML::Node n = value(key);
    if (!n.IsScalar() || n.Scalar().empty()) {
      src_.fail(n.Mark(), field(key), "expected a name, got " + describe(n));
    }
    return n.Scalar();
  }

  // A whole number >= min, no larger than INT_MAX.
  int count(const std::string& key, int min) {
    const YAML::Node n = value(key);
    const std::string s = n.IsScalar() ? n.Scalar() : std::string();
    long long v = 0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (s.empty() || ec != std::errc() || end != s.data() + s.size() || v < min || v > INT_MAX) {
      src_.fail(n.Mark(), field(key),
                "expected a whole number from " + std::to_string(min) + " to " + std::to_string(INT_MAX) +
                    ", got " + describe(n));
    }
    return static_cast<int>(v);
  }
  int count(const std::string& key, int min, int fallback) {
    return has(key) ? count(key, min) : fallback;
  }

  // A plain number within [low, high] (or (low, high] when low_open).
  double number(const std::string& key, double low, double high, bool low_open) {
    return number_in(src_, value(key), field(key), low, high, low_open);
  }
  double number(const std::string& key, double low, double high, bool low_open, double fallback) {
    return has(key) ? number(key, low, high, low_open) : fallback;
  }

  double fraction(const std::string& key) { return number(key, kSmallestRateFraction, 1, false); }
  double fraction(const std::string& key, double fallback) {
    return has(key) ? fraction(key) : fallback;
  }

  double quantity(const std::string& key, Dimension dim) {
    const YAML::Node n = value(key);
    try {
      return core::parse_quantity(n.IsScalar() ? n.Scalar() : describe(n), dim);
    } catch (const Error& e) {
      src_.fail(n.Mark(), field(key), e.message(), e.hint());
    }
  }
  // A quantity that the cost model divides by: zero is refused, and so is anything under one of
  // its base unit (1 B/s, 1 FLOP/s), which no hardware is and whose quotients overflow
  // ("1e-320 TB/s" gave an infinite step time that no field was named for).
  double positive_quantity(const std::string& key, Dimension dim) {
    const double v = quantity(key, dim);
    if (v <= 0) {
      src_.fail(value(key).Mark(), field(key),
                "expected a value above zero, got " + describe(value(key)));
    }
    if (v < 1) {
      src_.fail(value(key).Mark(), field(key),
                "expected at least " + core::format_quantity(1, dim) + ", got " + describe(value(key)));
    }
    return v;
  }
  double quantity(const std::string& key, Dimension dim, double fallback) {
    return has(key) ? quantity(key, dim) : fallback;
  }

  bool boolean(const std::string& key) {
    const YAML::Node n = value(key);
    bool v = false;
    if (!n.IsScalar() || !YAML::convert<bool>::decode(n, v)) {
      src_.fail(n.Mark(), field(key), "expected true or false, got " + describe(n));
    }
    return v;
  }

  template <typename Enum>
  Enum choice(const std::string& key, const std::vector<std::pair<std::string, Enum>>& options) {
    const YAML::Node n = value(key);
    const std::string v = n.IsScalar() ? n.Scalar() : std::string();
    std::vector<std::string> names;
    for (const auto& [name, e] : options) {
      if (name == v) return e;
      names.push_back(name);
    }
    src_.fail(n.Mark(), field(key), "unknown value " + describe(n), core::suggestion(v, names));
  }

  // Throws for the first key in document order that no reader asked for.
  void reject_unknown_keys() const {
    for (const Entry& e : entries_) {
      bool known = false;
      for (const std::string& k : known_) known = known || k == e.key;
      if (!known) {
        src_.fail(e.key_mark, path_, "unknown key \"" + e.key + "\"",
                  core::suggestion(e.key, known_));
      }
    }
  }

 private:
  struct Entry {
    std::string key;
    YAML::Mark key_mark;
    YAML::Node value;
  };

  const Entry* find(const std::string& key) const {
    for (const Entry& e : entries_) {
      if (e.key == key) return &e;
    }
    return nullptr;
  }

  // The keys asked for, each once (an optional key is asked for by has() and then read).
  bool in_schema(const std::string& key) const {
    return std::find(known_.begin(), known_.end(), key) != known_.end() ||
           std::find(later_.begin(), later_.end(), key) != later_.end();
  }
  void note_known(const std::string& key) {
    if (std::find(known_.begin(), known_.end(), key) == known_.end()) known_.push_back(key);
  }

  const Source& src_;
  YAML::Node node_;
  std::string path_;
  std::vector<Entry> entries_;
  std::vector<std::string> known_;
  std::vector<std::string> later_;
};

// Where the content of the `n`-th YAML document of `text` starts (0: the first), or a null mark.
// yaml-cpp reads the first document alone, and its LoadAll, which would find the others, never
// returns on some malformed texts. A line that starts with "---" or "..." alone or before a space
// ends a document: no scalar holds one at column 0.
YAML::Mark document_content(std::string_view text, int n) {
  const auto marker = [](std::string_view line) {
    return (line.starts_with("---") || line.starts_with("...")) &&
           (line.size() == 3 || line[3] == ' ' || line[3] == '\t');
  };
  int document = 0;
  bool seen_content = false;
  YAML::Mark at;
  for (size_t start = 0; start < text.size(); ++at.line) {
    const size_t end = std::min(text.find('\n', start), text.size());
    std::string_view line = text.substr(start, end - start);
    if (line.ends_with('\r')) line.remove_suffix(1);
    at.pos = static_cast<int>(start);
    start = end + 1;
    int offset = 0;
    if (marker(line)) {
      if (seen_content) ++document, seen_content = false;
      line.remove_prefix(3);  // "--- tp: 2" starts a document on its own line
      offset = 3;
    }
    const size_t first = line.find_first_not_of(" \t");
    if (first == std::string_view::npos || line[first] == '#' || line[first] == '%') continue;
    if (document == n) {
      at.column = offset + static_cast<int>(first);
      return at;
    }
    seen_content = true;
  }
  return YAML::Mark::null_mark();
}

// Parses `text` and runs `read` on its root, turning every yaml-cpp exception into an Error at
// the mark yaml-cpp gives, so that no foreign exception leaves this file.
template <typename Read>
auto read_document(std::string_view source_name, std::string_view text, Read read) {
  core::require_utf8(source_name, text);
  const Source src(source_name, text);
  try {
    const YAML::Node root = YAML::Load(std::string(text));
    if (!root.IsDefined() || root.IsNull()) {
      // yaml-cpp reads a text that opens with a stray "," as no document, without an error.
      if (const YAML::Mark first = document_content(text, 0); !first.is_null()) {
        src.fail(first, "", "malformed YAML: no document could be read from here");
      }
      src.fail(YAML::Mark::null_mark(), "", "the document is empty; expected a map of keys");
    }
    if (const YAML::Mark second = document_content(text, 1); !second.is_null()) {
      src.fail(second, "", "a second YAML document, after \"---\": a file holds one document, and this one would be ignored",
               "put every key in the first document");
    }
    return read(src, root);
  } catch (const YAML::ParserException& e) {
    src.fail(e.mark, "", "malformed YAML: " + e.msg);
  } catch (const YAML::Exception& e) {
    src.fail(e.mark, "", e.msg);
  }
}

// The list `n` at `field`, of exactly `size` entries.
void require_list(const Source& src, const YAML::Node& n, const std::string& field, std::size_t size) {
  if (!n.IsSequence() || n.size() != size) {
    src.fail(n.Mark(), field,
             "expected a list of " + std::to_string(size) + " entries, got " +
                 (n.IsSequence() ? "a list of " + std::to_string(n.size()) : describe(n)));
  }
}

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
