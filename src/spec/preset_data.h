// The preset YAML texts compiled into the binary (generated from data/ by
// cmake/embed_presets.cmake). Use spec/presets.h to read them; this is the raw table.
#pragma once

#include <vector>

namespace stepcast::spec {

struct PresetText {
  const char* kind;  // "models", "gpus" or "clusters" (the data/ folder)
  const char* name;  // file name without .yaml, e.g. "llama3.1-405b"
  const char* yaml;  // the file's text, comments included
};

const std::vector<PresetText>& preset_texts();

}  // namespace stepcast::spec
