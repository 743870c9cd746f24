// Versions, status and dtype names, the op list, rounding to a storage dtype and this thread's last error.
#include <string>

#include "guard.h"
#include "ssd/reference/dtype.h"
#include "ssd/reference/problem.h"
#include "ssd/reference/version.h"

namespace ssd::capi {
namespace {
thread_local std::string last_error;
}  // namespace

void set_last_error(std::string message) { last_error = std::move(message); }

}  // namespace ssd::capi

extern "C" {

int32_t ssd_capi_version(void) { return SSD_CAPI_VERSION; }

ssd_capi_status ssd_capi_versions(const char** contract, const char** generator, const char** oracle) {
  return ssd::capi::guarded("ssd_capi_versions", [&] {
    // string_views of literals: NUL-terminated.
    ssd::capi::need(contract, "contract") = ssd::kContractVersion.data();
    ssd::capi::need(generator, "generator") = ssd::kGeneratorVersion.data();
    ssd::capi::need(oracle, "oracle") = ssd::kOracleVersion.data();
  });
}

const char* ssd_capi_last_error(void) { return ssd::capi::last_error.c_str(); }

const char* ssd_capi_status_name(int32_t status) {
  switch (status) {
    case SSD_CAPI_OK: return "OK";
    case SSD_CAPI_INVALID_ARGUMENT: return "INVALID_ARGUMENT";
    case SSD_CAPI_ERROR: return "ERROR";
    default: return "?";
  }
}

const char* ssd_capi_dtype_name(int32_t dtype) {
  switch (dtype) {
    case SSD_CAPI_F64: return "f64";
    case SSD_CAPI_F32: return "f32";
    case SSD_CAPI_F16: return "f16";
    case SSD_CAPI_BF16: return "bf16";
    case SSD_CAPI_I32: return "i32";
    case SSD_CAPI_U8: return "u8";
    default: return "?";
  }
}

ssd_capi_status ssd_capi_round_to(int32_t dtype, const double* values, double* out, int64_t count) {
  return ssd::capi::guarded("ssd_capi_round_to", [&] {
    if (dtype != SSD_CAPI_F32 && dtype != SSD_CAPI_F16 && dtype != SSD_CAPI_BF16)
      throw ssd::ArgumentError("dtype", std::to_string(dtype) + " is not f32, f16 or bf16");
    if (count < 0) throw ssd::ArgumentError("count", std::to_string(count) + " is negative");
    if (count > 0 && values == nullptr) throw ssd::ArgumentError("values", "is NULL");
    if (count > 0 && out == nullptr) throw ssd::ArgumentError("out", "is NULL");
    const auto t = static_cast<ssd::DType>(dtype);
    for (int64_t i = 0; i < count; ++i) out[i] = ssd::round_to(t, values[i]);
  });
}

const char* ssd_capi_op_names(void) {
  static const std::string names = [] {
    std::string s;
    for (ssd::Op op : ssd::kAllOps) s.append(s.empty() ? "" : ",").append(ssd::op_name(op));
    return s;
  }();
  return names.c_str();
}

}  // extern "C"
