#include "core/units.h"

#include <array>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "core/error.h"

namespace stepcast::core {
namespace {

struct Unit {
  const char* symbol;
  double scale;  // SI base units per one of this unit
};

const std::vector<Unit>& units_of(Dimension dim) {
  static const std::vector<Unit> kBytes = {
      {"B", 1},           {"KB", 1e3},         {"MB", 1e6},         {"GB", 1e9},
      {"TB", 1e12},       {"KiB", 1024.0},     {"MiB", 1048576.0},  {"GiB", 1073741824.0},
      {"TiB", 1099511627776.0}};
  static const std::vector<Unit> kBandwidth = {
      {"B/s", 1},        {"KB/s", 1e3},      {"MB/s", 1e6},      {"GB/s", 1e9},
      {"TB/s", 1e12},    {"bit/s", 0.125},   {"Kbit/s", 125.0},  {"Mbit/s", 1.25e5},
      {"Gbit/s", 1.25e8}, {"Tbit/s", 1.25e11}, {"Gb/s", 1.25e8}, {"Gbps", 1.25e8},
      {"Tb/s", 1.25e11}, {"Mb/s", 1.25e5}};
  static const std::vector<Unit> kTime = {{"ns", 1e-9}, {"us", 1e-6}, {"ms", 1e-3}, {"s", 1}};
  static const std::vector<Unit> kFlopRate = {
      {"FLOP/s", 1}, {"GFLOP/s", 1e9}, {"TFLOP/s", 1e12}, {"PFLOP/s", 1e15}};
  static const std::vector<Unit> kPower = {{"W", 1}, {"kW", 1e3}};
  switch (dim) {
    case Dimension::kBytes: return kBytes;
    case Dimension::kBandwidth: return kBandwidth;
    case Dimension::kTime: return kTime;
    case Dimension::kFlopRate: return kFlopRate;
    case Dimension::kPower: return kPower;
  }
  return kBytes;
}

const char* dimension_name(Dimension dim) {
  switch (dim) {
    case Dimension::kBytes: return "a size such as \"80 GiB\"";
    case Dimension::kBandwidth: return "a bandwidth such as \"900 GB/s\" or \"400 Gbit/s\"";
    case Dimension::kTime: return "a time such as \"1.5 us\"";
    case Dimension::kFlopRate: return "a FLOP rate such as \"989 TFLOP/s\"";
    case Dimension::kPower: return "a power such as \"700 W\"";
  }
  return "a quantity";
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

}  // namespace

std::string accepted_units(Dimension dim) {
  std::string out;
  for (const Unit& u : units_of(dim)) out += (out.empty() ? "" : ", ") + std::string(u.symbol);
  return out;
}

double parse_quantity(std::string_view text, Dimension dim) {
  const std::string_view s = trim(text);
  const auto fail = [&]() -> Error {
    return Error(ErrorKind::kInvalidInput,
                 std::string("expected ") + dimension_name(dim) + ", got \"" + std::string(text) +
                     "\"",
                 "accepted units: " + accepted_units(dim));
  };
  double number = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), number);
  if (ec != std::errc() || !std::isfinite(number) || number < 0) throw fail();
  const std::string_view unit = trim(std::string_view(end, s.data() + s.size() - end));
  if (unit.empty()) throw fail();
  for (const Unit& u : units_of(dim)) {
    if (unit != u.symbol) continue;
    const double value = number * u.scale;
    if (!std::isfinite(value)) {  // "1e300 TiB": the number fits a double, in bytes not
      throw Error(ErrorKind::kInvalidInput, "\"" + std::string(text) + "\" is beyond what stepcast can hold",
                  "a double holds up to about 1.8e308 " + std::string(units_of(dim)[0].symbol));
    }
    return value;
  }
  throw fail();
}

std::string format_quantity(double value, Dimension dim) {
  // Prefer the decimal units of each dimension (the first listed per magnitude), except that byte
  // sizes which are whole multiples of a binary unit print in it ("80 GiB", not "85.9 GB").
  const std::vector<Unit>& units = units_of(dim);
  const Unit* best = &units[0];
  if (dim == Dimension::kBytes) {
    for (const Unit& u : units) {
      const double n = value / u.scale;
      if (n >= 1 && std::abs(n - std::round(n)) < 1e-9 * n && u.scale > best->scale) best = &u;
    }
  } else {
    for (const Unit& u : units) {
      const bool bit_unit = std::string_view(u.symbol).find('b') != std::string_view::npos &&
                            std::string_view(u.symbol).find("B") == std::string_view::npos;
      if (bit_unit) continue;
      if (value / u.scale >= 1 && u.scale > best->scale) best = &u;
    }
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.10g %s", value / best->scale, best->symbol);
  return buf;
}

}  // namespace stepcast::core
