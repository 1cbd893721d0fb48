#include "cost/compute.h"

#include <algorithm>
#include <cmath>

namespace stepcast::cost {
namespace {

// Output tile of the large-GEMM kernels cuBLAS picks on Ampere and Hopper (CUTLASS default
// 128x256 threadblock tile for BF16 tensor-core GEMMs); one tile per SM at a time.
constexpr double kTileM = 128, kTileN = 256;
// FlashAttention-2 forward+backward throughput rises with the number of key positions as each
// query block's load and softmax bookkeeping is amortised: half the long-sequence rate at about
// 384 keys (Dao 2023, FlashAttention-2, Fig. 4 and 5: A100 head dim 128, causal, 512 -> 16k).
constexpr double kAttentionHalfKeys = 384;

// Output tiles of the GEMM; the tile may lie either way round, and both orientations cover
// kTileM x kTileN outputs per tile, so the better one has fewer tiles.
double tiles(const GemmShape& g) {
  return std::min(std::ceil(g.m / kTileM) * std::ceil(g.n / kTileN), std::ceil(g.m / kTileN) * std::ceil(g.n / kTileM)) *
         g.instances;
}

// SMs a compute kernel has beside `collectives` collectives (at least one).
double sms_beside(const spec::GpuSpec& gpu, int collectives) {
  return std::max(1, gpu.sm_count - collectives * gpu.collective_sms);
}

}  // namespace

double clock_factor(const spec::GpuSpec& gpu) {
  const double limit = gpu.effective_power_limit_w();
  if (gpu.tdp_w <= 0 || limit >= gpu.tdp_w) return 1;
  return std::cbrt(limit / gpu.tdp_w);
}

double memory_time_s(double bytes, const spec::GpuSpec& gpu, double hbm_taken_Bps) {
  const double achievable = gpu.hbm_bandwidth_Bps * gpu.memory_efficiency;
  return bytes / (achievable - std::min(hbm_taken_Bps, achievable / 2)) + gpu.kernel_overhead_s;
}

LinearGemmTimes linear_gemm_times(const GemmShape& fwd, double bytes, bool fp8, const spec::GpuSpec& gpu,
                                  Shares shares) {
  const bool use_fp8 = fp8 && gpu.peak_fp8_flops > 0;
  const double peak = use_fp8 ? gpu.peak_fp8_flops : gpu.peak_bf16_flops;
  const double efficiency = use_fp8 && gpu.fp8_matmul_efficiency > 0 ? gpu.fp8_matmul_efficiency
                                                                      : gpu.matmul_efficiency;
  const double seconds_per_flop = 1 / (peak * efficiency * clock_factor(gpu));
  // The three GEMMs move the same bytes (each reads two of X, W, Y or their gradients, writes one).
  const double traffic = bytes / (gpu.hbm_bandwidth_Bps * gpu.memory_efficiency);
  // Every wave lasts as long as a full one: one tile of kTileM x kTileN outputs per SM, each a
  // k-long dot product, at the rate of one SM, peak / sm_count. (With every SM, the same as the
  // GEMM's FLOPs at the rate scaled by tile utilisation, m n / (waves sm_count kTileM kTileN).)
  const double one = sms_beside(gpu, 1), two = sms_beside(gpu, 2);
  const auto time = [&](const GemmShape& g) -> KernelTime {
    const auto seconds = [&](double flops) { return std::max(flops * seconds_per_flop, traffic) + gpu.kernel_overhead_s; };
    if (gpu.sm_count <= 0) {
      const double t = seconds(2 * g.m * g.n * g.k * g.instances);
      return {t, t, t};
    }
    const double n = tiles(g), wave_flops = gpu.sm_count * kTileM * kTileN * 2 * g.k;
    KernelTime k;
    k.whole = k.beside = k.beside_two = seconds(std::ceil(n / gpu.sm_count) * wave_flops);
    if (shares >= Shares::kBesideOne) k.beside = seconds(std::ceil(n / one) * wave_flops);
    if (shares >= Shares::kBesideTwo) k.beside_two = seconds(std::ceil(n / two) * wave_flops);
    return k;
  };
  return {time(fwd), time({fwd.m, fwd.k, fwd.n, fwd.instances}), time({fwd.k, fwd.n, fwd.m, fwd.instances})};
}

KernelTime attention_time(double flops, double bytes, double keys, const spec::GpuSpec& gpu, Shares shares) {
  const double efficiency = gpu.attention_efficiency * keys / (keys + kAttentionHalfKeys);
  const double math = flops / (gpu.peak_bf16_flops * efficiency * clock_factor(gpu));
  const double traffic = bytes / (gpu.hbm_bandwidth_Bps * gpu.memory_efficiency);
  // Beside collectives the math runs on the SMs left, at their share of the rate.
  const auto beside = [&](int collectives) {
    const double sm_fraction = gpu.sm_count > 0 ? sms_beside(gpu, collectives) / gpu.sm_count : 1;
    return std::max(math / sm_fraction, traffic) + gpu.kernel_overhead_s;
  };
  const double whole = std::max(math, traffic) + gpu.kernel_overhead_s;
  return {whole, shares >= Shares::kBesideOne ? beside(1) : whole, shares >= Shares::kBesideTwo ? beside(2) : whole};
}

}  // namespace stepcast::cost
