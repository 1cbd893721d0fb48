#include "core/units.h"

#include <gtest/gtest.h>

#include "core/error.h"

namespace stepcast::core {
namespace {

TEST(ParseQuantity, ReadsDecimalAndBinaryPrefixes) {
  EXPECT_DOUBLE_EQ(parse_quantity("900 GB/s", Dimension::kBandwidth), 900e9);
  EXPECT_DOUBLE_EQ(parse_quantity("400 Gbit/s", Dimension::kBandwidth), 400e9 / 8);
  EXPECT_DOUBLE_EQ(parse_quantity("80 GiB", Dimension::kBytes), 80.0 * (1ull << 30));
  EXPECT_DOUBLE_EQ(parse_quantity("1.5 us", Dimension::kTime), 1.5e-6);
  EXPECT_DOUBLE_EQ(parse_quantity("989 TFLOP/s", Dimension::kFlopRate), 989e12);
  EXPECT_DOUBLE_EQ(parse_quantity(" 700 W ", Dimension::kPower), 700);
}

TEST(ParseQuantity, RejectsBareNumberAndListsUnits) {
  try {
    parse_quantity("900", Dimension::kBandwidth);
    FAIL() << "a bare number was accepted";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "expected a bandwidth such as \"900 GB/s\" or \"400 Gbit/s\", got \"900\"");
    EXPECT_EQ(e.hint().rfind("accepted units: B/s, KB/s", 0), 0u) << e.hint();
  }
}

TEST(ParseQuantity, RejectsANumberThatOverflowsInItsBaseUnit) {
  // 1e300 fits a double, but not once in bytes: it was an infinite HBM that "fits" everything.
  try {
    parse_quantity("1e300 TiB", Dimension::kBytes);
    FAIL() << "an infinite size was accepted";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "\"1e300 TiB\" is beyond what stepcast can hold");
    EXPECT_EQ(e.hint(), "a double holds up to about 1.8e308 B");
  }
}

TEST(ParseQuantity, RejectsUnitOfAnotherDimension) {
  EXPECT_THROW(parse_quantity("80 GiB", Dimension::kBandwidth), Error);
  EXPECT_THROW(parse_quantity("fast", Dimension::kBandwidth), Error);
  EXPECT_THROW(parse_quantity("-3 GB", Dimension::kBytes), Error);
}

TEST(FormatQuantity, RoundTripsThroughParse) {
  const struct {
    double value;
    Dimension dim;
  } cases[] = {{900e9, Dimension::kBandwidth}, {80.0 * (1ull << 30), Dimension::kBytes},
               {1.5e-6, Dimension::kTime},     {989e12, Dimension::kFlopRate},
               {141e9, Dimension::kBytes},     {700, Dimension::kPower}};
  for (const auto& c : cases) {
    const std::string text = format_quantity(c.value, c.dim);
    EXPECT_NEAR(parse_quantity(text, c.dim), c.value, 1e-9 * c.value) << text;
  }
  EXPECT_EQ(format_quantity(80.0 * (1ull << 30), Dimension::kBytes), "80 GiB");
  EXPECT_EQ(format_quantity(900e9, Dimension::kBandwidth), "900 GB/s");
}

}  // namespace
}  // namespace stepcast::core
