// Built-in presets (data/{models,gpus,clusters}/*.yaml, compiled in) and loading of a model or
// cluster named on the command line: a preset name, a YAML file, or a Hugging Face config.json.
//
//   spec::ModelSpec m = spec::load_model("llama3.1-405b");
//   spec::ClusterSpec c = spec::load_cluster("my-cluster.yaml");
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "spec/cluster_spec.h"
#include "spec/model_spec.h"

namespace stepcast::spec {

enum class PresetKind { kModel, kGpu, kCluster };

/// Names of the presets of one kind, sorted.
std::vector<std::string> preset_names(PresetKind kind);

/// The preset of that name. Throws Error(kInvalidInput) `unknown model preset "x"` (GPU, cluster)
/// with the hint `did you mean "y"?`, or the list of valid names when none is close.
ModelSpec model_preset(std::string_view name);
GpuSpec gpu_preset(std::string_view name);
ClusterSpec cluster_preset(std::string_view name);

/// The YAML text of a preset of any kind, verbatim with its source comments, ready to be edited
/// and passed back as a file. Throws like model_preset for an unknown name.
std::string preset_yaml(std::string_view name);

/// Whether `path` names a YAML file: it ends in .yaml or .yml.
bool is_yaml_path(std::string_view path);

/// Whether `name` is written as a file's path, whatever is on disk: it holds a slash or ends in
/// .yaml or .yml, which no preset name does.
bool written_as_path(std::string_view name);

/// A path ending in .yaml/.yml is read as YAML, one ending in .json as a Hugging Face
/// config.json (models only; a .json cluster is an error), anything else is a preset name.
/// Throws Error(kIo) naming the path when a file cannot be read, and the readers' errors.
ModelSpec load_model(std::string_view name_or_path);
GpuSpec load_gpu(std::string_view name_or_path);
ClusterSpec load_cluster(std::string_view name_or_path);

}  // namespace stepcast::spec
