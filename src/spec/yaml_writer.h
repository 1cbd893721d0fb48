// A ModelSpec as YAML in the schema read_model_yaml reads (spec/yaml_reader.h), keys in the order
// of the presets in data/models/, optional keys only where they differ from their defaults: how
// `stepcast presets show path/config.json` turns a Hugging Face config into a file to edit.
//
//   const std::string text = spec::model_yaml(spec::load_model("Qwen3-32B/config.json"), "# from
//   ...\n");
//   // read_model_yaml("m.yaml", text) gives the same ModelSpec back.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "spec/model_spec.h"

namespace stepcast::spec {

/// `header` (comment lines, each starting with "#" and ending in a newline) followed by the keys.
std::string model_yaml(const ModelSpec& m, std::string_view header);

/// `header` followed by one `key: value` line per setting, in order, each value quoted where YAML
/// needs it: the flat map read_yaml_settings (spec/yaml_reader.h) reads back (`{}` for none).
std::string settings_yaml(const std::vector<std::pair<std::string, std::string>>& settings,
                          std::string_view header);

}  // namespace stepcast::spec
