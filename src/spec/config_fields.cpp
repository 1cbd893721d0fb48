#include "spec/config_fields.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <utility>

namespace stepcast::spec {
namespace {

using nlohmann::json;

struct TextPosition {
  int line = 0;
  int column = 0;
  std::string line_text;
};

// 1-based line and column of byte `index` (clamped to the end of the text) and the line holding
// it. A newline belongs to the line it ends, so an error found on reading it points one past that
// line's last character.
TextPosition position_of(std::string_view text, size_t index) {
  index = std::min(index, text.size());
  TextPosition p;
  p.line = 1 + static_cast<int>(std::count(text.begin(), text.begin() + index, '\n'));
  const size_t previous_newline = index == 0 ? std::string_view::npos : text.rfind('\n', index - 1);
  const size_t line_start = previous_newline == std::string_view::npos ? 0 : previous_newline + 1;
  const size_t line_end = std::min(text.find('\n', line_start), text.size());
  p.column = static_cast<int>(index - line_start) + 1;
  p.line_text = std::string(text.substr(line_start, line_end - line_start));
  if (!p.line_text.empty() && p.line_text.back() == '\r') p.line_text.pop_back();
  return p;
}

// `error` placed at byte `index` of `text`, with its line as the excerpt.
Error located(Error error, std::string_view source_name, std::string_view text, size_t index) {
  TextPosition p = position_of(text, index);
  error.at({std::string(source_name), p.line, p.column}).with_excerpt(std::move(p.line_text));
  return error;
}

// nlohmann's what() reads "[json.exception.parse_error.101] parse error at line 4, column 1:
// syntax error ..."; we print our own location, so only the description after the prefix is kept.
std::string nlohmann_description(const std::string& what) {
  std::string_view rest = what;
  if (!rest.empty() && rest.front() == '[') {
    const size_t close = rest.find("] ");
    if (close != std::string_view::npos) rest.remove_prefix(close + 2);
  }
  if (rest.starts_with("parse error")) {
    const size_t colon = rest.find(": ");
    if (colon != std::string_view::npos) rest.remove_prefix(colon + 2);
  }
  return std::string(rest);
}

// The index of the quote that closes the JSON string opened at `open` (or the text's size).
size_t string_end(std::string_view text, size_t open) {
  size_t i = open + 1;
  for (; i < text.size() && text[i] != '"'; ++i) {
    if (text[i] == '\\') ++i;
  }
  return i;
}

// A key as the parser reads it: the raw text between its quotes with any escape (\u005f, \")
// decoded.
std::string decoded_key(std::string_view raw) {
  if (raw.find('\\') == std::string_view::npos) return std::string(raw);
  std::string quoted(1, '"');
  quoted.append(raw).push_back('"');
  return json::parse(quoted).get<std::string>();  // valid: the whole text parsed
}

// Byte offset of the top-level key `"key":` in already-validated JSON text, or npos. Nested
// objects are skipped so that a key inside e.g. rope_scaling is not mistaken for a top-level one.
// A key given twice is the last one, whose value the parser keeps (as Python's json does).
size_t top_level_key_offset(std::string_view text, std::string_view key) {
  size_t last = std::string_view::npos;
  int depth = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '{' || c == '[') {
      ++depth;
    } else if (c == '}' || c == ']') {
      --depth;
    } else if (c == '"') {
      const size_t start = i;
      i = string_end(text, start);
      if (depth != 1 || decoded_key(text.substr(start + 1, i - start - 1)) != key) continue;
      const size_t after = text.find_first_not_of(" \t\r\n", i + 1);
      if (after != std::string_view::npos && text[after] == ':') last = start;
    }
  }
  return last;
}

// The text of the JSON value that starts at `start` (an object or array: through its matching
// close; a scalar: an empty view) in already-validated JSON text.
std::string_view nested_text(std::string_view text, size_t start) {
  if (start >= text.size() || (text[start] != '{' && text[start] != '[')) return {};
  int depth = 0;
  for (size_t i = start; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '"') {
      i = string_end(text, i);
    } else if (c == '{' || c == '[') {
      ++depth;
    } else if ((c == '}' || c == ']') && --depth == 0) {
      return text.substr(start, i - start + 1);
    }
  }
  return {};
}

// Where the token that nlohmann's error quotes ("number overflow parsing '1e400'") first stands
// in the JSON text outside a string, or npos: that error carries no position of its own.
size_t quoted_token_offset(std::string_view text, std::string_view what) {
  const size_t open = what.find('\'');
  const size_t close = open == std::string_view::npos ? open : what.find('\'', open + 1);
  if (close == std::string_view::npos || close == open + 1) return std::string_view::npos;
  const std::string_view token = what.substr(open + 1, close - open - 1);
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '"') {
      i = string_end(text, i);
    } else if (text.substr(i, token.size()) == token) {
      return i;
    }
  }
  return std::string_view::npos;
}

}  // namespace

