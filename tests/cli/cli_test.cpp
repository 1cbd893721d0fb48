// The stepcast binary end to end: output, error messages on stderr and exit codes (README,
// docs/errors.md).
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <string>

namespace {

struct Invocation {
  std::string output;  // stdout and stderr together
  int exit_code = -1;
};

Invocation stepcast(const std::string& args) {
  const std::string command = std::string(STEPCAST_BINARY) + " " + args + " 2>&1";
  Invocation r;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return r;
  std::array<char, 4096> buffer{};
  size_t n = 0;
  while ((n = fread(buffer.data(), 1, buffer.size(), pipe)) > 0) r.output.append(buffer.data(), n);
  const int status = pclose(pipe);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

TEST(Cli, EstimatePrintsTheTableAndExitsZero) {
  const Invocation r = stepcast("estimate --model llama3.1-8b --cluster dgx-h100 --gpus 8 --seq 4096");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("step time"), std::string::npos);
  EXPECT_NE(r.output.find("memory per GPU"), std::string::npos);
}

TEST(Cli, ModelThatDoesNotFitStillExitsZero) {
  const Invocation r = stepcast("estimate --model llama3.1-405b --gpus 8 --tp 8");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("DOES NOT FIT"), std::string::npos);
}

TEST(Cli, UnknownPresetExitsOneWithDidYouMean) {
  const Invocation r = stepcast("estimate --model llama3-405b --gpus 8");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.output,
            "stepcast: error: unknown model preset \"llama3-405b\"\n"
            "  hint: did you mean \"llama3.1-405b\"?\n");
}

TEST(Cli, ImpossibleStrategyExitsOneListingEveryProblem) {
  const Invocation r = stepcast("estimate --model llama3.1-70b --gpus 64 --tp 3");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.output,
            "stepcast: error: 2 problems with the scenario:\n"
            "  tp 3 x pp 1 x cp 1 = 3 does not divide --gpus 64; nearest --gpus that fit: 63, 66\n"
            "  tp 3 does not divide 64 heads; valid tp on this model: 1, 2, 4, 8\n");
}

TEST(Cli, UsageErrorExitsTwo) {
  EXPECT_EQ(stepcast("estimate --recompute sometimes").exit_code, 2);
  EXPECT_EQ(stepcast("frobnicate").exit_code, 2);
}

TEST(Cli, MissingFileExitsOneNamingIt) {
  const Invocation r = stepcast("validate /nonexistent/runs.csv");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.output,
            "stepcast: error: /nonexistent/runs.csv: cannot open for reading: No such file or "
            "directory\n");
}

TEST(Cli, PresetsShowPrintsYamlThatReadsBack) {
  const Invocation r = stepcast("presets show dgx-a100-80g");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.output.find("name: dgx-a100-80g"), std::string::npos);
}

}  // namespace
