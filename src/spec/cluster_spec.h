// ClusterSpec: a GPU type, how many share a node, and the network as a list of topology levels,
// innermost first. A collective's members are placed on GPUs; the outermost level their group
// spans decides which links it crosses (cost/collective.h).
//
//   level 0  scale-up   [GPU GPU ... GPU]  NVLink/NVSwitch, domain = one node (8 GPUs)
//   level 1  scale-out  [node node ... ]   NICs, domain = a pod of e.g. 3,072 GPUs
//   level 2  inter-pod  [pod pod ...]      oversubscribed spine; later: between datacenters
#pragma once

#include <string>
#include <vector>

#include "spec/gpu_spec.h"

namespace stepcast::spec {

struct TopologyLevel {
  std::string name;                // e.g. "nvlink", "infiniband", "inter-pod"
  int domain_gpus = 0;             // GPUs inside one domain of this level; 0 = the whole cluster
  double bandwidth_per_gpu_Bps = 0;  // per GPU, per direction, bytes/s (NICs: node total / GPUs)
  double latency_s = 0;            // one-hop latency of a message crossing this level
  double oversubscription = 1.0;   // >= 1; traffic of this level is divided by it (1:7 -> 7)
};

struct ClusterSpec {
  std::string name;
  GpuSpec gpu;
  int gpus_per_node = 8;
  int max_gpus = 0;                  // largest job the cluster holds; 0 = unbounded
  std::vector<TopologyLevel> levels;  // innermost first; levels[0] is the scale-up domain
};

}  // namespace stepcast::spec