json parse_config_json(std::string_view source_name, std::string_view text) {
  try {
    return json::parse(text.begin(), text.end());
  } catch (const json::parse_error& e) {
    // e.byte counts the bytes read, so the offending one is e.byte - 1.
    throw located(Error(ErrorKind::kInvalidInput, nlohmann_description(e.what())), source_name, text,
                  e.byte > 0 ? e.byte - 1 : 0);
  } catch (const json::exception& e) {  // e.g. out_of_range.406, a number too large for a double
    Error error(ErrorKind::kInvalidInput, nlohmann_description(e.what()));
    const size_t at = quoted_token_offset(text, e.what());
    if (at == std::string_view::npos) throw error.at({std::string(source_name)});
    throw located(std::move(error), source_name, text, at);
  }
}

std::string describe_json(const json& value) {
  switch (value.type()) {
    case json::value_t::string: {
      std::string s = value.dump();
      if (s.size() > 40) s = s.substr(0, 36) + "...\"";
      return "the string " + s;
    }
    case json::value_t::array:
      return "an array";
    case json::value_t::object:
      return "an object";
    default:
      return value.dump();
  }
}

ConfigFields::ConfigFields(std::string_view source_name, std::string_view text, const json& root)
    : source_name_(source_name), file_text_(text), text_(text), root_(root) {}

ConfigFields ConfigFields::nested(const char* key) const {
  const json& object = root_.at(key);
  if (!object.is_object()) wrong_type(key, "an object");
  ConfigFields inner(source_name_, file_text_, object);
  inner.model_type_ = model_type_;
  inner.prefix_ = prefix_ + key + ".";
  inner.text_ = {};
  const size_t key_at = top_level_key_offset(text_, key);
  if (key_at != std::string_view::npos) {
    const size_t open = text_.find_first_of("{[", text_.find(':', key_at));
    inner.text_ = nested_text(text_, open);
    inner.offset_ = offset_ + open;
  }
  return inner;
}

bool ConfigFields::has(const char* key) const {
  const auto it = root_.find(key);
  return it != root_.end() && !it->is_null();
}

const json* ConfigFields::find(const char* key) const {
  const auto it = root_.find(key);
  return it == root_.end() ? nullptr : &*it;
}

int ConfigFields::required_int(const char* key, int min_value) const {
  if (!has(key)) {
    if (find(key) == nullptr) missing(key);
    wrong_type(key, "an integer");
  }
  return to_int(key, min_value);
}

int ConfigFields::optional_int(const char* key, int fallback, int min_value) const {
  return has(key) ? to_int(key, min_value) : fallback;
}

bool ConfigFields::optional_bool(const char* key, bool fallback) const {
  if (!has(key)) return fallback;
  if (!root_.at(key).is_boolean()) wrong_type(key, "true or false");
  return root_.at(key).get<bool>();
}

double ConfigFields::optional_probability(const char* key, double fallback) const {
  if (!has(key)) return fallback;
  const json& v = root_.at(key);
  if (!v.is_number() || v.get<double>() < 0 || v.get<double>() > 1) wrong_type(key, "a probability in [0, 1]");
  return v.get<double>();
}

double ConfigFields::optional_number(const char* key, double fallback) const {
  if (!has(key)) return fallback;
  if (!root_.at(key).is_number()) wrong_type(key, "a number");
  return root_.at(key).get<double>();
}

std::optional<std::string> ConfigFields::optional_string(const char* key) const {
  if (!has(key)) return std::nullopt;
  if (!root_.at(key).is_string()) wrong_type(key, "a string");
  return root_.at(key).get<std::string>();
}

void ConfigFields::missing(const char* key) const {
  throw Error(ErrorKind::kInvalidInput, "missing, and model_type \"" + model_type_ + "\" requires it")
      .at({std::string(source_name_)})
      .in_field(prefix_ + key);
}

void ConfigFields::wrong_type(const char* key, const std::string& expected) const {
  fail(ErrorKind::kInvalidInput, key, "expected " + expected + ", got " + describe_json(root_.at(key)));
}

void ConfigFields::fail(ErrorKind kind, const char* key, std::string message, std::string hint) const {
  Error error(kind, std::move(message), std::move(hint));
  error.in_field(prefix_ + key);
  const size_t offset = top_level_key_offset(text_, key);
  if (offset == std::string_view::npos) throw error.at({std::string(source_name_)});
  throw located(std::move(error), source_name_, file_text_, offset_ + offset);
}

int ConfigFields::to_int(const char* key, int min_value) const {
  const json& v = root_.at(key);
  double number = 0;
  if (v.is_number_integer()) {
    // Unsigned values beyond int64 wrap to negative here and are rejected below with the rest.
    number = static_cast<double>(v.get<std::int64_t>());
  } else if (v.is_number_float() && std::floor(v.get<double>()) == v.get<double>()) {
    number = v.get<double>();
  } else {
    wrong_type(key, "an integer");
  }
  if (number < min_value) {
    fail(ErrorKind::kInvalidInput, key, "expected an integer >= " + std::to_string(min_value) + ", got " + v.dump());
  }
  if (number > std::numeric_limits<int>::max()) {
    fail(ErrorKind::kInvalidInput, key,
         "expected an integer <= " + std::to_string(std::numeric_limits<int>::max()) + ", got " + v.dump());
  }
  return static_cast<int>(number);
}

}  // namespace stepcast::spec
