// stepcast: forecast, explain and optimise distributed LLM training. Only this file catches
// stepcast::Error and turns it into a message and an exit code (STYLE.md §3).
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>
#include <map>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/scenario_file.h"
#include "core/error.h"

namespace {

using stepcast::cli::Runner;

// Registers every subcommand on `app`; `runners` receives each one's runner, which owns the
// variables its options parse into.
void add_commands(CLI::App& app, std::map<CLI::App*, Runner>& runners) {
  app.require_subcommand(1);
  for (Runner (*adder)(CLI::App&) :
       {stepcast::cli::add_estimate, stepcast::cli::add_simulate, stepcast::cli::add_validate,
        stepcast::cli::add_presets}) {
    const size_t before = app.get_subcommands({}).size();
    Runner r = adder(app);
    runners[app.get_subcommands({})[before]] = std::move(r);
  }
}

// The command line with the scenario files it names read in (cli/scenario_file.h), for the
// subcommand that takes them.
std::vector<std::string> with_scenario_files(const CLI::App& app, std::vector<std::string> args,
                                             std::vector<stepcast::spec::YamlSetting>& taken) {
  for (const std::string& arg : args) {
    const CLI::App* sub = nullptr;
    for (const CLI::App* candidate : app.get_subcommands({})) {
      if (candidate->get_name() == arg) sub = candidate;
    }
    if (sub == nullptr) continue;
    if (sub->get_option_no_throw("--config") == nullptr) return args;
    const auto check = [&](const std::vector<std::string>& tokens) {
      CLI::App fresh;
      // The runners own the variables the options parse into: kept until the parse is done.
      std::map<CLI::App*, Runner> owners;
      add_commands(fresh, owners);
      std::vector<std::string> reversed(tokens.rbegin(), tokens.rend());
      reversed.push_back(sub->get_name());
      fresh.parse(reversed);
    };
    return stepcast::cli::expand_scenario_files(args, *sub, check, &taken);
  }
  return args;
}

int report_error(const stepcast::Error& e) {
  std::fprintf(stderr, "stepcast: error: %s\n", e.what());
  if (!e.hint().empty()) std::fprintf(stderr, "  hint: %s\n", e.hint().c_str());
  return e.kind() == stepcast::ErrorKind::kInternal ? stepcast::cli::kExitInternal
                                                     : stepcast::cli::kExitInvalidInput;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace stepcast::cli;
  CLI::App app{"stepcast: forecast, explain and optimise distributed LLM training"};
  std::map<CLI::App*, Runner> runners;
  add_commands(app, runners);
  std::vector<std::string> args;
  std::vector<stepcast::spec::YamlSetting> from_files;  // the options scenario files set
  try {
    args = with_scenario_files(app, std::vector<std::string>(argv + 1, argv + argc), from_files);
  } catch (const stepcast::Error& e) {
    return report_error(e);
  }
  try {
    std::vector<std::string> reversed(args.rbegin(), args.rend());
    app.name(argv[0]);
    app.parse(reversed);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::Success& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return kExitUsage;
  }
  try {
    for (CLI::App* sub : app.get_subcommands()) {
      const int code = runners.at(sub)();
      if (code == kExitOk) save_scenario_file(*sub);
      return code;
    }
    return kExitUsage;
  } catch (const stepcast::Error& e) {
    return report_error(located_in_scenario_file(e, from_files));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "stepcast: error: internal error (a bug): %s\n", e.what());
    return kExitInternal;
  }
}
