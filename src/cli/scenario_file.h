// Scenario files: the options of `estimate` and `simulate` kept in YAML, each key an option's
// name without its dashes, so that a run can be saved, shared and run again:
//
//   model: llama3.1-405b        # --model llama3.1-405b
//   tp: 8                       # --tp 8
//   sp: true                    # --sp (a flag: true or false)
//
//   $ stepcast estimate --config llama405b.yaml --gpus 8192
//
// The command line wins over the file, and an earlier file over a later one. `--save-config FILE`
// writes the options a run was given, from the command line and its files, as such a file.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <string>
#include <vector>

#include "core/error.h"
#include "spec/yaml_reader.h"

namespace stepcast::cli {

/// Parses one option's tokens alone for the subcommand; throws CLI::ParseError where the option
/// rejects them.
using OptionCheck = std::function<void(const std::vector<std::string>& tokens)>;

/// `args` (the command line without the program name) with each `--config FILE` of subcommand
/// `sub` replaced by the options FILE sets, put first and left out where the command line sets
/// them itself. Throws Error(kInvalidInput) at the file's line for malformed YAML, an unknown
/// option (with a did-you-mean), a flag set to other than true or false and a value `check`
/// rejects; Error(kIo) for a file that cannot be read.
std::vector<std::string> expand_scenario_files(const std::vector<std::string>& args,
                                               const CLI::App& sub, const OptionCheck& check,
                                               std::vector<spec::YamlSetting>* taken = nullptr);

/// `e` placed at the setting it is about, where that setting came from a scenario file (one of
/// `taken`, as expand_scenario_files filled it): an option's value that only the run itself
/// rejects (a malformed --host-dispatch, a --placement without an axis) names its file and line
/// as the errors of expand_scenario_files do. Otherwise `e` as it is.
Error located_in_scenario_file(const Error& e, const std::vector<spec::YamlSetting>& taken);

/// Writes the options `sub` was given to the file its --save-config names, if it names one;
/// throws Error(kIo) where the file cannot be written.
void save_scenario_file(const CLI::App& sub);

}  // namespace stepcast::cli
