// GpuSpec: one accelerator's datasheet figures and the measured efficiencies the cost model uses.
// Every number in data/gpus/*.yaml names its source next to it.
#pragma once

#include <string>
#include <vector>

namespace stepcast::spec {

struct GpuSpec {
  std::string name;
  // Dense peak math rates (datasheet, no sparsity), FLOP/s.
  double peak_fp32_flops = 0;
  double peak_tf32_flops = 0;
  double peak_bf16_flops = 0;  // also FP16
  double peak_fp8_flops = 0;   // 0 when the GPU has no FP8 tensor cores
  double hbm_bytes = 0;            // memory capacity
  double hbm_bandwidth_Bps = 0;    // peak memory bandwidth, bytes/s
  double tdp_w = 0;                // board power of the datasheet part
  double power_limit_w = 0;        // configured power cap; 0 means tdp_w
  int sm_count = 0;                // streaming multiprocessors (compute units), for wave quantisation
  int collective_sms = 0;          // SMs an NCCL collective kernel over NVLink holds while it
                                   // runs (one per channel; through a NIC fewer:
                                   // cost::collective_sms); 0: overlapped collectives slow no kernel
  // Measured efficiencies (fractions of the peaks above; source in the YAML).
  double matmul_efficiency = 0;    // best large BF16 GEMM rate / peak_bf16 (maximum achievable matmul)
  double fp8_matmul_efficiency = 0;  // same for FP8; 0 means matmul_efficiency
  double memory_efficiency = 0;    // streaming-kernel bandwidth / hbm_bandwidth
  double attention_efficiency = 0;  // FlashAttention fwd+bwd rate at long sequences / peak_bf16
  // Key positions at which FlashAttention runs at half that rate: each query block's load and
  // softmax bookkeeping is amortised over the keys. The default, 384, is read off the A100's curve
  // (Dao 2023, FlashAttention-2, Fig. 4 and 5: head dim 128, causal, 512 -> 16k), for GPU files
  // without a fit of their own; the A100 presets fit 485 to six of those kernel measurements.
  double attention_half_keys = 384;
  // The same curve for cuDNN's fused attention (--attention cudnn); 0: not measured on this GPU.
  double cudnn_attention_efficiency = 0;
  double cudnn_attention_half_keys = 0;
  // Each kernel's rate with heads of 64 or fewer, over its rate with heads of 128: measured
  // where given; 1 (the same) where not.
  double attention_head64_rate = 1;
  double cudnn_attention_head64_rate = 1;
  // BF16/FP16 GEMMs with an odd leading dimension, which cannot load rows in vectors: their
  // measured rate / peak_bf16; 0: three times the aligned GEMM's time (cost/compute.cpp).
  double misaligned_gemm_efficiency = 0;
  // PyTorch's eager RMSNorm (x.float(), pow, mean, rsqrt, two multiplies, the cast back; its
  // autograd backward through the same chain): bytes per element at this GPU's streaming
  // bandwidth that the chain took, forward and backward, as measured. The default is
  // Liger-Kernel's measurement on the A100-SXM4-80GB (workload/operators.cpp).
  double eager_rmsnorm_bytes = 58;
  double eager_rmsnorm_backward_bytes = 155;
  // The optimizer's multi-tensor kernels (fused Adam, foreach norms and scales): their measured
  // bandwidth / hbm_bandwidth; 0: memory_efficiency.
  double optimizer_memory_efficiency = 0;
  double kernel_overhead_s = 0;    // fixed cost per kernel launch seen on the GPU timeline
  // Measured BF16 GEMM throughput / peak_bf16 of single GEMMs whose m, n and k each take one of
  // `sizes` (ascending), at index (i_m * S + i_n) * S + i_k for S sizes; empty where none was
  // measured, and the GEMM model prices BF16 GEMMs from matmul_efficiency alone.
  struct GemmGrid {
    std::vector<double> sizes;
    std::vector<double> efficiency;
  } gemm_grid;

  double effective_power_limit_w() const { return power_limit_w > 0 ? power_limit_w : tdp_w; }
};

}  // namespace stepcast::spec
