// The subcommands of `stepcast`, one file each. Each registers its options on the app and returns
// the function that runs it once CLI11 has parsed the command line.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>

namespace stepcast::cli {

/// Exit codes (README, docs/errors.md).
enum ExitCode : int {
  kExitOk = 0,
  kExitInvalidInput = 1,
  kExitUsage = 2,
  kExitInternal = 70,
};

using Runner = std::function<int()>;

/// For an option naming a file or directory to write: an empty name (`--chrome-trace ""`) is a
/// usage error, not a silent "write nothing".
inline const CLI::Validator kPathToWrite(
    [](const std::string& path) { return path.empty() ? std::string("expected a path, got an empty one") : std::string(); },
    "");

Runner add_estimate(CLI::App& app);
Runner add_simulate(CLI::App& app);
Runner add_validate(CLI::App& app);
Runner add_presets(CLI::App& app);

}  // namespace stepcast::cli
