#include "spec/yaml_document.h"

#include <algorithm>
#include <charconv>
#include <climits>
#include <cmath>
#include <string>
#include <utility>

namespace stepcast::spec {

Source::Source(std::string_view name, std::string_view text) : name_(name) {
  size_t start = 0;
  for (;;) {
    const size_t end = text.find('\n', start);
    std::string_view line = text.substr(start, end == std::string_view::npos ? text.npos : end - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    lines_.emplace_back(line);
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
}

SourceLocation Source::location(const YAML::Mark& mark) const {
  return {name_, mark.line >= 0 ? mark.line + 1 : 0, mark.line >= 0 ? mark.column + 1 : 0};
}

std::string Source::line_at(const YAML::Mark& mark) const {
  const bool inside = mark.line >= 0 && static_cast<size_t>(mark.line) < lines_.size();
  return inside ? lines_[static_cast<size_t>(mark.line)] : std::string();
}

void Source::fail(const YAML::Mark& mark, const std::string& field, std::string message, std::string hint) const {
  Error e(ErrorKind::kInvalidInput, std::move(message), std::move(hint));
  e.at(location(mark));
  const std::string excerpt = line_at(mark);
  if (!excerpt.empty()) e.with_excerpt(excerpt);
  if (!field.empty()) e.in_field(field);
  throw e;
}

std::string describe(const YAML::Node& n) {
  if (n.IsScalar()) {
    const std::string& v = n.Scalar();
    return "\"" + (v.size() > 60 ? v.substr(0, 60) + "..." : v) + "\"";
  }
  if (n.IsMap()) return n.size() == 0 ? "an empty map" : "a map";
  if (n.IsSequence()) return n.size() == 0 ? "an empty list" : "a list";
  return "nothing";
}

namespace {

std::string format_number(double v) {
  std::string s = std::to_string(v);
  s.erase(s.find_last_not_of('0') + 1);
  if (s.back() == '.') s.pop_back();
  return s;
}

}  // namespace

// kSmallestRateFraction, a millionth: 1 GFLOP/s of an H100's BF16 peak, a three-thousandth of the
// slowest rate measured in data/gpus (0.3% of the B200's peak, its smallest GEMM). The cost model
// divides by these; a denormal one gave an infinite step time that named no field.
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

void require_list(const Source& src, const YAML::Node& n, const std::string& field, std::size_t size) {
  if (!n.IsSequence() || n.size() != size) {
    src.fail(n.Mark(), field,
             "expected a list of " + std::to_string(size) + " entries, got " +
                 (n.IsSequence() ? "a list of " + std::to_string(n.size()) : describe(n)));
  }
}

MapReader::MapReader(const Source& src, const YAML::Node& node, std::string path)
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

bool MapReader::has(const std::string& key) {
  note_known(key);
  return find(key) != nullptr;
}

YAML::Node MapReader::value(const std::string& key) {
  note_known(key);
  const Entry* e = find(key);
  if (e == nullptr) {
    // A misspelt required key is reported as the typo it is, not as a missing key; a key read
    // already, or to be read later, is no typo ("moe" beside a missing "mlp").
    for (const Entry& other : entries_) {
      if (in_schema(other.key)) continue;
      if (!core::closest_match(other.key, {key}).empty()) {
        src_.fail(other.key_mark, path_, "unknown key \"" + other.key + "\"", core::suggestion(other.key, {key}));
      }
    }
    src_.fail(node_.Mark(), path_, "missing required key \"" + key + "\"");
  }
  return e->value;
}

std::string MapReader::text(const std::string& key) {
  const YAML::Node n = value(key);
  if (!n.IsScalar() || n.Scalar().empty()) {
    src_.fail(n.Mark(), field(key), "expected a name, got " + describe(n));
  }
  return n.Scalar();
}

int MapReader::count(const std::string& key, int min) {
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

double MapReader::quantity(const std::string& key, core::Dimension dim) {
  const YAML::Node n = value(key);
  try {
    return core::parse_quantity(n.IsScalar() ? n.Scalar() : describe(n), dim);
  } catch (const Error& e) {
    src_.fail(n.Mark(), field(key), e.message(), e.hint());
  }
}

// Zero is refused, and so is anything under one of the base unit (1 B/s, 1 FLOP/s), which no
// hardware is and whose quotients overflow ("1e-320 TB/s" gave an infinite step time that no
// field was named for).
double MapReader::positive_quantity(const std::string& key, core::Dimension dim) {
  const double v = quantity(key, dim);
  if (v <= 0) {
    src_.fail(value(key).Mark(), field(key), "expected a value above zero, got " + describe(value(key)));
  }
  if (v < 1) {
    src_.fail(value(key).Mark(), field(key),
              "expected at least " + core::format_quantity(1, dim) + ", got " + describe(value(key)));
  }
  return v;
}

bool MapReader::boolean(const std::string& key) {
  const YAML::Node n = value(key);
  bool v = false;
  if (!n.IsScalar() || !YAML::convert<bool>::decode(n, v)) {
    src_.fail(n.Mark(), field(key), "expected true or false, got " + describe(n));
  }
  return v;
}

void MapReader::reject_unknown_keys() const {
  for (const Entry& e : entries_) {
    bool known = false;
    for (const std::string& k : known_) known = known || k == e.key;
    if (!known) {
      src_.fail(e.key_mark, path_, "unknown key \"" + e.key + "\"", core::suggestion(e.key, known_));
    }
  }
}

const MapReader::Entry* MapReader::find(const std::string& key) const {
  for (const Entry& e : entries_) {
    if (e.key == key) return &e;
  }
  return nullptr;
}

// Asked for already (an optional key is asked for by has() and then read), or to be read later.
bool MapReader::in_schema(const std::string& key) const {
  return std::find(known_.begin(), known_.end(), key) != known_.end() ||
         std::find(later_.begin(), later_.end(), key) != later_.end();
}

void MapReader::note_known(const std::string& key) {
  if (std::find(known_.begin(), known_.end(), key) == known_.end()) known_.push_back(key);
}

namespace {

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

}  // namespace

YAML::Node load_document(const Source& src, std::string_view text) {
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
  return root;
}

void fail_from_yaml(const Source& src, const YAML::Exception& e) {
  const bool malformed = dynamic_cast<const YAML::ParserException*>(&e) != nullptr;
  src.fail(e.mark, "", malformed ? "malformed YAML: " + e.msg : e.msg);
}

}  // namespace stepcast::spec
