// The operators of one training micro-batch on one GPU, with their FLOPs and HBM bytes, under the
// strategy's sharding (TP, SP, CP, EP). The analytic model prices each with cost/compute.h; the
// event graph builder (later) turns them into tasks.
//
//   workload::LayerOps ops = workload::layer_ops(scenario, /*moe_layer=*/false);
//   for (const workload::Op& op : ops) total += cost::op_time_s(op, Pass::kForward, gpu, dtype);
//
// Units: FLOPs and bytes per micro-batch per GPU, forward pass. Backward multiplies by the op's
// bwd factors. Element sizes: activations in the training dtype (2 bytes for BF16/FP8 training,
// whose activations stay BF16), softmax statistics in FP32.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "spec/scenario.h"

namespace stepcast::workload {

enum class OpKind {
  kGemm,       // a (batched) matrix multiply on tensor cores
  kAttention,  // fused FlashAttention core (QK^T, softmax, PV in one kernel)
  kMemory,     // bandwidth-bound: norms, activations, residuals, softmax, dropout, RoPE, embedding
};

/// "gemm", "attention" or "memory".
const char* name(OpKind kind);

/// Where an op sits in a parallel block: the collective that feeds a block (TP all-gather with
/// sequence parallelism, EP dispatch) runs before its kBlockStart op; the one that combines its
/// output (TP all-reduce or reduce-scatter, EP combine) after its kBlockEnd op.
enum class BlockEdge : std::uint8_t { kNone, kStart, kEnd };

struct Op {
  const char* name = "";
  OpKind kind = OpKind::kMemory;
  double flops = 0;        // forward FLOPs (a multiply-add counts 2)
  double bytes = 0;        // forward HBM bytes read + written
  double m = 0, n = 0, k = 0;  // GEMM / attention shape per instance; a norm's width in n
  double instances = 1;    // batched GEMMs or attention heads x sequences run together
  double bwd_flops = 2;    // backward FLOPs / forward FLOPs (2 for GEMMs: dX and dW)
  double bwd_bytes = 2;    // backward bytes / forward bytes
  bool fp8_capable = false;  // runs in FP8 when the strategy's dtype is FP8 (linear layers)
  bool core_attention = false;  // recomputed by selective recomputation (Korthikanti §5)
  bool starts_mlp = false;      // the MLP block's first op (a MoE layer's router)
  BlockEdge tp_edge = BlockEdge::kNone;  // attention and MLP blocks of tensor parallelism
  BlockEdge ep_edge = BlockEdge::kNone;  // routed-expert block of expert parallelism
  // At a TP block's start: the GEMMs of the model's PyTorch code that read the block's gathered
  // input (torchtitan's Llama: wq, wk, wv; w1, w3), whose input gradients autograd sums before
  // the backward's reduce-scatter.
  int tp_input_gemms = 1;
  // Share of this GEMM's forward that torchtitan's op-level checkpointing recomputes: it saves
  // every matmul output of a block except the even-numbered ones, counting wq, wk, wv, wo, then
  // w1, w3, w2 (SwiGLU) or w1, w2 (GELU); so wk, wo and w3 (or the GELU down projection) re-run.
  double op_checkpoint_recompute = 0;
  // Trained tensors of the op (all instances: one per instance, or one grouped tensor). Backward
  // launches a kernel per tensor to add its gradient into the accumulated one, and one to reduce
  // each linear bias's gradient.
  double weights = 0, biases = 0;
  // The model's code has the linear add its bias (Megatron's QKV projection, a ColumnParallelLinear
  // without skip_bias_add); the others hand it to a fused elementwise kernel (bias-dropout-add,
  // bias-GELU) that the following op's price already holds.
  bool linear_adds_bias = false;
  // Kernels a memory-bound op launches per forward and per backward: eager PyTorch runs an op as a
  // chain of kernels (Strategy::Elementwise).
  double launches = 1, bwd_launches = 1;
  // GEMMs whose input gradients backward scales in a kernel of their own, one per operand
  // (baddbmm with alpha != 1): the bytes those two kernels read and write together.
  double grad_scale_bytes = 0;
  // Attention: the kernel's rate as a fraction of the GPU's FlashAttention-2 rate.
  double relative_rate = 1;
};

/// At most kMaxOps operators describe one layer; fixed capacity so building them never allocates.
inline constexpr std::size_t kMaxOps = 24;

class LayerOps {
 public:
  void add(const Op& op);
  std::size_t size() const { return count_; }
  Op& operator[](std::size_t i) { return slots_[i].op; }
  const Op& operator[](std::size_t i) const { return slots_[i].op; }
  Op& back() { return slots_[count_ - 1].op; }
  const Op* begin() const { return &slots_[0].op; }
  const Op* end() const { return begin() + count_; }

