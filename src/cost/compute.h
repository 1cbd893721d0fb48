// Compute-time model: how long one kernel takes on one GPU. A roofline whose compute roof is the
// measured achievable rate, not the datasheet peak:
//
//   time = max(flops / (peak * efficiency * clock), bytes / (hbm_bandwidth * memory_efficiency))
//          + kernel_overhead
//
// BF16 GEMMs on a GPU with a measured grid (GpuSpec::GemmGrid): the measured rate of single GEMMs
// interpolated at the shape. Other GEMMs: efficiency = matmul_efficiency (maximum achievable matmul
// FLOPS, measured) x tile utilisation (output tiles of 128x256 spread over SMs in waves: a GEMM
// whose tiles fill 1.1 waves runs at 1.1/2 of the rate). A 16-bit GEMM with an odd width (k or
// n) takes three times as long: its rows cannot be loaded in vectors. Attention: FlashAttention's
// measured fwd+bwd rate, which falls at short sequences (fewer key blocks to amortise each query
// block's load and softmax). Memory-bound kernels: streaming bandwidth. clock: sustained clock
// under a power cap below the TDP.
// Times in seconds; FLOPs and bytes per kernel.
//
// Beside a collective: an NCCL kernel holds one SM per channel for as long as it runs, so a GEMM
// or attention kernel overlapped with it runs on the SMs left (GEMM tiles in more waves, attention
// at the rate of fewer SMs). Bandwidth-bound kernels are taken to need fewer SMs than remain, but
// share HBM with the collective: they stream at the bandwidth it leaves them.
#pragma once

#include <algorithm>

#include "spec/gpu_spec.h"
#include "spec/strategy.h"

namespace stepcast::cost {

struct GemmShape {
  double m = 0, n = 0, k = 0;
  double instances = 1;  // batched GEMMs run by one kernel
};

/// A compute-bound kernel's seconds with every SM, beside one collective's kernel on the SMs it
/// leaves (Beside::collective_sms), and beside two.
struct KernelTime {
  double whole = 0, beside = 0, beside_two = 0;
};

/// How many of KernelTime's prices a caller needs, in its order; those not asked for are left at
/// `whole`. Pricing fewer keeps the closed form fast where nothing overlaps.
enum class Shares { kWhole = 1, kBesideOne = 2, kBesideTwo = 3 };

/// The prices to compute and the SMs each collective beside the kernel holds
/// (cost::collective_sms of the collective's group).
struct Beside {
  Shares shares = Shares::kWhole;
  int collective_sms = 0;
};

/// A linear layer's three GEMMs: forward Y = X W (m x n, reduced over k), input gradient
/// dX = dY W^T (m x k over n) and weight gradient dW = X^T dY (k x n over m).
struct LinearGemmTimes {
  KernelTime fwd, input_grad, weight_grad;
};

/// A 16-bit linear layer's odd width (n, else k), or 0 where both are even or its GEMMs run in
/// FP8 (`fp8` on a GPU with an FP8 peak). With rows of odd length they cannot be loaded in
/// vectors, and the layer's GEMMs run at the GPU's measured rate for such kernels, or take three
/// times as long where it has none (linear_gemm_times).
double odd_width(const GemmShape& fwd, bool fp8, const spec::GpuSpec& gpu);

/// Each GEMM of a linear layer whose forward is `fwd`, each moving `bytes`; `fp8` uses the FP8
/// tensor-core peak. With `row_chunks` > 1 the forward and, where `split_input_grad`, the input
/// gradient each run as that many GEMMs of m / row_chunks rows, one after another (overlapped TP
/// splits them by the ranks' token shards); the weight gradient, which reduces over the rows,
/// runs whole.
LinearGemmTimes linear_gemm_times(const GemmShape& fwd, double bytes, bool fp8,
                                  const spec::GpuSpec& gpu, Beside beside, double row_chunks = 1,
                                  bool split_input_grad = true);

/// A fused attention kernel's rate: efficiency x keys / (keys + half_keys) of peak_bf16, times
/// head64_rate for heads of 64 or fewer.
struct AttentionCurve {
  double efficiency, half_keys, head64_rate;
};
/// The GPU's curve for `kernel`: cuDNN's where asked for, else FlashAttention-2's.
AttentionCurve attention_curve(const spec::GpuSpec& gpu, spec::AttentionKernel kernel);

/// A fused attention kernel of `flops` (causal-skipped count) over sequences with `keys` key
/// positions, moving `bytes`, at `relative_rate` times the rate of `curve`.
KernelTime attention_time(double flops, double bytes, double keys, double relative_rate, AttentionCurve curve,
                          const spec::GpuSpec& gpu, Beside beside);

/// The bandwidth a bandwidth-bound kernel streams at, at `efficiency` of the GPU's HBM bandwidth
/// while collectives beside it take `hbm_taken_Bps` of it (cost::collective_hbm_Bps). Where
/// kernel and collectives together ask for more than the achievable bandwidth, the two share it
/// and the kernel keeps at least half. Found once for the many kernels of a layer (the estimate
/// prices some 30 per call).
class StreamingRate {
 public:
  StreamingRate(const spec::GpuSpec& gpu, double efficiency, double hbm_taken_Bps)
      : overhead_s_(gpu.kernel_overhead_s) {
    const double achievable = gpu.hbm_bandwidth_Bps * efficiency;
    Bps_ = achievable - std::min(hbm_taken_Bps, achievable / 2);
  }
  /// Seconds for a kernel moving `bytes`.
  double seconds(double bytes) const { return bytes / Bps_ + overhead_s_; }

 private:
  double Bps_ = 0, overhead_s_;
};

/// Seconds for a bandwidth-bound kernel moving `bytes` at StreamingRate(gpu, efficiency, hbm_taken_Bps).
inline double streaming_time_s(double bytes, const spec::GpuSpec& gpu, double efficiency, double hbm_taken_Bps) {
  return StreamingRate(gpu, efficiency, hbm_taken_Bps).seconds(bytes);
}
/// The same at the bandwidth a copy reaches (GpuSpec::memory_efficiency).
inline double memory_time_s(double bytes, const spec::GpuSpec& gpu, double hbm_taken_Bps = 0) {
  return streaming_time_s(bytes, gpu, gpu.memory_efficiency, hbm_taken_Bps);
}

/// Sustained-clock factor (<= 1) of a GPU capped below its TDP. Dynamic power grows about as
/// f * V^2 and voltage with frequency in the DVFS range, so f ~ P^(1/3).
double clock_factor(const spec::GpuSpec& gpu);

}  // namespace stepcast::cost
