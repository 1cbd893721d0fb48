// Reading one YAML document key by key, for the spec readers of yaml_reader.cpp: every error is an
// Error(kInvalidInput) at file:line:column that names the field and quotes the line, and no
// yaml-cpp exception escapes. Not part of spec/'s public interface.
//
//   return read_document(name, text, [](const Source& src, const YAML::Node& root) {
//     MapReader r(src, root, "");
//     const int layers = r.count("layers", 1);
//     r.reject_unknown_keys();
//     ...
//   });
#pragma once

#include <yaml-cpp/yaml.h>

#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/error.h"
#include "core/spellcheck.h"
#include "core/units.h"
#include "core/utf8.h"

namespace stepcast::spec {

/// One YAML document and its lines, so that an error can quote the line it points at.
class Source {
 public:
  Source(std::string_view name, std::string_view text);
  /// Where `mark` (yaml-cpp's 0-based line and column) points, 1-based; a null mark locates the
  /// whole file.
  SourceLocation location(const YAML::Mark& mark) const;
  /// The text of the line `mark` points at, or "" where it points at none.
  std::string line_at(const YAML::Mark& mark) const;
  /// Throws Error(kInvalidInput) at `mark`, quoting its line.
  [[noreturn]] void fail(const YAML::Mark& mark, const std::string& field, std::string message,
                         std::string hint = {}) const;

 private:
  std::string name_;
  std::vector<std::string> lines_;
};

/// A node as an error message shows it: a quoted scalar, "a map", "an empty list"...
std::string describe(const YAML::Node& n);

/// The smallest fraction of a peak rate a GPU file may give (why: yaml_document.cpp).
constexpr double kSmallestRateFraction = 1e-6;

/// The plain number `n` (at `field`) within [low, high], or (low, high] when low_open.
double number_in(const Source& src, const YAML::Node& n, const std::string& field, double low, double high,
                 bool low_open);

/// The list `n` at `field`, of exactly `size` entries.
void require_list(const Source& src, const YAML::Node& n, const std::string& field, std::size_t size);

/// The keys of one YAML map. Readers ask for keys by name; whatever no reader asked for is then
/// reported as unknown, with the nearest known key as a suggestion. The overloads with a
/// fallback read an optional key.
class MapReader {
 public:
  MapReader(const Source& src, const YAML::Node& node, std::string path);

  const Source& source() const { return src_; }
  std::string field(const std::string& key) const { return path_.empty() ? key : path_ + "." + key; }
  bool has(const std::string& key);
  /// The value of a required key; throws naming the key (or the typo standing for it) when absent.
  YAML::Node value(const std::string& key);
  /// Keys this map may hold that are read after its required ones.
  void read_later(std::initializer_list<const char*> keys) { later_.insert(later_.end(), keys.begin(), keys.end()); }
  const YAML::Mark& key_mark(const std::string& key) const { return find(key)->key_mark; }

  std::string text(const std::string& key);
  /// A whole number >= min, no larger than INT_MAX.
  int count(const std::string& key, int min);
  int count(const std::string& key, int min, int fallback) { return has(key) ? count(key, min) : fallback; }
  /// A plain number within [low, high] (or (low, high] when low_open).
  double number(const std::string& key, double low, double high, bool low_open) {
    return number_in(src_, value(key), field(key), low, high, low_open);
  }
  double number(const std::string& key, double low, double high, bool low_open, double fallback) {
    return has(key) ? number(key, low, high, low_open) : fallback;
  }
  double fraction(const std::string& key) { return number(key, kSmallestRateFraction, 1, false); }
  double fraction(const std::string& key, double fallback) { return has(key) ? fraction(key) : fallback; }
  double quantity(const std::string& key, core::Dimension dim);
  double quantity(const std::string& key, core::Dimension dim, double fallback) {
    return has(key) ? quantity(key, dim) : fallback;
  }
  /// A quantity the cost model divides by: at least one of its base unit.
  double positive_quantity(const std::string& key, core::Dimension dim);
  bool boolean(const std::string& key);
  template <typename Enum>
  Enum choice(const std::string& key, const std::vector<std::pair<std::string, Enum>>& options);

  /// Throws for the first key in document order that no reader asked for.
  void reject_unknown_keys() const;

 private:
  struct Entry {
    std::string key;
    YAML::Mark key_mark;
    YAML::Node value;
  };
  const Entry* find(const std::string& key) const;
  bool in_schema(const std::string& key) const;
  void note_known(const std::string& key);

  const Source& src_;
  YAML::Node node_;
  std::string path_;
  std::vector<Entry> entries_;
  std::vector<std::string> known_;  // the keys asked for, each once
  std::vector<std::string> later_;
};

template <typename Enum>
Enum MapReader::choice(const std::string& key, const std::vector<std::pair<std::string, Enum>>& options) {
  const YAML::Node n = value(key);
  const std::string v = n.IsScalar() ? n.Scalar() : std::string();
  std::vector<std::string> names;
  for (const auto& [name, e] : options) {
    if (name == v) return e;
    names.push_back(name);
  }
  src_.fail(n.Mark(), field(key), "unknown value " + describe(n), core::suggestion(v, names));
}

/// The root of the one document of `text`; throws where the text holds none or a second one.
YAML::Node load_document(const Source& src, std::string_view text);

/// Throws yaml-cpp's exception `e` as an Error at the mark it gives.
[[noreturn]] void fail_from_yaml(const Source& src, const YAML::Exception& e);

/// Parses `text` and returns `read(src, root)`, turning every yaml-cpp exception into an Error.
template <typename Read>
auto read_document(std::string_view source_name, std::string_view text, Read read) {
  core::require_utf8(source_name, text);
  const Source src(source_name, text);
  try {
    return read(src, load_document(src, text));
  } catch (const YAML::Exception& e) {
    fail_from_yaml(src, e);
  }
}

}  // namespace stepcast::spec
