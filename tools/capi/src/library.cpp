// Kernel libraries behind the kernel ABI, opened as ssd-fuzz opens them, and one case checked.
#include "guard.h"
#include "handles.h"
#include "ssd/harness/runner.h"

using ssd::capi::guarded;
using ssd::capi::need;

extern "C" {

ssd_capi_status ssd_capi_library_open(const char* kernels, ssd_library** out) {
  return guarded("ssd_capi_library_open", [&] {
    need(out, "out") = nullptr;
    *out = new ssd_library{ssd::KernelLibrary::open(ssd::capi::need_text(kernels, "kernels"))};
  });
}

void ssd_capi_library_free(ssd_library* library) { delete library; }

ssd_capi_status ssd_capi_library_name(const ssd_library* library, const char** name) {
  return guarded("ssd_capi_library_name",
                 [&] { need(name, "name") = need(library, "library").library.table().name; });
}

ssd_capi_status ssd_capi_library_implements(const ssd_library* library, const char* op, int32_t* yes) {
  return guarded("ssd_capi_library_implements", [&] {
    const ssd_library& l = need(library, "library");
    need(yes, "yes") = l.library.implements(ssd::parse_op(ssd::capi::need_text(op, "op"))) ? 1 : 0;
  });
}

ssd_capi_status ssd_capi_check_case(const ssd_library* library, const ssd_problem* problem, ssd_judgement** out) {
  return guarded("ssd_capi_check_case", [&] {
    need(out, "out") = nullptr;
    const ssd_library& l = need(library, "library");
    *out = new ssd_judgement(ssd::check_case(l.library, need(problem, "problem").problem));
  });
}

}  // extern "C"
