// How estimate and simulate print their result: a table, or --json; with --ops, followed by each
// operator's time (report::operators_text), or with the JSON key "operators".
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "spec/scenario.h"

namespace stepcast::cli {

struct ResultOutput {
  bool json = false;
  bool ops = false;
};

/// The --help group of the options that say how to print a result, not what to run (scenario
/// files leave them out).
inline constexpr const char* kOutputGroup = "Output";

void add_result_options(CLI::App& cmd, ResultOutput& o);

/// Prints json() (--json) or text(), each with the operators of `s` when --ops asked for them;
/// only the form asked for is built.
void print_result(const ResultOutput& o, const spec::Scenario& s,
                  const std::function<nlohmann::json()>& json,
                  const std::function<std::string()>& text);

}  // namespace stepcast::cli
