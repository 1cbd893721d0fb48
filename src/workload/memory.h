// Memory per GPU for one training step: what a rank of the most loaded pipeline stage holds at its
// peak. "Does not fit" is an answer (fits == false with the breakdown), never an error.
//
// Sources: mixed-precision Adam state (Rajbhandari et al. 2020, ZeRO §3: 2 + 2 + 12 bytes per
// parameter); activation accounting per stored tensor (Korthikanti et al. 2022, §4), in-flight
// micro-batches of each pipeline schedule (Narayanan et al. 2021 §2.2; Korthikanti §4.2.3).
#pragma once

#include "spec/scenario.h"
#include "workload/model_size.h"

namespace stepcast::workload {

struct MemoryBreakdown {
  double weights_bytes = 0;      // parameters in the training dtype (+ gathered FSDP units)
  double gradients_bytes = 0;    // gradients in the reduction dtype
  double optimizer_bytes = 0;    // FP32 master weights + Adam moments
  double activations_bytes = 0;  // stored activations of all in-flight micro-batches
  double logits_bytes = 0;       // output logits and loss buffers (last stage)
  double runtime_bytes = 0;      // CUDA context, library workspaces, communication buffers
  double fragmentation_bytes = 0;  // allocator slack
  double total_bytes = 0;
  double capacity_bytes = 0;     // the GPU's HBM
  bool fits = false;
};

/// Memory of the worst-loaded GPU. REQUIRES: s passed spec::complete_and_validate.
MemoryBreakdown memory_per_gpu(const spec::Scenario& s);
/// The same with the model's parameters `p` (param_counts(s.model)) and the stored activations
/// of the in-flight micro-batches given: in_flight_activation_bytes(s), or the peak a simulated
/// schedule reached (the full-recompute transient is still added).
MemoryBreakdown memory_per_gpu(const spec::Scenario& s, const ParamCounts& p, double stored_activations_bytes);

/// The activations the worst-loaded GPU stores for its in-flight micro-batches at its peak, as
/// the schedule keeps them.
double in_flight_activation_bytes(const spec::Scenario& s);

/// Activation bytes one layer stores for one micro-batch on one GPU under recompute `mode`
/// (op: counted as none, an upper bound: torchtitan's policy also drops elementwise outputs).
double layer_activation_bytes(const spec::Scenario& s, spec::Recompute mode);

/// The same for an average layer under the strategy: with full recomputation of every k-th
/// layer, 1/k of the layers keep only their input and the rest keep everything.
double stored_layer_activation_bytes(const spec::Scenario& s);

}  // namespace stepcast::workload
