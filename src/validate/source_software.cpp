#include "validate/source_software.h"

namespace stepcast::validate {
namespace {

using spec::AttentionKernel;
using spec::Axis;
using spec::Dtype;
using spec::Elementwise;
using spec::Recompute;

bool contains(std::string_view haystack, std::string_view needle) {
  return haystack.find(needle) != std::string_view::npos;
}

}  // namespace

Software software_of(std::string_view source, std::string_view model, std::string_view notes,
                     std::string_view gpu, int pp) {
  Software sw;
  const bool megatron_lm_2021 = contains(source, "Narayanan");
  if (megatron_lm_2021 || contains(source, "Korthikanti")) {
    // Megatron-LM of 2021 and 2022: attention before FlashAttention (integrated in 2023); FP16
    // training (--fp16, in both papers' scripts), its gradients all-reduced in FP16 after the
    // whole backward pass (no bucketed overlap in its local DDP).
    sw.attention = AttentionKernel::kUnfused;
    sw.overlap_dp = false;
    sw.dtype = Dtype::kFp16;
    sw.grad_reduce = Dtype::kFp16;
    sw.fused_cross_entropy = false;  // vocab_parallel_cross_entropy(output.float(), labels)
    // Its pipeline sent 1/tp of each boundary tensor from every TP rank and gathered the pieces
    // at the receiver (§4.1; --no-scatter-gather-tensors-in-pipeline turned it off); with
    // sequence parallelism (2022) the tensors are already split, and nothing is gathered.
    sw.pp_scatter_gather = true;
    // Its QKV projection adds its bias after the GEMM: ColumnParallelLinear ran F.linear on the
    // 3-D [s, b, h] input, which PyTorch ran as matmul then add_ (at::linear's addmm path took
    // 2-D inputs only until PR #72728), and from late 2021 ColumnParallelLinearWithAsyncAllreduce
    // does `output = torch.matmul(input, weight.t())` then `output = output + bias`
    // (megatron/mpu/layers.py).
    sw.bias_add_kernel = true;
    if (megatron_lm_2021) {
      // Its FusedScaleMaskSoftmax chose the kernel by sequence length alone; the kernel asserted
      // that the attention batches (micro-batch x heads per TP rank) fill its blocks
      // (TORCH_INTERNAL_ASSERT(attn_batches % batches_per_block == 0) in
      // scaled_upper_triang_masked_softmax.h). The check that falls back to PyTorch instead came
      // with Megatron-LM PR #133 in August 2021, after the paper.
      sw.softmax_kernel_required = true;
      // Their Eq. 3 counts activation recomputation in every run's FLOPs, and the ZeRO-3 rows could
      // not run without it (GPT-3 at micro-batch 4 stores about 1 TB of activations per GPU).
      sw.unstated_recompute = Recompute::kFull;
      if (contains(model, "ZeRO-3")) {
        // DeepSpeed of the paper's time (0.3.x, early 2021): one collective per parameter tensor,
        // the host synchronising with the GPU before each gather (stage3.py, fetch_sub_module and
        // _allgather_param; coalesced fetching came with DeepSpeed PR #1188, June 2021).
        sw.zero_stage = 3;
        sw.sharded_collectives = spec::ShardedCollectives::kPerTensorBlocking;
      }
    } else {
      // By 2022 its linear layers added the weight gradient into the main gradient inside the
      // GEMM (gradient_accumulation_fusion, apex's fused_weight_gradient_mlp_cuda, which apex
      // ported to apex.transformer in PR #1297, February 2022). In 2021 autograd produced each
      // weight gradient and a hook added it into the main gradient.
      sw.grad_accumulation = spec::GradAccumulation::kFusedIntoGemm;
      // Its column-parallel layers ran their backward collectives beside their GEMMs: the
      // all-reduce of the input gradient (ColumnParallelLinearWithAsyncAllreduce, on unless
      // --no-async-tensor-model-parallel-allreduce) or, with SP, the input's second gather and
      // the input gradient's reduce-scatter (ColumnParallelLinearWithSequenceParallelism).
      sw.tp_async_backward = true;
    }
  } else if (contains(source, "Llama3")) {
    // Llama 3 paper §3.3: FSDP that keeps parameters after forward (ZeRO-2-like), FP32 gradient
    // reduce-scatter, parallelism order [TP, CP, PP, DP] from innermost, asynchronous pipeline
    // point-to-point communication (§3.3.2).
    sw.zero_stage = 2;
    sw.pipeline_transfers = spec::PipelineTransfers::kAsynchronous;
    sw.grad_reduce = Dtype::kFp32;
    // Its context parallelism all-gathers K and V, exposed, rather than passing them round a
    // ring (§3.3.2).
    sw.cp_exchange = spec::CpExchange::kAllGather;
    sw.placement = {Axis::kTp, Axis::kCp, Axis::kPp, Axis::kEp, Axis::kDp};
  } else if (contains(source, "torchtitan") || contains(source, "measure_step")) {
    // tools/measure_step.py trains as torchtitan does (data/validation/README.md).
    // FSDP2 with reduce_dtype float32; with pipeline parallelism torchtitan does not reshard
    // parameters after forward (ZeRO-2-like).
    sw.zero_stage = pp > 1 ? 2 : 3;
    sw.sharded_collectives = spec::ShardedCollectives::kPerParameter;
    sw.grad_reduce = Dtype::kFp32;
    sw.optimizer_step = spec::OptimizerStep::kInPlace;  // FSDP2's FP32 parameters, max_norm 1.0
    sw.micro_batches_equal_pp = true;
    // torchtitan's "selective" is its op-level policy unless the row says otherwise: its Llama
    // configs set selective_ac_option = 'op' (train_configs/llama3_8b.toml).
    sw.selective = Recompute::kOp;
    // Its Llama model is PyTorch reference code (torchtitan/models/llama/model.py, norms.py):
    // run eagerly unless the row names torch.compile.
    sw.elementwise = contains(model, "compile") ? Elementwise::kCompiled : Elementwise::kEager;
    sw.pipeline_transfers =
        spec::PipelineTransfers::kStreamOrdered;  // torch.distributed.pipelining
    // Its stages reduce-scatter their gradients only after their last backward
    // (PipelineStage.backward_maybe_with_nosync in torch/distributed/pipelining/stage.py, 2024).
    sw.grad_sync = spec::GradSync::kAfterBackward;
    // Its TP plan shards the norms and the blocks' outputs along the sequence (SequenceParallel,
    // output_layouts=Shard(1) in models/llama/parallelize_llama.py, apply_tp).
    sw.tp_shards_sequence = true;
    sw.hidden_dropout = false;  // its models have no dropout
    // Its Llama repeats K and V to the query heads before SDPA (models/llama/model.py,
    // Attention.forward: repeat_kv), so context parallelism moves heads / tp of them.
    sw.repeat_kv = true;
    // Its context parallelism is PyTorch's (context_parallel in torch/distributed/tensor/
    // experimental/_attention.py), whose rotate method defaulted to all-gather (PyTorch PR #132820,
    // August 2024) and which torchtitan set from context_parallel_rotate_method, default
    // "allgather" (torchtitan PR #728, December 2024; PyTorch PR #142093, set_rotate_method).
    sw.cp_exchange = spec::CpExchange::kGatheredRing;
    // PyTorch 2.11's SDPA ran cuDNN's attention on the H100 (the traces' kernels), except where
    // the row forced FlashAttention-2.
    if (contains(source, "measure_step") && !contains(model, "FlashAttention-2"))
      sw.attention = AttentionKernel::kCudnn;
    // tools/measure_step.py calls fully_shard(model, reshard_after_forward=True), which PyTorch
    // 2.11 honours for the root; the 2024 PyTorch of torchtitan's tables kept the root gathered.
    sw.fsdp_root_reshards = contains(source, "measure_step");
  } else if (contains(source, "Megatron-Bridge")) {
    // Megatron-Core as NVIDIA's performance recipes run it (Megatron-Bridge scripts/performance,
    // NeMo 25.09-26.02): the distributed optimizer, gradients reduced in BF16
    // (grad_reduce_in_fp32 = False), sequence parallelism with TP, TP communication overlapped
    // with the GEMMs through userbuffers on H100, and the interleaved pipeline's transfers
    // overlapped with compute (data/validation/README.md).
    sw.zero_stage = 1;
    sw.tp_shards_sequence = true;
    sw.tp_comm_overlap = true;
    // Transformer Engine's column-parallel backward (LayerNormLinear with ub_bulk_dgrad and
    // ub_bulk_wgrad, which the recipes' userbuffers configs set for qkv and fc1): the input
    // gathered again beside the whole input-gradient GEMM and the input gradient's reduce-scatter
    // beside the weight-gradient GEMM, on kernels of num_sm SMs (Megatron-Bridge
    // training/comm_overlap.py, userbuffers_fp8_h100_h8192_tp4_mbs1_seqlen8192: qkv 4 and 24,
    // fc1 2 and 4; ..._h16384_tp8_cp2_...: qkv 2 and 24, fc1 2 and 2). The model takes one count
    // per run: the largest of the three small ones, which cover all but the QKV weight gradient,
    // the smallest of the four GEMMs.
    sw.tp_async_backward = true;
    sw.tp_backward_sms = contains(model, "405B") ? 2 : 4;
    sw.fp8_weight_cache = true;
    sw.pipeline_transfers = spec::PipelineTransfers::kAsynchronous;
    sw.grad_sync = spec::GradSync::kAligned;  // align_grad_reduce, Megatron-Core's default
    // gradient_accumulation_fusion, Megatron-Core's default: Transformer Engine's linears add the
    // weight gradient into the main gradient in the GEMM (fuse_wgrad_accumulation).
    sw.grad_accumulation = spec::GradAccumulation::kFusedIntoGemm;
  } else if (contains(source, "BLOOM")) {
    // BigScience's Megatron-DeepSpeed of 2022 (train/tr11-176B-ml: README.md and the slurm
    // script): Megatron's unfused attention with its fused softmax kernel, which the run required
    // (--abort-on-unmet-fused-kernel-constraints); DeepSpeed's pipeline engine, which with TP > 1
    // sends partitioned boundary tensors and passes their layout through the host, and reduces
    // the gradients after the whole schedule; its BF16 optimizer, which accumulates and reduces
    // FP32 gradients and shards the optimizer over the data-parallel group ("its own zero stage 1
    // equivalent"); the vocab-parallel cross entropy on FP32 logits; and CUDA_LAUNCH_BLOCKING=1,
    // set to stop the training from hanging.
    sw.attention = AttentionKernel::kUnfused;
    sw.softmax_kernel_required = true;
    sw.overlap_dp = false;
    sw.grad_reduce = Dtype::kFp32;
    sw.zero_stage = 1;
    sw.fused_cross_entropy = false;
    sw.pp_scatter_gather = true;
    sw.launch_blocking = true;
  } else if (contains(source, "flash-attention")) {
    // The FlashAttention repository's GPT training of November 2022 (training/configs/experiment/
    // pile/*-flash.yaml): FlashAttention 1, fused dense + GELU, fused dropout + add + LayerNorm
    // and apex's cross entropy. Lightning's bf16 autocast keeps FP32 weights, so DDP all-reduces
    // FP32 gradients, in buckets during the backward; from GPT3-760M on, PyTorch's
    // ZeroRedundancyOptimizer shards the optimizer (DDPStrategyZero1).
    sw.attention = AttentionKernel::kFlashV1;
    // Its FusedDense layers compute the bias gradient with the weight's, in one cuBLASLt GEMM
    // (fused_dense_cuda.linear_bias_wgrad).
    sw.bias_grad_in_gemm = true;
    sw.grad_reduce = Dtype::kFp32;
    // apex's FusedAdam on the FP32 weights; Lightning clips with gradient_clip_val 1.0
    // (experiment/pile/base.yaml) through torch's clip_grad_norm_.
    sw.optimizer_step = spec::OptimizerStep::kInPlace;
    sw.autocast_fp32_weights = true;  // Lightning's bf16 autocast over the FP32 weights
    if (contains(notes, "ZeRO-1")) sw.zero_stage = 1;
  } else if (contains(source, "MosaicML") || contains(notes, "FULL_SHARD")) {
    sw.zero_stage = 3;  // llm-foundry FSDP FULL_SHARD
    // Composer wraps the model in PyTorch's FullyShardedDataParallel (FSDP1: torch 2.0.1 and the
    // 2.1 nightly of August 2023), flat parameters per unit.
    sw.sharded_collectives = spec::ShardedCollectives::kFlatParameter;
    // FSDP's FP32 flat parameters, clipped by FSDP's clip_grad_norm_ (its pretraining YAMLs'
    // gradient_clipping, clipping_threshold 1.0) and stepped by their optimizer, decoupled_adamw:
    // Composer's DecoupledAdamW, a Python loop of unfused kernels over the parameters.
    sw.optimizer_step = spec::OptimizerStep::kInPlaceLoop;
    // Every table ran a FlashAttention-1-generation kernel. The A100 40GB table came from the
    // benchmark script's first form: its Precision and MP Mode columns read "bf16" and "PURE", as
    // that script wrote them, and it set the model's attn_impl from --attn_impl, default 'triton'
    // (scripts/train/benchmarking/submit_benchmarks.py): flash_attn_triton.py. The H100 table and
    // the A100 80GB table's amp_bf16 rows came from the benchmark branch of llm-foundry PR #543
    // (merged October 2023 with the README @061f2c7): its results file
    // (scripts/train/benchmarking/h100new.md @beb8dee) lists these rows with the image
    // mosaicml/pytorch:2.1.0_cu121-nightly20230827, and the submit_benchmarks.py that handles such
    // nightly images (@803e671) installs llm-foundry's `gpu` extra (FlashAttention 1: llm-foundry
    // issue #722), pip-installs flash-attn==1.0.7 on every H100 run, writes amp_<precision> with
    // FSDP's DEFAULT mixed precision, and defaults --attn_impl to 'triton'; the sweep that lists
    // the tables' runs (sweep.sh) passes no --attn_impl. MPT took FlashAttention-2 only in
    // llm-foundry v0.4.0 (PRs #651, #666, #672, after these runs). The copy that installs the
    // gpu-flash2 extra and defaults to flash (@51652ea) is later: it pins flash-attn 2.4.2.
    sw.attention = AttentionKernel::kFlashV1;
    // The rows whose Precision and MP Mode read amp_bf16 and DEFAULT (all but the A100 40GB
    // table and its 80GB table's two 70B rows, which read bf16 and PURE) reduce FP32 gradients:
    // since Composer PR #2047 (March 2023, before llm-foundry v0.2.0's Composer 0.15) DEFAULT
    // is param_dtype the autocast precision, reduce_dtype torch.float32 ("emulate AMP").
    if (!contains(gpu, "40GB") && !(contains(gpu, "A100") && contains(model, "70b")))
      sw.grad_reduce = Dtype::kFp32;
  }
  return sw;
}

}  // namespace stepcast::validate
