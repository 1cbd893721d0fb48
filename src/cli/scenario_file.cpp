#include "cli/scenario_file.h"

#include <fmt/format.h>

#include <algorithm>
#include <ranges>
#include <string_view>

#include "cli/result_output.h"
#include "core/csv.h"
#include "core/error.h"
#include "core/spellcheck.h"
#include "core/utf8.h"
#include "spec/yaml_reader.h"
#include "spec/yaml_writer.h"

namespace stepcast::cli {
namespace {

constexpr std::string_view kConfig = "--config";
constexpr std::string_view kConfigEquals = "--config=";

// The option a command-line token names: "tp" for "--tp" and "--tp=8", "" for a value.
std::string option_of(const std::string& token) {
  if (token.rfind("--", 0) != 0) return {};
  const size_t equals = token.find('=');
  return token.substr(2, equals == std::string::npos ? std::string::npos : equals - 2);
}

// An option of the scenario, not of how to print it (cli/result_output.h) nor --help or --config.
bool settable(const CLI::Option& opt) {
  const std::string& name = opt.get_single_name();
  return !opt.get_positional() && opt.get_group() != kOutputGroup && name != "help" &&
         name != "config";
}

std::vector<std::string> settable_names(const CLI::App& sub) {
  std::vector<std::string> names;
  for (const CLI::Option* opt : sub.get_options()) {
    if (settable(*opt)) names.push_back(opt->get_single_name());
  }
  return names;
}

// An error at the setting's key (an unknown option) or its value.
Error error_at(const SourceLocation& where, const spec::YamlSetting& s, std::string message,
               std::string hint = {}) {
  Error e(ErrorKind::kInvalidInput, std::move(message), std::move(hint));
  e.at(where).in_field(s.key);
  if (!s.line.empty()) e.with_excerpt(s.line);
  return e;
}

// The token one setting stands for: "--key=value", or for a flag "--key" when true and nothing
// when false. "--key=value" keeps a value such as "-1" from reading as an option.
std::vector<std::string> tokens_of(const spec::YamlSetting& s, const CLI::App& sub,
                                   const OptionCheck& check) {
  const CLI::Option* opt = sub.get_option_no_throw("--" + s.key);
  if (opt != nullptr && opt->get_group() == kOutputGroup) {
    throw error_at(s.key_at, s, "\"" + s.key + "\" says how to print the result, not what to run",
                   "give --" + s.key + " on the command line");
  }
  if (opt == nullptr || !settable(*opt)) {
    throw error_at(s.key_at, s, "unknown option \"" + s.key + "\" of " + sub.get_name(),
                   core::suggestion(s.key, settable_names(sub)));
  }
  std::vector<std::string> tokens;
  if (opt->get_expected_max() == 0) {  // a flag
    if (s.value != "true" && s.value != "false") {
      throw error_at(s.value_at, s, "expected true or false, got \"" + s.value + "\"",
                     "\"" + s.key + "\" is a flag");
    }
    if (s.value == "true") tokens.push_back("--" + s.key);
  } else {
    tokens.push_back("--" + s.key + "=" + s.value);
  }
  try {
    check(tokens);
  } catch (const CLI::ParseError& e) {
    // CLI11 names the option first; the error names it already.
    const std::string message = e.what(), named = "--" + s.key + ": ";
    throw error_at(s.value_at, s,
                   message.rfind(named, 0) == 0 ? message.substr(named.size()) : message);
  }
  return tokens;
}

}  // namespace

std::vector<std::string> expand_scenario_files(const std::vector<std::string>& args,
                                               const CLI::App& sub, const OptionCheck& check,
                                               std::vector<spec::YamlSetting>* taken) {
  std::vector<std::string> files, rest, given;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == kConfig && i + 1 < args.size()) {
      files.push_back(args[++i]);
    } else if (args[i].rfind(kConfigEquals, 0) == 0) {
      files.push_back(args[i].substr(kConfigEquals.size()));
    } else {
      rest.push_back(args[i]);
      given.push_back(option_of(args[i]));
    }
  }
  // A later file overrides an earlier one, as the command line overrides them all: each option is
  // taken from the last place that sets it.
  std::vector<std::string> from_files;
  for (const std::string& file : files | std::views::reverse) {
    for (const spec::YamlSetting& s : spec::read_yaml_settings(file, core::read_file(file))) {
      const std::vector<std::string> tokens = tokens_of(s, sub, check);
      if (std::find(given.begin(), given.end(), s.key) != given.end()) continue;
      given.push_back(s.key);
      if (taken != nullptr) taken->push_back(s);
      from_files.insert(from_files.end(), tokens.begin(), tokens.end());
    }
  }
  // After the subcommand's name, before the command line's own options.
  auto at = std::find(rest.begin(), rest.end(), sub.get_name());
  if (at != rest.end()) ++at;
  rest.insert(at, from_files.begin(), from_files.end());
  return rest;
}

Error located_in_scenario_file(const Error& e, const std::vector<spec::YamlSetting>& taken) {
  if (!e.where().file.empty()) return e;
  if (e.field().rfind("--", 0) == 0) {
    for (const spec::YamlSetting& s : taken) {
      if (e.field() == "--" + s.key) return error_at(s.value_at, s, e.message(), e.hint());
    }
    return e;
  }
  // An error about how several options combine: where the files set those they set.
  std::string where;
  for (const spec::YamlSetting& s : taken) {
    if (std::find(e.settings().begin(), e.settings().end(), s.key) == e.settings().end()) continue;
    where += fmt::format("\n    {}:{}: {}: {}", s.key_at.file, s.key_at.line, s.key, s.value);
  }
  if (where.empty()) return e;
  Error located = e;
  return located.with_hint((e.hint().empty() ? "" : e.hint() + "\n  ") + "set in a scenario file:" + where);
}

void save_scenario_file(const CLI::App& sub) {
  const CLI::Option* save = sub.get_option_no_throw("--save-config");
  if (save == nullptr || save->count() == 0) return;
  std::vector<std::pair<std::string, std::string>> settings;
  for (const CLI::Option* opt : sub.get_options()) {
    if (!settable(*opt) || opt->count() == 0) continue;
    const std::string& value = opt->results().back();
    if (opt->get_expected_max() > 0) {
      settings.emplace_back(opt->get_single_name(), value);
    } else if (value == (opt->get_fnames().empty() ? "true" : "false")) {
      // A flag holds the value it stores: "true" for --sp, "false" for a negating flag such as
      // --no-dp-overlap; `--sp=false` stores what leaving it out would, and is left out.
      settings.emplace_back(opt->get_single_name(), "true");
    }
  }
  const std::string path = save->results().back();
  // The path is escaped in the header: a line break in it would end the comment, and the rest of
  // the path would be read back as a setting.
  core::write_file(path,
                   spec::settings_yaml(settings, fmt::format("# stepcast {}: a scenario file, read back with --config {}\n",
                                                             sub.get_name(), core::escape_controls(path, false))),
                   "the scenario file");
}

}  // namespace stepcast::cli
