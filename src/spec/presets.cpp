#include "spec/presets.h"

#include <algorithm>
#include <cstring>
#include <filesystem>

#include "core/csv.h"
#include "core/error.h"
#include "core/spellcheck.h"
#include "spec/hf_config.h"
#include "spec/preset_data.h"
#include "spec/yaml_reader.h"

namespace stepcast::spec {
namespace {

const char* folder(PresetKind kind) {
  switch (kind) {
    case PresetKind::kModel:
      return "models";
    case PresetKind::kGpu:
      return "gpus";
    case PresetKind::kCluster:
      return "clusters";
  }
  return "";
}

const char* noun(PresetKind kind) {
  switch (kind) {
    case PresetKind::kModel:
      return "model";
    case PresetKind::kGpu:
      return "GPU";
    case PresetKind::kCluster:
      return "cluster";
  }
  return "";
}

const PresetText* find(PresetKind kind, std::string_view name) {
  for (const PresetText& p : preset_texts()) {
    if (std::strcmp(p.kind, folder(kind)) == 0 && name == p.name) return &p;
  }
  return nullptr;
}

const PresetText& require(PresetKind kind, std::string_view name) {
  if (const PresetText* p = find(kind, name)) return *p;
  throw Error(ErrorKind::kInvalidInput,
              std::string("unknown ") + noun(kind) + " preset \"" + std::string(name) + "\"",
              core::suggestion(name, preset_names(kind)));
}

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}


// A name with a slash, or one that names something on disk, is a path the user meant, never a
// preset with a typo: it gets an error about the file, not a did-you-mean. But a preset's name
// means the preset whatever the working directory holds: a folder named h200 beside a run must
// not hide the h200 preset, which clusters name as their GPU (./h200 reads the folder).
bool names_a_path(PresetKind kind, const std::string& s) {
  std::error_code ignored;
  return s.find('/') != std::string::npos || (!find(kind, s) && std::filesystem::exists(s, ignored));
}

[[noreturn]] void not_a_spec_file(const std::string& path, const std::string& what, const std::string& valid) {
  std::error_code ignored;
  const bool directory = std::filesystem::is_directory(path, ignored);
  const bool exists = directory || std::filesystem::exists(path, ignored);
  throw Error(ErrorKind::kInvalidInput,
              directory ? "is a directory, not a " + what + " file"
              : exists  ? "is not a " + what + " file: its name ends in neither .yaml nor .json"
                        : "no such file, and no " + what + " preset has this name",
              "give a preset name (stepcast presets lists them) or " + valid)
      .at({path, 0, 0});
}

std::string source_name(const PresetText& p) {
  return std::string("data/") + p.kind + "/" + p.name + ".yaml";
}

}  // namespace

std::vector<std::string> preset_names(PresetKind kind) {
  std::vector<std::string> names;
  for (const PresetText& p : preset_texts()) {
    if (std::strcmp(p.kind, folder(kind)) == 0) names.emplace_back(p.name);
  }
  std::sort(names.begin(), names.end());
  return names;
}

ModelSpec model_preset(std::string_view name) {
  const PresetText& p = require(PresetKind::kModel, name);
  return read_model_yaml(source_name(p), p.yaml);
}

GpuSpec gpu_preset(std::string_view name) {
  const PresetText& p = require(PresetKind::kGpu, name);
  return read_gpu_yaml(source_name(p), p.yaml);
}

ClusterSpec cluster_preset(std::string_view name) {
  const PresetText& p = require(PresetKind::kCluster, name);
  return read_cluster_yaml(source_name(p), p.yaml);
}

std::string preset_yaml(std::string_view name) {
  for (PresetKind kind : {PresetKind::kModel, PresetKind::kGpu, PresetKind::kCluster}) {
    if (const PresetText* p = find(kind, name)) return p->yaml;
  }
  std::vector<std::string> all;
  for (PresetKind kind : {PresetKind::kModel, PresetKind::kGpu, PresetKind::kCluster}) {
    for (std::string& n : preset_names(kind)) all.push_back(std::move(n));
  }
  throw Error(ErrorKind::kInvalidInput, "unknown preset \"" + std::string(name) + "\"",
              core::suggestion(name, all));
}

bool is_yaml_path(std::string_view s) { return ends_with(s, ".yaml") || ends_with(s, ".yml"); }

bool written_as_path(std::string_view name) {
  return name.find('/') != std::string_view::npos || is_yaml_path(name);
}

ModelSpec load_model(std::string_view name_or_path) {
  const std::string path(name_or_path);
  if (is_yaml_path(path)) return read_model_yaml(path, core::read_file(path));
  if (ends_with(path, ".json")) return read_hf_config(path, core::read_file(path));
  if (!names_a_path(PresetKind::kModel, path)) return model_preset(name_or_path);
  // A Hugging Face model directory, as downloaded: its config.json.
  const std::filesystem::path config = std::filesystem::path(path) / "config.json";
  std::error_code ignored;
  // A config.json that is there but no file (a directory, a pipe) is named as what is wrong.
  if (std::filesystem::exists(config, ignored)) return read_hf_config(config.string(), core::read_file(config.string()));
  not_a_spec_file(path, "model", "a model .yaml file, a Hugging Face config.json or a directory holding one");
}

GpuSpec load_gpu(std::string_view name_or_path) {
  const std::string path(name_or_path);
  if (is_yaml_path(path)) return read_gpu_yaml(path, core::read_file(path));
  if (names_a_path(PresetKind::kGpu, path)) not_a_spec_file(path, "GPU", "a GPU .yaml file");
  return gpu_preset(name_or_path);
}

ClusterSpec load_cluster(std::string_view name_or_path) {
  const std::string path(name_or_path);
  if (is_yaml_path(path)) return read_cluster_yaml(path, core::read_file(path));
  // A .json path is a file the user meant to read, not a preset name with a typo.
  if (ends_with(path, ".json")) {
    throw Error(ErrorKind::kInvalidInput, "a cluster is read from YAML, not JSON",
                "give a cluster preset name or a .yaml file")
        .at({path, 0, 0});
  }
  if (names_a_path(PresetKind::kCluster, path)) not_a_spec_file(path, "cluster", "a cluster .yaml file");
  return cluster_preset(name_or_path);
}

}  // namespace stepcast::spec
