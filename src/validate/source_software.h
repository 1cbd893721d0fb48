// What each measured source ran that its table's columns do not say: the framework's kernels,
// precisions, sharding and synchronisation, known from its papers, scripts and source.
#pragma once

#include <string_view>
#include <vector>

#include "spec/strategy.h"

namespace stepcast::validate {

// The software a source ran: facts about its framework that the table's columns do not carry.
// Documented in the README ("How validation reads a row"), each with its reason.
struct Software {
  spec::AttentionKernel attention = spec::AttentionKernel::kFlash;
  bool overlap_dp = true;
  int zero_stage = 0;
  spec::Dtype dtype = spec::Dtype::kBf16;
  spec::Dtype grad_reduce = spec::Dtype::kBf16;
  spec::OptimizerStep optimizer_step = spec::OptimizerStep::kMasterWeights;
  spec::GradAccumulation grad_accumulation = spec::GradAccumulation::kSeparateKernel;
  bool bias_grad_in_gemm = false;
  bool bias_add_kernel = false;
  bool micro_batches_equal_pp = false;  // torchtitan: n_microbatches defaults to the PP degree
  // Its fused scale-mask-softmax has no PyTorch fallback for the shapes the kernel cannot take:
  // the kernel asserts them, so a run that was measured ran a micro-batch the kernel takes.
  bool softmax_kernel_required = false;
  spec::Recompute unstated_recompute =
      spec::Recompute::kNone;  // when the row's recompute cell is empty
  spec::Recompute selective = spec::Recompute::kSelective;  // what a plain "selective" cell means
  std::vector<spec::Axis> placement = {spec::Axis::kTp, spec::Axis::kCp, spec::Axis::kEp,
                                       spec::Axis::kDp, spec::Axis::kPp};
  spec::Elementwise elementwise = spec::Elementwise::kFusedKernels;
  spec::PipelineTransfers pipeline_transfers = spec::PipelineTransfers::kHostSynchronised;
  bool fused_cross_entropy = true;
  bool pp_scatter_gather = false;
  bool tp_shards_sequence = false;  // its tensor parallelism always runs with sequence parallelism
  bool tp_comm_overlap = false;     // TP collectives overlapped with the GEMMs beside them
  bool tp_async_backward = false;   // Megatron's column-parallel backward collectives beside GEMMs
  int tp_backward_sms = 0;          // SMs those hold (Strategy::tp_backward_sms)
  bool fp8_weight_cache = false;    // FP8 weights cast once per step (Transformer Engine)
  bool autocast_fp32_weights = false;  // FP32 weights cast at every use by torch.autocast
  spec::GradSync grad_sync = spec::GradSync::kAsReady;
  spec::CpExchange cp_exchange = spec::CpExchange::kRing;
  bool repeat_kv = false;  // the model repeats K and V to the query heads (Strategy::repeat_kv)
  spec::ShardedCollectives sharded_collectives = spec::ShardedCollectives::kPerLayer;
  bool launch_blocking = false;  // run with CUDA_LAUNCH_BLOCKING=1
  bool fsdp_root_reshards = false;  // Strategy::fsdp_root_reshards
  bool hidden_dropout = true;    // the model's own dropout (Megatron's 0.1 for GPT-style models)
};

// The software of the source named `source`, for a row of `model` with `notes` on `gpu`, run on
// `pp` pipeline stages.
Software software_of(std::string_view source, std::string_view model, std::string_view notes,
                     std::string_view gpu, int pp);

}  // namespace stepcast::validate
