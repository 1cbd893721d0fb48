#include "spec/yaml_writer.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "core/error.h"
#include "spec/presets.h"
#include "spec/scenario.h"
#include "spec/yaml_reader.h"

namespace stepcast::spec {
namespace {

// Every model field, one line each (spec::dump), to compare two ModelSpecs whole.
std::string fields(const ModelSpec& m) {
  Scenario s;
  s.model = m;
  const std::string text = dump(s);
  return text.substr(0, text.find("\ncluster."));
}

TEST(YamlWriter, EveryModelPresetReadsBackAsItself) {
  for (const std::string& name : preset_names(PresetKind::kModel)) {
    const ModelSpec m = model_preset(name);
    EXPECT_EQ(fields(read_model_yaml("m.yaml", model_yaml(m, ""))), fields(m)) << name;
  }
}

TEST(YamlWriter, AHuggingFaceConfigReadsBackAsTheModelItDescribes) {
  const ModelSpec m =
      load_model(std::string(STEPCAST_SOURCE_DIR) + "/tests/data/good/Llama-3.1-8B/config.json");
  const std::string text = model_yaml(m, "# from config.json\n");
  EXPECT_EQ(text.rfind("# from config.json\nname: Llama-3.1-8B\n", 0), 0u) << text;
  EXPECT_EQ(fields(read_model_yaml("m.yaml", text)), fields(m));
}

TEST(YamlWriter, LeavesOutOptionalKeysAtTheirDefaults) {
  const std::string text = model_yaml(model_preset("llama3.1-8b"), "");
  for (const char* key : {"head_dim", "qk_norm", "sandwich_norm", "logit_softcap", "hidden_dropout",
                          "attention_window", "moe", "mla"}) {
    EXPECT_EQ(text.find(std::string(key) + ":"), std::string::npos) << key;
  }
}

TEST(YamlWriter, SettingsReadBackAsThemselvesWhateverTheirCharacters) {
  const std::vector<std::pair<std::string, std::string>> settings = {
      {"model", "runs/a: model.yaml"}, {"host-dispatch", "42.4 us"}, {"placement", "tp,cp,pp,dp"},
      {"cluster", "#weird"}, {"sp", "true"}};
  const std::vector<YamlSetting> back = read_yaml_settings("s.yaml", settings_yaml(settings, "# saved\n"));
  ASSERT_EQ(back.size(), settings.size());
  for (size_t i = 0; i < settings.size(); ++i) {
    EXPECT_EQ(back[i].key, settings[i].first);
    EXPECT_EQ(back[i].value, settings[i].second);
  }
}

}  // namespace
}  // namespace stepcast::spec
