// The text of the error a call throws, for tests that compare it whole.
#pragma once

#include <functional>
#include <string>

#include "core/error.h"

namespace stepcast::testing {

// what() plus the hint, as the CLI prints them; "no error" when `f` returns.
inline std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what() + (e.hint().empty() ? std::string() : "\nhint: " + e.hint());
  }
  return "no error";
}

}  // namespace stepcast::testing
