#include "cost/compute.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

namespace stepcast::cost {
namespace {

// Output tile of the large-GEMM kernels cuBLAS picks on Ampere and Hopper (CUTLASS default
// 128x256 threadblock tile for BF16 tensor-core GEMMs); one tile per SM at a time.
constexpr double kTileM = 128, kTileN = 256;
// A GEMM of too few output tiles to fill the SMs has its k dimension split (cuBLAS's split-K
// kernels, cublasLt's CUBLASLT_ALGO_CONFIG_SPLITK_NUM): each piece of k runs as its own tile and
// the partial sums are reduced after. Splits in powers of two, each piece at least two of the
// tile's 64-deep main-loop stages long. Scored on OpenXLA's measured H100 GEMMs, which the tile
// model was not built from, splitting takes its mean error from 74.9% to 24.5% on the 125 single
// GEMMs and from 42.8% to 21.0% on the 250 batched ones (tests/cost/gemm_grid_test.cpp); any
// largest split from 8 to 64 and shortest piece from 64 to 256 gives within a point of that.
constexpr double kKSplits[] = {2, 4, 8, 16};
constexpr double kMinSplitK = 128;
// A 16-bit GEMM with an odd leading dimension (k of X and W, n of Y and dY) cannot load its rows
// in the 4-, 8- or 16-byte vectors that tensor-core kernels copy with (cp.async), so cuBLAS falls
// back to a kernel of element-wise loads. Netflix measured the language-model head of an unpadded
// vocabulary at three times its padded time ("Scaling LLM Post-Training at Netflix", Netflix
// Technology Blog, Feb 2026: a slower CUTLASS path "tripling that layer's execution time"), the
// factor where the GPU file gives no measured rate for these kernels (misaligned_gemm_efficiency).
constexpr double kMisalignedSlowdown = 3;

// Tiles of kTileM or kTileN outputs one GEMM dimension spans.
struct TileSpan {
  double by_m = 0, by_n = 0;
};
TileSpan tile_span(double x) { return {std::ceil(x / kTileM), std::ceil(x / kTileN)}; }

// Output tiles of a GEMM of `rows` x `cols` outputs; the tile may lie either way round, and both
// orientations cover kTileM x kTileN outputs per tile, so the better one has fewer tiles.
double tiles(TileSpan rows, TileSpan cols, double instances) {
  return std::min(rows.by_m * cols.by_n, rows.by_n * cols.by_m) * instances;
}

// Where x lies among the grid's sizes: cell [i, i + 1] and the weight of i + 1, linear in x,
// clamped to the grid's ends.
struct GridPosition {
  std::size_t i = 0;
  double weight = 0;
};
GridPosition locate(const std::vector<double>& sizes, double x) {
  const std::size_t last = sizes.size() - 1;
  if (x <= sizes[0]) return {0, 0};
  if (x >= sizes[last]) return {last - 1, 1};
  std::size_t i = 0;
  while (x >= sizes[i + 1]) ++i;
  return {i, (x - sizes[i]) / (sizes[i + 1] - sizes[i])};
}

double lerp(double a, double b, double weight) { return a + weight * (b - a); }

KernelTime scaled(const KernelTime& t, double factor) {
  return {t.whole * factor, t.beside * factor, t.beside_two * factor};
}

LinearGemmTimes scaled(const LinearGemmTimes& t, double factor) {
  return {scaled(t.fwd, factor), scaled(t.input_grad, factor), scaled(t.weight_grad, factor)};
}

// One GEMM dimension on the GPU's measured grid: its size, at least the grid's smallest (a kernel
// that small is bound by its fixed costs, not its FLOPs, and costs what the smallest does), and
// where it lies (above the grid, at the largest size's efficiency).
struct GridDim {
  double size = 0;
  GridPosition at;
};
GridDim grid_dim(const spec::GpuSpec::GemmGrid& grid, double x) { return {std::max(x, grid.sizes[0]), locate(grid.sizes, x)}; }

// Seconds of a BF16 GEMM of m x n outputs reduced over k on every SM, from the GPU's measured grid
// (GpuSpec::GemmGrid) at `peak_flops` (the BF16 peak at the sustained clock): the efficiency
// interpolated trilinearly at the shape.
// Inlined: as a call, three per linear layer, it took 3% more instructions per 405B estimate (callgrind).
__attribute__((always_inline)) inline double measured_gemm_s(const spec::GpuSpec::GemmGrid& grid, const GridDim& m,
                                                             const GridDim& n, const GridDim& k, double peak_flops) {
  // The cell's corner, and the next n and m rows as strides from it: indexing each of its four
  // k rows from (m, n, k) took 60 instructions of the call's 400 (callgrind, 405B).
  const std::size_t s = grid.sizes.size();
  const double* corner = &grid.efficiency[(m.at.i * s + n.at.i) * s + k.at.i];
  const auto along_k = [&](const double* row) { return lerp(row[0], row[1], k.at.weight); };
  const auto along_n = [&](const double* row) { return lerp(along_k(row), along_k(row + s), n.at.weight); };
  const double efficiency = lerp(along_n(corner), along_n(corner + s * s), m.at.weight);
  return 2 * m.size * n.size * k.size / (peak_flops * efficiency);
}

// SMs a compute kernel has beside `collectives` collectives (at least one).
double sms_beside(const spec::GpuSpec& gpu, Beside beside, int collectives) {
  return std::max(1, gpu.sm_count - collectives * beside.collective_sms);
}

// Elements of a GEMM's input, weight and output, over its instances.
double matrix_elements(const GemmShape& g) {
  return (g.m * g.k + g.k * g.n + g.m * g.n) * g.instances;
}

// HBM time of each of a linear layer's three GEMMs, which move the same bytes (each reads two of
// X, W, Y or their gradients and writes one): no GEMM runs faster than its traffic.
double gemm_traffic_s(double bytes, const spec::GpuSpec& gpu) {
  return bytes / (gpu.hbm_bandwidth_Bps * gpu.memory_efficiency);
}

// The three GEMMs of a linear layer from the GPU's measured grid (GpuSpec::GemmGrid). The measured
// time already holds the kernel's fixed costs; beside collectives its tiles take the waves of the
// SMs left, each as long as one of its own waves. A batch's instances run as one GEMM that many
// times taller (one kernel, the same tiles): its rows, m or for the weight gradient k, times the
// instances. The three GEMMs are the forward's dimensions in other orders.
// Inlined into linear_gemm_times: as a call, 13 instructions more per 405B GEMM (callgrind).
__attribute__((always_inline)) inline LinearGemmTimes measured_gemm_times(const GemmShape& fwd, double bytes,
                                                                          const spec::GpuSpec& gpu, Beside beside) {
  const Shares shares = beside.shares;
  const double traffic = gemm_traffic_s(bytes, gpu);
  const double one = sms_beside(gpu, beside, 1), two = sms_beside(gpu, beside, 2);
  const auto time = [&](double tiles, double measured_s) -> KernelTime {
    const double whole = std::max(measured_s, traffic);
    if (gpu.sm_count <= 0) return {whole, whole, whole};
    const double per_wave = whole / std::ceil(tiles / gpu.sm_count);
    return {whole, shares >= Shares::kBesideOne ? per_wave * std::ceil(tiles / one) : whole,
            shares >= Shares::kBesideTwo ? per_wave * std::ceil(tiles / two) : whole};
  };
  const TileSpan m_tiles = tile_span(fwd.m), n_tiles = tile_span(fwd.n), k_tiles = tile_span(fwd.k);
  const spec::GpuSpec::GemmGrid& grid = gpu.gemm_grid;
  const double peak_flops = gpu.peak_bf16_flops * clock_factor(gpu);
  const GridDim rows = grid_dim(grid, fwd.m * fwd.instances), n = grid_dim(grid, fwd.n),
                k = grid_dim(grid, fwd.k);
  // One instance (most linears) makes the rows the dimensions themselves: located once.
  const bool single = fwd.instances == 1;
  const GridDim k_rows = single ? k : grid_dim(grid, fwd.k * fwd.instances);
  const GridDim m = single ? rows : grid_dim(grid, fwd.m);
  return {
      time(tiles(m_tiles, n_tiles, fwd.instances), measured_gemm_s(grid, rows, n, k, peak_flops)),
      time(tiles(m_tiles, k_tiles, fwd.instances), measured_gemm_s(grid, rows, k, n, peak_flops)),
      time(tiles(k_tiles, n_tiles, fwd.instances),
           measured_gemm_s(grid, k_rows, n, m, peak_flops))};
}

// The same from the tile model, for GPUs without a measured grid (and FP8 GEMMs): the GEMM's
// FLOPs at the best measured rate, in waves of kTileM x kTileN tiles, k split where the tiles are
// too few to fill the SMs. Not inlined: inside aligned_gemm_times its stack frame and saved
// registers cost the measured grid's path 25 instructions per call (callgrind, 405B).
[[gnu::noinline]] LinearGemmTimes tiled_gemm_times(const GemmShape& fwd, double bytes, bool use_fp8,
                                 const spec::GpuSpec& gpu, Beside beside) {
  const double peak = use_fp8 ? gpu.peak_fp8_flops : gpu.peak_bf16_flops;
  const double efficiency = use_fp8 && gpu.fp8_matmul_efficiency > 0 ? gpu.fp8_matmul_efficiency
                                                                      : gpu.matmul_efficiency;
  const double seconds_per_flop = 1 / (peak * efficiency * clock_factor(gpu));
  const double traffic = gemm_traffic_s(bytes, gpu);
  // Every wave lasts as long as a full one: one tile of kTileM x kTileN outputs per SM, each a
  // k-long dot product, at the rate of one SM, peak / sm_count. (With every SM, the same as the
  // GEMM's FLOPs at the rate scaled by tile utilisation, m n / (waves sm_count kTileM kTileN).)
  const Shares shares = beside.shares;
  const double one = sms_beside(gpu, beside, 1), two = sms_beside(gpu, beside, 2);
  const auto time = [&](const GemmShape& g, double tiles) -> KernelTime {
    const auto seconds = [&](double flops) { return std::max(flops * seconds_per_flop, traffic) + gpu.kernel_overhead_s; };
    if (gpu.sm_count <= 0) {
      const double t = seconds(2 * g.m * g.n * g.k * g.instances);
      return {t, t, t};
    }
    // Split k ways, each tile's dot product becomes `split` shorter ones on as many SMs, and the
    // fp32 partial outputs are written and read back once more each to be summed.
    const auto split_seconds = [&](double split, double sms) {
      const double wave_flops = gpu.sm_count * kTileM * kTileN * 2 * g.k / split;
      const double partials = split > 1 ? 8 * split * g.m * g.n * g.instances : 0;
      return seconds(std::ceil(tiles * split / sms) * wave_flops) +
             partials / (gpu.hbm_bandwidth_Bps * gpu.memory_efficiency);
    };
    // cuBLAS picks the split for the whole GPU; beside collectives it runs on the SMs left.
    double split = 1, whole = split_seconds(1, gpu.sm_count);
    for (double candidate : kKSplits) {
      if (g.k / candidate < kMinSplitK) break;
      const double t = split_seconds(candidate, gpu.sm_count);
      if (t < whole) whole = t, split = candidate;
    }
    return {whole, shares >= Shares::kBesideOne ? split_seconds(split, one) : whole,
            shares >= Shares::kBesideTwo ? split_seconds(split, two) : whole};
  };
  const TileSpan m_tiles = tile_span(fwd.m), n_tiles = tile_span(fwd.n), k_tiles = tile_span(fwd.k);
  const GemmShape input_grad{fwd.m, fwd.k, fwd.n, fwd.instances}, weight_grad{fwd.k, fwd.n, fwd.m, fwd.instances};
  return {time(fwd, tiles(m_tiles, n_tiles, fwd.instances)),
          time(input_grad, tiles(m_tiles, k_tiles, fwd.instances)),
          time(weight_grad, tiles(k_tiles, n_tiles, fwd.instances))};
}

// linear_gemm_times for a GEMM whose leading dimensions the kernels can load in vectors. An empty
// GEMM launches nothing the grid measured; the tile model prices it at its traffic.
LinearGemmTimes aligned_gemm_times(const GemmShape& fwd, double bytes, bool use_fp8,
                                   const spec::GpuSpec& gpu, Beside beside) {
  const bool empty = fwd.m <= 0 || fwd.n <= 0 || fwd.k <= 0 || fwd.instances <= 0;
  if (!use_fp8 && !empty && !gpu.gemm_grid.sizes.empty())
    return measured_gemm_times(fwd, bytes, gpu, beside);
  return tiled_gemm_times(fwd, bytes, use_fp8, gpu, beside);
}

// A 16-bit linear layer's GEMMs of odd width (odd_width), from their aligned times.
LinearGemmTimes misaligned(const LinearGemmTimes& times, const GemmShape& fwd, const spec::GpuSpec& gpu) {
  if (gpu.misaligned_gemm_efficiency <= 0) return scaled(times, kMisalignedSlowdown);
  // Each of the three GEMMs at the measured rate of the fallback kernels, none faster than aligned.
  const double seconds = 2 * fwd.m * fwd.n * fwd.k * fwd.instances /
                         (gpu.peak_bf16_flops * gpu.misaligned_gemm_efficiency * clock_factor(gpu));
  const auto at_measured_rate = [&](const KernelTime& t) {
    return t.whole > 0 ? scaled(t, std::max(1.0, seconds / t.whole)) : t;
  };
  return {at_measured_rate(times.fwd), at_measured_rate(times.input_grad), at_measured_rate(times.weight_grad)};
}

}  // namespace

double clock_factor(const spec::GpuSpec& gpu) {
  const double limit = gpu.effective_power_limit_w();
  if (gpu.tdp_w <= 0 || limit >= gpu.tdp_w) return 1;
  return std::cbrt(limit / gpu.tdp_w);
}

double odd_width(const GemmShape& fwd, bool fp8, const spec::GpuSpec& gpu) {
  if (fp8 && gpu.peak_fp8_flops > 0) return 0;
  // Whole and odd. Dimensions are far below 2^53, where doubles hold every integer.
  const auto odd = [](double x) {
    const auto whole = static_cast<long long>(x);
    return static_cast<double>(whole) == x && whole % 2 == 1;
  };
  return odd(fwd.n) ? fwd.n : odd(fwd.k) ? fwd.k : 0;
}

LinearGemmTimes linear_gemm_times(const GemmShape& fwd, double bytes, bool fp8,
                                  const spec::GpuSpec& gpu, Beside beside, double row_chunks,
                                  bool split_input_grad) {
  const bool use_fp8 = fp8 && gpu.peak_fp8_flops > 0;
  LinearGemmTimes times = aligned_gemm_times(fwd, bytes, use_fp8, gpu, beside);
  if (row_chunks > 1 && matrix_elements(fwd) > 0) {
    // Each piece reads its rows of the input and all of the weight, and writes its rows.
    const GemmShape piece{fwd.m / row_chunks, fwd.n, fwd.k, fwd.instances};
    const double piece_bytes = bytes * matrix_elements(piece) / matrix_elements(fwd);
    const LinearGemmTimes pieces = aligned_gemm_times(piece, piece_bytes, use_fp8, gpu, beside);
    times.fwd = scaled(pieces.fwd, row_chunks);
    if (split_input_grad) times.input_grad = scaled(pieces.input_grad, row_chunks);
  }
  // One result, returned from one place, so that it is built in the caller's: a return of
  // another made it a 72-byte copy on every call.
  if (odd_width(fwd, fp8, gpu) > 0) times = misaligned(times, fwd, gpu);
  return times;
}

AttentionCurve attention_curve(const spec::GpuSpec& gpu, spec::AttentionKernel kernel) {
  if (kernel == spec::AttentionKernel::kCudnn)
    return {gpu.cudnn_attention_efficiency, gpu.cudnn_attention_half_keys, gpu.cudnn_attention_head64_rate};
  return {gpu.attention_efficiency, gpu.attention_half_keys, gpu.attention_head64_rate};
}

KernelTime attention_time(double flops, double bytes, double keys, double relative_rate, AttentionCurve curve,
                          const spec::GpuSpec& gpu, Beside beside) {
  const double efficiency = relative_rate * curve.efficiency * keys / (keys + curve.half_keys);
  const double math = flops / (gpu.peak_bf16_flops * efficiency * clock_factor(gpu));
  const double traffic = bytes / (gpu.hbm_bandwidth_Bps * gpu.memory_efficiency);
  // Beside collectives the math runs on the SMs left, at their share of the rate.
  const auto beside_n = [&](int collectives) {
    const double sm_fraction = gpu.sm_count > 0 ? sms_beside(gpu, beside, collectives) / gpu.sm_count : 1;
    return std::max(math / sm_fraction, traffic) + gpu.kernel_overhead_s;
  };
  const double whole = std::max(math, traffic) + gpu.kernel_overhead_s;
  const Shares shares = beside.shares;
  return {whole, shares >= Shares::kBesideOne ? beside_n(1) : whole, shares >= Shares::kBesideTwo ? beside_n(2) : whole};
}

}  // namespace stepcast::cost
