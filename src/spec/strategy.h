// Strategy: how one training step is parallelised and executed.
#pragma once

#include <string>
#include <vector>

namespace stepcast::spec {

/// Pipeline schedules: GPipe (Huang et al. 2019), 1F1B (PipeDream-Flush, Narayanan et al. 2021),
/// interleaved 1F1B with virtual stages (Narayanan et al. 2021 §2.2.2), and zero-bubble ZB-H1
/// (Qi et al. 2024), which splits backward into input and weight gradients and defers the latter
/// into the drain.
enum class Schedule { kGpipe, k1F1B, kInterleaved, kZeroBubbleH1 };
/// Activation recomputation: none; selective (Megatron, Korthikanti et al. 2022 §5: core
/// attention); full (every op of a recomputed layer; see Strategy::recompute_interval); op
/// (torchtitan's op-level selective checkpointing: the outputs of matmuls and attention are saved
/// except every second matmul of a block, everything else is recomputed).
enum class Recompute { kNone, kSelective, kFull, kOp };
enum class Dtype { kFp32, kBf16, kFp16, kFp8 };
/// The attention kernel the framework runs: fused FlashAttention-2 (2023+; GpuSpec's
/// attention_efficiency); cuDNN's fused flash attention, the same algorithm (what PyTorch's
/// scaled_dot_product_attention picks on an H100 with PyTorch 2.11; GpuSpec's
/// cudnn_attention_efficiency); the first FlashAttention generation (FlashAttention 1 and the
/// Triton kernels of its time, such as llm-foundry's attn_impl triton), at about half the
/// FlashAttention-2 rate; or the unfused matmul-softmax-matmul of earlier Megatron releases,
/// which writes the s x s score matrix to HBM.
enum class AttentionKernel { kFlash, kCudnn, kFlashV1, kUnfused };
/// How the framework runs the elementwise ops around the GEMMs: one hand-fused kernel per op
/// (Megatron, apex, Transformer Engine, llm-foundry); eager PyTorch reference code (torchtitan and
/// Hugging Face Llama without compile: RMSNorm, RoPE and SwiGLU as chains of FP32 kernels); or
/// compiled (torch.compile fuses each chain and the residual add into the next norm).
enum class Elementwise { kFusedKernels, kEager, kCompiled };
/// How a stage's pipeline sends and receives wait, on the GPU and on the host.
///  kHostSynchronised: Megatron-LM, and DeepSpeed's pipeline engine with TP > 1. A send blocks the
///    stage until its peer has the data, and the host waits for the GPU after every exchange
///    (Megatron's torch.cuda.synchronize() after batch_isend_irecv; DeepSpeed reads each
///    partitioned tensor's layout back to the host).
///  kStreamOrdered: PyTorch's pipelining library, and DeepSpeed's pipeline engine with TP 1
///    (torch.distributed send and recv). The compute stream waits for each exchange (Work.wait()
///    on the stream); the host runs on.
///  kAsynchronous: sends overlap the compute after them and only a receive's consumer waits
///    (Llama 3, Dubey et al. 2024 §3.3.2: "asynchronous point-to-point communication in PP").
enum class PipelineTransfers { kHostSynchronised, kStreamOrdered, kAsynchronous };

/// When a pipeline stage starts reducing its gradient buckets (with overlap_dp_comm).
///  kAsReady: each bucket as soon as the last micro-batch's backward completes it (PyTorch DDP,
///    DeepSpeed, FSDP; Megatron-Core with --no-align-grad-reduce).
///  kAligned: Megatron-Core's default (align_grad_reduce, also Megatron-Bridge's): a model
///    chunk's buckets start together after its last backward, stage r waiting r more backward
///    passes "to launch asynchronous communication at the same time across the pipeline-parallel
///    group" (schedules.py); under 1F1B stage 0 starts them during its last backward and the other
///    stages after their last.
///  kAfterBackward: every chunk's after the stage's last backward, none beside it
///    (torch.distributed.pipelining with FSDP2: PipelineStage.backward_maybe_with_nosync turns
///    gradient sync off for every backward, then after the last calls each FSDP group's
///    post_backward, which reduce-scatters its gradients, in turn).
enum class GradSync { kAsReady, kAligned, kAfterBackward };
/// How ZeRO-3 / FSDP moves a layer's parameters and gradients.
///  kPerLayer: one flat all-gather and one reduce-scatter per layer, the gather prefetched on a
///    stream of its own (DeepSpeed since its coalesced fetch of mid-2021).
///  kFlatParameter: PyTorch's FSDP1 (FullyShardedDataParallel, torch 2.0/2.1; llm-foundry under
///    Composer in 2023): as kPerLayer, with the gradient work around each reduce-scatter
///    (workload::fsdp_flatten_s, fsdp_copy_in_s): autograd concatenates the layer's parameter
///    gradients into the flat gradient on the compute stream, and the post-backward stream casts
///    it to the reduce dtype and divides it before the reduce-scatter, the shard after it.
///  kPerTensorBlocking: DeepSpeed ZeRO-3 of early 2021 (0.3.x): one collective per parameter
///    tensor through torch.distributed's list form, the host synchronising with the GPU at each
///    module's fetch; each gather is prefetched at the fetch before it and runs beside the compute
///    in between, its host work exposed (workload::fsdp_gather_s); each gradient reduce-scatter
///    is priced in turn with the kernels; after recomputing a layer it releases what its
///    stage3_max_reuse_distance does not keep, and the backward gathers that again
///    (workload::fsdp_regather_s).
///  kPerParameter: PyTorch's FSDP2 (fully_shard; torchtitan), which shards each parameter on its
///    own: as kPerLayer, but the gathered flat buffer is copied out into the layer's parameters on
///    the compute stream before the layer runs (foreach_all_gather_copy_out), and the gradients
///    are copied into a flat buffer, cast to the reduce dtype, on the reduce-scatter's stream
///    before it starts (foreach_reduce_scatter_copy_in).
enum class ShardedCollectives { kPerLayer, kPerTensorBlocking, kPerParameter, kFlatParameter };
/// How the weight gradients of a step's micro-batches are summed.
///  kSeparateKernel: the weight-gradient GEMM writes a new gradient and, on every micro-batch after
///    the first, a kernel per tensor adds it into the accumulated one (PyTorch's AccumulateGrad,
///    Megatron-LM's main_grad hook before gradient accumulation fusion, DeepSpeed): it reads the
///    new gradient and the accumulator and writes the accumulator. Under ZeRO-3 each
///    micro-batch's gradients are reduce-scattered first, and a rank adds only its shard; ZeRO-2
///    reduces once a step (workload::dp_reduce_s), as FSDP without resharding does under
///    pipelining (torchtitan, Llama 3), so it accumulates whole gradients.
///  kFusedIntoGemm: the weight-gradient GEMM adds into the FP32 main gradient itself (Megatron's
///    gradient_accumulation_fusion, Megatron-Core, Transformer Engine's fuse_wgrad_accumulation):
///    no kernel of its own. Biases and norm weights still take the separate kernel.
enum class GradAccumulation { kSeparateKernel, kFusedIntoGemm };
/// How the framework runs the optimizer step. Both run Adam on FP32 weights (reading them, the
/// gradients and both moments, writing back all but the gradients) and, when training in FP16,
/// unscale the gradients and check them for overflow first; the passes around Adam differ.
///  kMasterWeights: Megatron-LM, Megatron-Core and DeepSpeed's mixed-precision optimizers keep
///    FP32 master weights and main gradients beside the 16-bit model. 16-bit gradients are cast to
///    the FP32 main gradients; clipping reads them for the global norm and scales them only when
///    the norm is over the limit (not priced); after Adam a separate pass copies the masters into
///    the 16-bit weights; the gradient buffer is zeroed for the next step.
///  kInPlace: plain PyTorch (DDP with autocast, FSDP's mixed precision, torchtitan): the FP32
///    parameters are the masters, cast to 16 bits where they are used; torch's clip_grad_norm_
///    reads the gradients for the norm and always multiplies them by the clamped coefficient;
///    gradients are set to None rather than zeroed.
///  kInPlaceLoop: as kInPlace, but Adam runs as a Python loop over the parameters, each step a
///    chain of PyTorch's elementwise kernels (Composer's DecoupledAdamW, llm-foundry's
///    decoupled_adamw) that streams the moments and temporaries several times, where the fused
///    kernels stream each once; FSDP1's clip_grad_norm_ takes the tensors one at a time too.
enum class OptimizerStep { kMasterWeights, kInPlace, kInPlaceLoop };
/// How context parallelism moves keys and values between the CP ranks.
///  kRing: ring attention (Transformer Engine's cp_comm_type "p2p", Megatron-Core's default):
///    cp - 1 steps, each passing one rank's K and V chunk to the next beside the attention of the
///    chunk in hand; backward passes K and V again and returns dK and dV the same way.
///  kAllGather: Llama 3's (Dubey et al. 2024, §3.3.2: "we first all-gather the key (K) and value
///    (V) tensors, and then compute attention output for the local query (Q) tensor chunk ...
///    the all-gather communication latency is exposed in the critical path"; Transformer
///    Engine's cp_comm_type "all_gather", AttnFuncWithCPAndKVAllGather, which cites it): K and V
///    each all-gathered before the attention, the attention waiting; the backward keeps only the
///    local chunks, so it gathers them again before the attention's backward and reduce-scatters
///    dK and dV after it, each exposed.
///  kGatheredRing: PyTorch's context parallelism with its default rotate method, all-gather
///    (torch/distributed/tensor/experimental/_attention.py: _ContextParallelOptions.rotate_method
///    = ALL_GATHER, _AllGatherRotater; torchtitan's context_parallel_rotate_method "allgather"):
///    the ring's cp steps of causal SDPA, but K and V (one cat(K, V) buffer) all-gathered once, at
///    step 0, which runs beside it; the later steps wait for it. The backward
///    (_templated_ring_attention_backward) gathers K and V again the same way, and passes the
///    accumulated dK and dV (FP32: convert_to_f32) to the next rank after each step
///    (_AllToAllRotater, permute_tensor): each beside the next step, the last one, which brings a
///    rank's own gradients home, waited for after the last step.
enum class CpExchange { kRing, kAllGather, kGatheredRing };
/// A parallel axis, for the order in which groups are laid onto the topology.
enum class Axis { kTp, kCp, kEp, kDp, kPp };

struct Strategy {
  int tp = 1;                     // tensor-parallel degree; REQUIRES: divides heads and kv_heads
  bool sequence_parallel = false;  // Megatron SP: norms/dropout sharded along the sequence
  int pp = 1;                     // pipeline stages; REQUIRES: <= layers
  int vp = 1;                     // virtual stages per rank (interleaved schedule)
  Schedule schedule = Schedule::k1F1B;  // kInterleaved whenever vp > 1
  int dp = 0;                     // data-parallel degree; 0 = gpus / (tp * pp * cp)
  int zero_stage = 0;             // 0 none, 1 optimizer, 2 + gradients, 3 + parameters (FSDP)
  int cp = 1;                     // context-parallel degree (sequence split across GPUs)
  CpExchange cp_exchange = CpExchange::kRing;
  // The model repeats K and V to the query heads before the attention, so that a CP exchange
  // moves heads / tp of them per rank rather than kv_heads / tp (torchtitan's Llama:
  // models/llama/model.py, Attention.forward, repeat_kv before F.scaled_dot_product_attention).
  bool repeat_kv = false;
  int ep = 1;                     // expert-parallel degree (MoE); REQUIRES: divides experts
  int micro_batch = 1;            // sequences per micro-batch per pipeline
  int global_batch = 0;           // sequences per optimizer step
  int seq_len = 0;                // tokens per sequence
  Recompute recompute = Recompute::kNone;
  int recompute_interval = 1;     // kFull recomputes every k-th layer (torchtitan's layer-level
                                  // selective checkpointing is kFull with k = 2)
  Dtype dtype = Dtype::kBf16;             // matmul precision
  // FP8 GEMMs cast each weight to FP8 on a step's first micro-batch only and reuse it for the
  // others (Transformer Engine's is_first_microbatch, which Megatron passes); false: every
  // micro-batch casts it again (torchao's Float8Linear).
  bool fp8_weight_cache = false;
  // The weights stay FP32 and torch.autocast casts each to 16 bits wherever a matmul uses it:
  // FSDP without parameter mixed precision (Composer's DEFAULT before March 2023), DDP under
  // Lightning's bf16 autocast. ZeRO gathers FP32 weights; every forward (and recomputed forward)
  // casts each linear's weight, and every backward casts its gradient back to FP32.
  bool autocast_fp32_weights = false;
  Dtype grad_reduce_dtype = Dtype::kBf16;  // precision of the data-parallel gradient reduction
  AttentionKernel attention = AttentionKernel::kFlash;
  bool overlap_tp_comm = false;   // TP collectives overlapped with GEMMs (async TP)
  // Megatron's column-parallel linear layers (the QKV and MLP-up projections) run their backward's
  // TP collectives beside their own GEMMs (LinearWithGradAccumulationAndAsyncCommunication,
  // CUDA_DEVICE_MAX_CONNECTIONS=1 so that each collective is scheduled before its GEMM): without
  // SP the input gradient's all-reduce beside the weight-gradient GEMM
  // (async_tensor_model_parallel_allreduce, Megatron-LM from late 2021, Megatron-Core); with SP
  // the layer's input gathered again beside the input-gradient GEMM (the forward's gathered copy
  // is not kept) and the input gradient's reduce-scatter beside the weight-gradient GEMM. With
  // overlap_tp_comm this is Transformer Engine's userbuffers backward (ub_bulk_dgrad and
  // ub_bulk_wgrad): the forward's gathers stay split across the GEMMs, the column-parallel
  // backward runs these bulk collectives beside its whole GEMMs. No effect under zero-bubble
  // schedules, which defer the weight gradient.
  bool tp_async_backward = false;
  // SMs each of those backward collectives holds while it runs: 0, NCCL's channels of the TP
  // group; under overlap_tp_comm, the num_sm of Transformer Engine's bulk userbuffers kernels.
  int tp_backward_sms = 0;
  bool overlap_dp_comm = true;    // DP gradient buckets reduced during backward (false: after it)
  GradSync grad_sync = GradSync::kAsReady;
  OptimizerStep optimizer_step = OptimizerStep::kMasterWeights;
  ShardedCollectives sharded_collectives = ShardedCollectives::kPerLayer;  // ZeRO-3 only
  GradAccumulation grad_accumulation = GradAccumulation::kSeparateKernel;
  // A linear layer's bias gradient is summed over the tokens in the weight-gradient GEMM's
  // epilogue (cuBLASLt's BGRADB: flash-attn's FusedDense); false: in a kernel of its own that
  // reads the output gradient (PyTorch's linear backward, Megatron's layers).
  bool bias_grad_in_gemm = false;
  // A linear that adds its own bias does so in a kernel of its own after the GEMM, reading and
  // writing the output once (PyTorch before PR #72728, Feb 2022, ran F.linear on a 3-D input as
  // matmul then add_; Megatron's ColumnParallelLinearWithAsyncAllreduce does matmul then
  // `output + bias`); false: the GEMM's epilogue adds it (addmm, Transformer Engine).
  bool bias_add_kernel = false;
  Elementwise elementwise = Elementwise::kFusedKernels;
  // The loss runs as one fused kernel (Transformer Engine, flash-attn, Megatron-Core); false:
  // Megatron-LM's vocab-parallel cross entropy of separate FP32 passes (before 2024).
  bool fused_cross_entropy = true;
  // Host (CPU) time the framework spends per kernel it launches: Python, the dispatcher and the
  // launch call. A pass whose kernels finish faster than the host launches them runs at the host's
  // pace. 42.4 us: mean interval between kernel launches on a host thread in real eager PyTorch
  // training traces (tools/measure_host_dispatch.py). 0 models CUDA graphs.
  double host_dispatch_s = 42.4e-6;
  PipelineTransfers pipeline_transfers = PipelineTransfers::kHostSynchronised;
  // The host reads each micro-batch's loss before it launches that micro-batch's backward, and so
  // waits for the GPU to finish the forward: DeepSpeed's engine.backward() called
  // loss.mean().item() from July 2023 (PR #4030) to February 2024 (PR #5135).
  bool host_reads_loss = false;
  // The host synchronises the device before it launches each micro-batch's forward, so it waits
  // for the GPU and for every transfer in flight, the forward's own input included: DeepSpeed's
  // DeepSpeedEngine.forward starts its throughput timer there when it was given no training
  // data (ThroughputTimer.start(), torch.cuda.synchronize() once step() has counted two steps;
  // its PipelineEngine never counts them, so there the timer does not synchronise).
  bool host_syncs_each_forward = false;
  // ZeRO-3's root unit (embeddings, final norm, head) is freed after each forward and gathered
  // again before the backward: FSDP2 from PyTorch 2.8 under fully_shard(model,
  // reshard_after_forward=True), which it honours for the root since PyTorch PR #154704 (June
  // 2025). FSDP1 keeps the root gathered for the backward (_post_forward_reshard frees no root's
  // parameters), and FSDP2 before then did too (FSDPState._lazy_init set the root's
  // post_forward_mesh_info to None), as it still does where reshard_after_forward is left unset.
  bool fsdp_root_reshards = false;
  // The host waits for the compute stream in each forward of a layer, before its MLP (so again
  // in each full recomputation of it), and so for what the stream waits on (a receive just
  // posted): Megatron-DeepSpeed's ParallelTransformerLayer.forward creates moe_loss and mlp_bias
  // with torch.tensor(0.0, device=...), which copies the value from pageable host memory with
  // non_blocking=False (PyTorch's internal_new_from_data, torch/csrc/utils/tensor_new.cpp), a
  // copy that synchronises the stream (copy_kernel_cuda's memcpy_and_sync,
  // aten/src/ATen/native/cuda/Copy.cu: cudaStreamSynchronize).
  bool host_syncs_before_mlp = false;
  // DeepSpeed's PipelineEngine (TrainSchedule, 1F1B only): a pass's output goes out at the stage's
  // next step beside that step's receive, SendGrad before RecvActivation ahead of a forward and
  // RecvGrad before SendActivation ahead of a backward, and each neighbouring stage is one NCCL
  // stream (torch.distributed's send and recv between two ranks share a communicator), so its
  // sends and receives run in that order. false: each pass sends its output as it ends, over
  // streams of their own (Megatron's batched exchanges, PyTorch's pipelining).
  bool deferred_sends = false;
  // Every launch returns only once its kernel (or collective) has finished, so the host and the
  // GPU take turns instead of overlapping: CUDA_LAUNCH_BLOCKING=1, which BigScience's BLOOM-176B
  // training ran with to avoid hangs (tr11-176B-ml.slurm).
  bool launch_blocking = false;
  // Megatron-LM's scatter/gather of pipeline tensors (scatter_gather_tensors_in_pipeline, on by
  // default from 2021 until sequence parallelism, which splits the tensors anyway; Narayanan et
  // al. 2021 §4.1), and DeepSpeed's partitioned pipeline tensors with TP > 1: each TP rank sends
  // only its 1/tp of a boundary tensor, and the receiving stage all-gathers the pieces over its
  // TP group before using them.
  bool pp_scatter_gather = false;
  std::vector<Axis> placement = {Axis::kTp, Axis::kCp, Axis::kEp, Axis::kDp, Axis::kPp};  // innermost first

  int micro_batches() const { return global_batch / (dp * micro_batch); }
  // ZeRO-3 whose gathers run on a stream of their own, ahead of the layers (not DeepSpeed 0.3.x's
  // blocking ones): they fill the pipeline's waits and share the links of whatever crosses them.
  bool prefetches_zero3_gathers() const {
    return zero_stage >= 3 && sharded_collectives != ShardedCollectives::kPerTensorBlocking;
  }
  // Blocking launches where the host launches at all: with no host time (CUDA graphs) nothing
  // waits for it.
  bool host_blocks_on_launches() const { return launch_blocking && host_dispatch_s > 0; }
};

}  // namespace stepcast::spec
