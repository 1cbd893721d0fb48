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

// Waves of output tiles the GEMM runs in; the tile may lie either way round, and both
// orientations cover kTileM x kTileN outputs per tile, so the better one has fewer tiles.
double waves(const GemmShape& g, int sm_count) {
  const double tiles = std::min(std::ceil(g.m / kTileM) * std::ceil(g.n / kTileN),
                                std::ceil(g.m / kTileN) * std::ceil(g.n / kTileM));
  return std::ceil(tiles * g.instances / sm_count);
}

}  // namespace

double clock_factor(const spec::GpuSpec& gpu) {
  const double limit = gpu.effective_power_limit_w();
  if (gpu.tdp_w <= 0 || limit >= gpu.tdp_w) return 1;
  return std::cbrt(limit / gpu.tdp_w);
}

double memory_time_s(double bytes, const spec::GpuSpec& gpu) {
  return bytes / (gpu.hbm_bandwidth_Bps * gpu.memory_efficiency) + gpu.kernel_overhead_s;
}

LinearGemmTimes linear_gemm_times(const GemmShape& fwd, double bytes, bool fp8, const spec::GpuSpec& gpu) {
  const bool use_fp8 = fp8 && gpu.peak_fp8_flops > 0;
  const double peak = use_fp8 ? gpu.peak_fp8_flops : gpu.peak_bf16_flops;
  const double efficiency = use_fp8 && gpu.fp8_matmul_efficiency > 0 ? gpu.fp8_matmul_efficiency
                                                                      : gpu.matmul_efficiency;
  const double seconds_per_flop = 1 / (peak * efficiency * clock_factor(gpu));
  // The three GEMMs move the same bytes (each reads two of X, W, Y or their gradients, writes one).
  const double traffic = bytes / (gpu.hbm_bandwidth_Bps * gpu.memory_efficiency);
  // Every wave lasts as long as a full one: sm_count tiles of kTileM x kTileN outputs, each a
  // k-long dot product. (The same as the GEMM's FLOPs at the rate scaled by tile utilisation,
  // m n / (waves sm_count kTileM kTileN), with one division fewer.)
  const auto seconds = [&](const GemmShape& g) {
    const double flops = gpu.sm_count > 0 ? waves(g, gpu.sm_count) * gpu.sm_count * kTileM * kTileN * 2 * g.k
                                          : 2 * g.m * g.n * g.k * g.instances;
    return std::max(flops * seconds_per_flop, traffic) + gpu.kernel_overhead_s;
  };
  return {seconds(fwd), seconds({fwd.m, fwd.k, fwd.n, fwd.instances}), seconds({fwd.k, fwd.n, fwd.m, fwd.instances})};
}

double attention_time_s(double flops, double bytes, double keys, const spec::GpuSpec& gpu) {
  const double efficiency = gpu.attention_efficiency * keys / (keys + kAttentionHalfKeys);
  const double math = flops / (gpu.peak_bf16_flops * efficiency * clock_factor(gpu));
  const double traffic = bytes / (gpu.hbm_bandwidth_Bps * gpu.memory_efficiency);
  return std::max(math, traffic) + gpu.kernel_overhead_s;
}

}  // namespace stepcast::cost
