// stepcast presets [show NAME]: list the built-in models, GPUs and clusters, or print one as YAML
// that can be edited and passed back with --model FILE / --cluster FILE. A Hugging Face
// config.json (or a checkpoint directory holding one) in place of NAME prints the model it
// describes in the same schema.
#include <fmt/format.h>

#include <filesystem>
#include <memory>

#include "cli/commands.h"
#include "core/error.h"
#include "spec/presets.h"
#include "spec/yaml_writer.h"

namespace stepcast::cli {

Runner add_presets(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("presets", "List built-in presets, or show one as YAML");
  CLI::App* show = cmd->add_subcommand("show", "Print one preset as editable YAML");
  auto name = std::make_shared<std::string>();
  show->add_option("name", *name, "Preset name, or a Hugging Face config.json to convert")
      ->required();
  return [show, name] {
    if (show->parsed() && spec::is_yaml_path(*name)) {
      throw Error(ErrorKind::kInvalidInput, "is a YAML file, already in the schema presets show prints")
          .at({*name, 0, 0})
          .with_hint("give it to --model, --cluster or a cluster's gpu: as it is");
    }
    // A config.json, a checkpoint's directory or any other path is read as a model, whose reader
    // says what is wrong with the path; a bare name is a preset's.
    std::error_code ignored;
    if (show->parsed() && (name->ends_with(".json") || spec::written_as_path(*name) ||
                           std::filesystem::exists(*name, ignored))) {
      const spec::ModelSpec m = spec::load_model(*name);
      fmt::print("{}",
                 spec::model_yaml(
                     m, fmt::format("# {}, read from the Hugging Face config {} by stepcast.\n"
                                    "# Edit and pass back with --model FILE.yaml.\n",
                                    m.name, *name)));
      return kExitOk;
    }
    if (show->parsed()) {
      fmt::print("{}", spec::preset_yaml(*name));
      return kExitOk;
    }
    const std::pair<const char*, spec::PresetKind> kinds[] = {
        {"models", spec::PresetKind::kModel}, {"gpus", spec::PresetKind::kGpu},
        {"clusters", spec::PresetKind::kCluster}};
    for (const auto& [title, kind] : kinds) {
      fmt::print("{}:\n", title);
      for (const std::string& n : spec::preset_names(kind)) fmt::print("  {}\n", n);
    }
    return kExitOk;
  };
}

}  // namespace stepcast::cli