 private:
  // Slots stay uninitialised until add() copies an Op in: value-initialising all kMaxOps of them
  // cost more than pricing the few a head or an embedding holds (the estimate's hot path).
  union Slot {
    Slot() {}
    Op op;
  };
  static_assert(sizeof(Slot) == sizeof(Op));
  std::array<Slot, kMaxOps> slots_;
  std::size_t count_ = 0;
};

/// Calls visit(elements) for each trained tensor of `op` on this GPU: a linear layer's k x n
/// weights and n biases of all its instances, in as many tensors as it has (one per instance, or
/// one grouped tensor for them all); a norm's n-wide scale and shift.
template <typename Visit>
void for_each_trained_tensor(const Op& op, Visit visit) {
  const bool linear = op.kind == OpKind::kGemm;
  for (int i = 0; i < op.weights; ++i) visit((linear ? op.k * op.n : op.n) * op.instances / op.weights);
  for (int i = 0; i < op.biases; ++i) visit(op.n * op.instances / op.biases);
}

/// One transformer layer for one micro-batch on one GPU of the tensor/context/expert-parallel
/// group. `moe_layer` selects the routed-expert MLP for MoE models.
LayerOps layer_ops(const spec::Scenario& s, bool moe_layer);

/// Input embedding lookup (first stage) and output projection + softmax cross-entropy loss (last
/// stage) for one micro-batch on one GPU.
LayerOps embedding_ops(const spec::Scenario& s);
LayerOps head_ops(const spec::Scenario& s);

/// Attention matrices (query heads x sequences) one GPU computes per micro-batch:
/// micro_batch * heads / tp.
double attention_matrices(const spec::Scenario& s);

/// Whether Megatron's fused scale-mask-softmax kernel runs for `s`'s unfused attention
/// (FusedScaleMaskSoftmax.is_kernel_available): 16 < seq <= 4096, queries and keys multiples of 4,
/// micro_batch x heads / tp a multiple of 4 and of the kernel's batches per block. Where it does
/// not, Megatron runs PyTorch's FP32 softmax and warns that the "constraints for invoking
/// optimized fused softmax kernel are not met". True under FlashAttention, which fuses it.
bool megatron_softmax_fused(const spec::Scenario& s);

// The three below are inline: the closed form asks for them some 20 times per estimate, and each
// call cost as much as its arithmetic (callgrind, 405B).

/// Tokens each GPU processes per micro-batch: micro_batch * seq_len / cp.
inline double local_tokens(const spec::Scenario& s) {
  return s.strategy.micro_batch * static_cast<double>(s.strategy.seq_len) / s.strategy.cp;
}

/// Bytes per activation element of the strategy (2: BF16/FP16 and FP8 training keep BF16
/// activations; 4: FP32).
inline double activation_bytes(const spec::Strategy& st) { return st.dtype == spec::Dtype::kFp32 ? 4.0 : 2.0; }

/// Bytes of one FP32 element (master weights, accumulators, logits in FP32, logsumexp).
inline constexpr double kFp32Bytes = 4;

/// Bytes per gradient element in the strategy's reduction dtype (4: FP32; 2 otherwise).
inline double gradient_bytes(const spec::Strategy& st) { return st.grad_reduce_dtype == spec::Dtype::kFp32 ? 4.0 : 2.0; }

/// Bytes per weight element as ZeRO gathers and holds the weights: 4 where they stay FP32 under
/// autocast (Strategy::autocast_fp32_weights), 2 otherwise.
double weight_bytes(const spec::Strategy& st);

}  // namespace stepcast::workload
