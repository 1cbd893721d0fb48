// stepcast: forecast, explain and optimise distributed LLM training. Only this file catches
// stepcast::Error and turns it into a message and an exit code (STYLE.md §3).
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>
#include <map>

#include "cli/commands.h"
#include "core/error.h"

namespace {

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
  app.require_subcommand(1);
  std::map<CLI::App*, Runner> runners;
  const auto add = [&](Runner (*adder)(CLI::App&)) {
    const size_t before = app.get_subcommands({}).size();
    Runner r = adder(app);
    runners[app.get_subcommands({})[before]] = std::move(r);
  };
  add(add_estimate);
  add(add_simulate);
  add(add_validate);
  add(add_presets);
  try {
    app.parse(argc, argv);
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
    for (CLI::App* sub : app.get_subcommands()) return runners.at(sub)();
    return kExitUsage;
  } catch (const stepcast::Error& e) {
    return report_error(e);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "stepcast: error: internal error (a bug): %s\n", e.what());
    return kExitInternal;
  }
}
