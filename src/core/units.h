// Quantities with units, as users write them in YAML and on the command line: "900 GB/s",
// "400 Gbit/s", "80 GiB", "1.5 us", "989 TFLOP/s", "700 W". Parsed once at the boundary into SI
// doubles; inside stepcast a raw number carries its unit in its name (`latency_s`, `hbm_bytes`).
//
//   double bw = core::parse_quantity("400 Gbit/s", core::Dimension::kBandwidth);  // 5e10 bytes/s
//
// Decimal prefixes are SI (GB = 1e9 bytes); binary sizes use KiB, MiB, GiB, TiB.
#pragma once

#include <string>
#include <string_view>

namespace stepcast::core {

enum class Dimension {
  kBytes,      // bytes: B, KB, MB, GB, TB, KiB, MiB, GiB, TiB
  kBandwidth,  // bytes per second: B/s .. TB/s, and bit/s, Kbit/s .. Tbit/s (also Gb/s, Gbps)
  kTime,       // seconds: ns, us, ms, s
  kFlopRate,   // FLOP per second: FLOP/s, GFLOP/s, TFLOP/s, PFLOP/s
  kPower,      // watts: W, kW
};

/// The value of `text` in SI base units of `dim` (bytes, bytes/s, s, FLOP/s, W).
/// Throws Error(kInvalidInput) when the text is not a non-negative number followed by a unit of
/// `dim` (a bare number included); the hint lists the accepted units.
double parse_quantity(std::string_view text, Dimension dim);

/// A readable rendering that parse_quantity reads back to the same value within 1e-9 relative,
/// choosing the largest unit that keeps the number >= 1 (e.g. "900 GB/s", "80 GiB", "1.5 us").
std::string format_quantity(double value, Dimension dim);

/// The units accepted for `dim`, comma-separated, for hints and documentation.
std::string accepted_units(Dimension dim);

}  // namespace stepcast::core
