#include "core/error.h"

#include <algorithm>
#include <string_view>
#include <utility>

#include "core/utf8.h"

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

Error& Error::concerning(std::vector<std::string> settings) {
  settings_ = std::move(settings);
  return *this;
}

namespace {

// Appends `text` with its control characters (a NUL or an escape sequence read from a file) made
// visible (core::escape_controls); line breaks and tabs stay. In an excerpt each becomes one '?'
// so that the caret under it still points at its column.
void append_printable(std::string& out, std::string_view text, bool keep_width) {
  if (!keep_width) {
    out += core::escape_controls(text, true);
    return;
  }
  for (const char c : text) out += core::printable(c, true) ? c : '?';
}

}  // namespace

void Error::render() {
  rendered_.clear();
  if (!where_.file.empty()) {
    append_printable(rendered_, where_.file, false);
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
    append_printable(rendered_, field_, false);
    rendered_ += ": ";
  }
  if (kind_ == ErrorKind::kInternal) rendered_ += "internal error (a bug): ";
  append_printable(rendered_, message_, false);
  if (!excerpt_.empty()) {
    // A long line (minified JSON, a generated YAML flow) is shown as a window around the column.
    constexpr size_t kWidth = 120;
    const size_t column = where_.column > 0 ? static_cast<size_t>(where_.column - 1) : 0;
    const bool long_line = excerpt_.size() > kWidth && column > kWidth / 2;
    const size_t first = long_line ? std::min(column - kWidth / 2, excerpt_.size() - kWidth) : 0;
    const bool cut_left = first > 0, cut_right = first + kWidth < excerpt_.size();
    rendered_ += "\n  ";
    if (cut_left) rendered_ += "...";
    append_printable(rendered_, std::string_view(excerpt_).substr(first, kWidth), true);
    if (cut_right) rendered_ += "...";
    if (where_.column > 0) {
      rendered_ += "\n  ";
      rendered_.append(column - first + (cut_left ? 3 : 0), ' ');
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
