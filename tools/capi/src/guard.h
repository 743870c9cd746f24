// The exception barrier of the C API: every entry point runs its body through `guarded`, which turns
// any C++ exception into a status and this thread's last-error message, prefixed with the function.
#pragma once
#include <exception>
#include <new>
#include <string>

#include "ssd/capi.h"
#include "ssd/reference/errors.h"

namespace ssd::capi {

void set_last_error(std::string message);

template <class Body>
ssd_capi_status guarded(const char* function, Body&& body) noexcept {
  try {
    body();
    return SSD_CAPI_OK;
  } catch (const ssd::ArgumentError& e) {
    set_last_error(std::string(function) + ": " + e.what());
    return SSD_CAPI_INVALID_ARGUMENT;
  } catch (const std::bad_alloc&) {
    set_last_error(std::string(function) + ": out of memory");
    return SSD_CAPI_ERROR;
  } catch (const std::exception& e) {
    set_last_error(std::string(function) + ": " + e.what());
    return SSD_CAPI_ERROR;
  } catch (...) {
    set_last_error(std::string(function) + ": unknown error");
    return SSD_CAPI_ERROR;
  }
}

// A required pointer argument, or ArgumentError naming it.
template <class T>
T& need(T* pointer, const char* argument) {
  if (pointer == nullptr) throw ssd::ArgumentError(argument, "is NULL");
  return *pointer;
}

// A required string argument, or ArgumentError naming it.
inline const char* need_text(const char* text, const char* argument) {
  if (text == nullptr) throw ssd::ArgumentError(argument, "is NULL");
  return text;
}

// The index into a handle's list, or ArgumentError naming 'index'.
inline std::size_t need_index(std::int64_t index, std::size_t size) {
  if (index < 0 || static_cast<std::size_t>(index) >= size)
    throw ssd::ArgumentError("index", std::to_string(index) + " is outside 0.." + std::to_string(size) +
                                          " (exclusive)");
  return static_cast<std::size_t>(index);
}

}  // namespace ssd::capi
