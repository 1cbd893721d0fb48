// Typed access to the fields of a Hugging Face config.json (spec/hf_config.cpp's readers), with
// errors that name the field and stand at the line and column of its key, quoting that line.
//
//   const nlohmann::json root = spec::parse_config_json("config.json", text);
//   spec::ConfigFields f("config.json", text, root);
//   const int layers = f.required_int("num_hidden_layers");
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "core/error.h"

namespace stepcast::spec {

/// The JSON value of `text`; malformed JSON, or a number beyond a double, is an Error at its
/// line and column.
nlohmann::json parse_config_json(std::string_view source_name, std::string_view text);

/// A JSON value in words for an error message: `the string "x"`, `an array`, `3`.
std::string describe_json(const nlohmann::json& value);

/// The fields of one JSON object of the file (`text`, whose parsed root is `root`). Holds views
/// of both: they must outlive it.
class ConfigFields {
 public:
  ConfigFields(std::string_view source_name, std::string_view text, const nlohmann::json& root);

  /// The object under `key`, as fields of their own: named "key.field" in errors and located at
  /// their own lines (a multimodal config's text_config).
  ConfigFields nested(const char* key) const;
  /// Named in the error about a missing field: "model_type "x" requires it".
  void set_model_type(std::string model_type) { model_type_ = std::move(model_type); }

  /// Present with a non-null value (transformers treats null as unset).
  bool has(const char* key) const;
  const nlohmann::json* find(const char* key) const;

  int required_int(const char* key, int min_value = 1) const;
  int optional_int(const char* key, int fallback, int min_value = 1) const;
  bool optional_bool(const char* key, bool fallback) const;
  double optional_probability(const char* key, double fallback) const;  // in [0, 1]
  double optional_number(const char* key, double fallback) const;
  std::optional<std::string> optional_string(const char* key) const;

  [[noreturn]] void missing(const char* key) const;
  [[noreturn]] void wrong_type(const char* key, const std::string& expected) const;
  /// Throws an Error at the line that holds `key`, with that line as the excerpt.
  [[noreturn]] void fail(ErrorKind kind, const char* key, std::string message, std::string hint = {}) const;

 private:
  int to_int(const char* key, int min_value) const;

  std::string_view source_name_;
  std::string_view file_text_;
  // This object's own text within the file's, from its opening brace; empty where not found.
  std::string_view text_;
  size_t offset_ = 0;
  const nlohmann::json& root_;
  std::string model_type_;
  std::string prefix_;
};

}  // namespace stepcast::spec
