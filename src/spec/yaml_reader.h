// ModelSpec, GpuSpec and ClusterSpec from YAML, the format of the presets in data/ and of the
// files `stepcast presets show NAME` prints for editing.
//
//   spec::ClusterSpec c = spec::read_cluster_yaml("my-cluster.yaml", text);
//
// Every dimensional quantity carries its unit ("900 GB/s", "400 Gbit/s", "80 GiB", "2 us",
// "989 TFLOP/s", "700 W"). A bare number there, an unknown key (with a did-you-mean), a missing
// required key, a wrong type or malformed YAML throws Error(kInvalidInput) naming
// file:line:column and the field, with the offending line and a caret. The schemas are in the
// README ("Formats") and in every file of data/.
#pragma once

#include <string_view>

#include "spec/cluster_spec.h"
#include "spec/gpu_spec.h"
#include "spec/model_spec.h"

namespace stepcast::spec {

ModelSpec read_model_yaml(std::string_view source_name, std::string_view text);
GpuSpec read_gpu_yaml(std::string_view source_name, std::string_view text);
/// `gpu:` is a GPU preset name or an inline map in the GPU schema.
ClusterSpec read_cluster_yaml(std::string_view source_name, std::string_view text);

}  // namespace stepcast::spec
