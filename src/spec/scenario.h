// Scenario: what is trained (ModelSpec), where (ClusterSpec, number of GPUs), how (Strategy).
#pragma once

#include "spec/cluster_spec.h"
#include "spec/model_spec.h"
#include "spec/strategy.h"

namespace stepcast::spec {

struct Scenario {
  ModelSpec model;
  ClusterSpec cluster;
  Strategy strategy;
  int gpus = 0;
};

/// Fills derived fields (dp from gpus, schedule from vp) and checks every rule a strategy must
/// satisfy against the model and cluster. Collects all violations and throws one Error
/// (kInvalidInput) listing them, each with what would be valid (e.g. the TP degrees that divide the
/// heads). Returns the completed scenario.
Scenario complete_and_validate(Scenario scenario);

}  // namespace stepcast::spec
