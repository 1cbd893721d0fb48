#include "core/error.h"

#include <utility>

namespace stepcast {

Error::Error(ErrorKind kind, std::string message, std::string hint)
    : kind_(kind), message_(std::move(message)), hint_(std::move(hint)) {
  render();
}

Error& Error::at(SourceLocation where) {
  where_ = std::move(where);
  render();
  return *this;
}

Error& Error::in_field(std::string field) {
  field_ = std::move(field);
  render();
  return *this;
}

Error& Error::with_hint(std::string hint) {
  hint_ = std::move(hint);
  return *this;
}

Error& Error::with_excerpt(std::string line_text) {
  excerpt_ = std::move(line_text);
  render();
  return *this;
}

void Error::render() {
  rendered_.clear();
  if (!where_.file.empty()) {
    rendered_ += where_.file;
    if (where_.line > 0) {
      rendered_ += ':';
      rendered_ += std::to_string(where_.line);
      if (where_.column > 0) {
        rendered_ += ':';
        rendered_ += std::to_string(where_.column);
      }
    }
    rendered_ += ": ";
  }
  if (!field_.empty()) {
    rendered_ += field_;
    rendered_ += ": ";
  }
  if (kind_ == ErrorKind::kInternal) rendered_ += "internal error (a bug): ";
  rendered_ += message_;
  if (!excerpt_.empty()) {
    rendered_ += "\n  ";
    rendered_ += excerpt_;
    if (where_.column > 0) {
      rendered_ += "\n  ";
      rendered_.append(static_cast<size_t>(where_.column - 1), ' ');
      rendered_ += '^';
    }
  }
}

namespace detail {
void assert_failed(const char* condition, const char* why, const char* file, int line) {
  throw Error(ErrorKind::kInternal, std::string(why) + " (" + condition + " failed at " + file +
                                        ":" + std::to_string(line) + ")");
}
}  // namespace detail

}  // namespace stepcast
