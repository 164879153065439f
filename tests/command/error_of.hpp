// The message of the exception a call throws ("no error" when it returns): shared by the command
// trainer's tests, whose sources compile together (cmake/DptuneTests.cmake).
#pragma once

#include <exception>
#include <functional>
#include <string>

namespace dptune_test {

inline std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace dptune_test
