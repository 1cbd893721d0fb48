// stepcast::Error — the one exception type for bad input, unsupported features, I/O failures and
// bugs (STYLE.md §3). Library code throws it; only cli/main.cpp catches it and picks the exit code.
//
//   throw Error(ErrorKind::kInvalidInput, "expected a bandwidth such as \"400 Gbit/s\", got \"fast\"")
//       .at({"cluster.yaml", 14, 5}).in_field("cluster.levels[1].bandwidth");
//
// what() renders the ninja form: `cluster.yaml:14:5: cluster.levels[1].bandwidth: expected ...`,
// followed by the offending line and a caret when an excerpt is known. hint() is printed apart.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

namespace stepcast {

enum class ErrorKind {
  kInvalidInput,  // the user's input is wrong: exit code 1
  kUnsupported,   // valid input that stepcast cannot model yet: exit code 1
  kIo,            // a file cannot be read or written: exit code 1
  kInternal,      // a bug (a failed STEPCAST_ASSERT): exit code 70
};

/// Where in an input the error is. line and column are 1-based; 0 means unknown.
struct SourceLocation {
  std::string file;
  int line = 0;
  int column = 0;
};

class Error : public std::exception {
 public:
  Error(ErrorKind kind, std::string message, std::string hint = {});

  /// Builders used while the error travels up through parsers that know more context.
  Error& at(SourceLocation where);
  Error& in_field(std::string field);
  Error& with_hint(std::string hint);
  /// The offending source line; rendered under the message with a caret at where().column.
  Error& with_excerpt(std::string line_text);
  /// The options an error about how several of them combine concerns, named as scenario files
  /// spell them ("tp", "global-batch"), so that a caller that knows where each was set can say.
  Error& concerning(std::vector<std::string> settings);

  const char* what() const noexcept override { return rendered_.c_str(); }
  ErrorKind kind() const { return kind_; }
  const SourceLocation& where() const { return where_; }
  const std::string& field() const { return field_; }
  const std::string& message() const { return message_; }
  const std::string& hint() const { return hint_; }
  const std::vector<std::string>& settings() const { return settings_; }

 private:
  void render();

  ErrorKind kind_;
  SourceLocation where_;
  std::string field_;
  std::string message_;
  std::string hint_;
  std::string excerpt_;
  std::vector<std::string> settings_;
  std::string rendered_;
};

namespace detail {
[[noreturn]] void assert_failed(const char* condition, const char* why, const char* file, int line);
}  // namespace detail

}  // namespace stepcast

/// A check that only a bug can fail; never used to validate user input. Stays on in release.
#define STEPCAST_ASSERT(cond, why) \
  ((cond) ? static_cast<void>(0) : ::stepcast::detail::assert_failed(#cond, why, __FILE__, __LINE__))
