// GEMMs whose rows cannot be loaded in vectors: a 16-bit GEMM with an odd leading dimension runs
// at a third of its rate (Netflix's measured language-model head over an unpadded vocabulary), or
// at the rate measured for such kernels where the GPU file gives one (the H100's).
#include <gtest/gtest.h>

#include "cost/compute.h"
#include "spec/presets.h"

namespace stepcast::cost {
namespace {

LinearGemmTimes times(const GemmShape& g, const char* gpu, bool fp8 = false) {
  const double bytes = 2 * (g.m * g.k + g.k * g.n + g.m * g.n);
  const spec::GpuSpec preset = spec::gpu_preset(gpu);
  return linear_gemm_times(g, bytes, fp8, preset, Beside{Shares::kBesideTwo, preset.collective_sms});
}

// The even neighbour one column wider is priced as the odd shape would be if it loaded in
// vectors, to within its one extra column in 50,258.
TEST(GemmAlignment, AnUnpaddedVocabularyHeadTakesThreeTimesAsLongInEachOfItsGemms) {
  const LinearGemmTimes odd = times({8192, 50257, 4096}, "a100-80g"), even = times({8192, 50258, 4096}, "a100-80g");
  EXPECT_NEAR(odd.fwd.whole / even.fwd.whole, 3, 1e-4);
  EXPECT_NEAR(odd.input_grad.whole / even.input_grad.whole, 3, 1e-4);
  EXPECT_NEAR(odd.weight_grad.whole / even.weight_grad.whole, 3, 1e-4);
  EXPECT_NEAR(odd.fwd.beside_two / even.fwd.beside_two, 3, 1e-4);
}

TEST(GemmAlignment, OnTheH100EachGemmOfAnUnpaddedHeadRunsAtTheMeasuredRateOfItsFallbackKernels) {
  // GPT-2's head in data/measurements/h100-steps/gpt-1.3b-eager: 8,192 x 50,257 x 2,048, its three
  // GEMMs 15.69, 11.94 and 11.63 ms, 39.26 ms together; priced at 0.130 of the peak each.
  const GemmShape head{8192, 50257, 2048};
  const LinearGemmTimes odd = times(head, "h100-sxm"), even = times({8192, 50258, 2048}, "h100-sxm");
  const double measured_s = 39.26e-3;
  const double priced_s = odd.fwd.whole + odd.input_grad.whole + odd.weight_grad.whole;
  EXPECT_NEAR(priced_s / measured_s, 1, 0.01);
  // Beside a collective the fallback kernel slows as the aligned one would.
  EXPECT_NEAR(odd.fwd.beside_two / odd.fwd.whole, even.fwd.beside_two / even.fwd.whole, 1e-9);
}

TEST(GemmAlignment, AnOddInputWidthSlowsTheLayerAsAnOddOutputWidthDoes) {
  EXPECT_NEAR(times({4096, 4096, 1023}, "a100-80g").fwd.whole / times({4096, 4096, 1024}, "a100-80g").fwd.whole, 3,
              0.01);
  EXPECT_NEAR(times({4096, 1023, 4096}, "a100-80g").fwd.whole / times({4096, 1024, 4096}, "a100-80g").fwd.whole, 3,
              0.01);
}

TEST(GemmAlignment, AnOddNumberOfTokensIsNoLeadingDimensionAndIsNotSlowed) {
  EXPECT_LE(times({4095, 4096, 4096}, "h100-sxm").fwd.whole, times({4096, 4096, 4096}, "h100-sxm").fwd.whole);
}

TEST(GemmAlignment, EvenWidthsThatAreNotMultiplesOfEightKeepTheirRate) {
  // GPT-2's head split over 8 TP ranks: 6,282 columns, a multiple of 2 but not of 4.
  EXPECT_LE(times({8192, 6282, 4096}, "a100-80g").fwd.whole, times({8192, 6288, 4096}, "a100-80g").fwd.whole);
}

TEST(GemmAlignment, Fp8GemmsKeepTheirOwnPricing) {
  EXPECT_LE(times({8192, 50257, 4096}, "h100-sxm", true).fwd.whole,
            times({8192, 50258, 4096}, "h100-sxm", true).fwd.whole);
}

}  // namespace
}  // namespace stepcast::cost
