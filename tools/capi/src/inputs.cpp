// Inputs of a problem (ssd::make_inputs) in the OpSpec's role order, copied out on request.
#include <memory>

#include "guard.h"
#include "handles.h"

using ssd::capi::guarded;
using ssd::capi::need;

extern "C" {

ssd_capi_status ssd_capi_inputs_make(const ssd_problem* problem, ssd_inputs** out) {
  return guarded("ssd_capi_inputs_make", [&] {
    need(out, "out") = nullptr;
    const ssd::Problem& p = need(problem, "problem").problem;
    auto handle = std::make_unique<ssd_inputs>();
    handle->problem = p;
    handle->inputs = ssd::make_inputs(p);
    for (const ssd::InputRole& role : ssd::op_spec(p.op).inputs)
      if (handle->inputs.find(role.name)) handle->names.push_back(role.name);
    for (const std::string& name : handle->names) {
      const ssd::Tensor& t = handle->inputs.at(name);
      handle->infos.push_back(ssd::capi::tensor_info(name, t, t.dtype()));
    }
    *out = handle.release();
  });
}

void ssd_capi_inputs_free(ssd_inputs* inputs) { delete inputs; }

ssd_capi_status ssd_capi_inputs_count(const ssd_inputs* inputs, int64_t* count) {
  return guarded("ssd_capi_inputs_count",
                 [&] { need(count, "count") = static_cast<int64_t>(need(inputs, "inputs").infos.size()); });
}

ssd_capi_status ssd_capi_inputs_info(const ssd_inputs* inputs, int64_t index, ssd_capi_tensor_info* info) {
  return guarded("ssd_capi_inputs_info", [&] {
    const ssd_inputs& in = need(inputs, "inputs");
    need(info, "info") = in.infos[ssd::capi::need_index(index, in.infos.size())];
  });
}

ssd_capi_status ssd_capi_inputs_copy(const ssd_inputs* inputs, const char* name, int32_t encoding, void* dst,
                                     int64_t bytes) {
  return guarded("ssd_capi_inputs_copy", [&] {
    const ssd_inputs& in = need(inputs, "inputs");
    const ssd::Tensor* t = in.inputs.find(ssd::capi::need_text(name, "name"));
    if (t == nullptr) {
      std::string have;
      for (const std::string& n : in.names) have.append(have.empty() ? "" : ", ").append(n);
      throw ssd::ArgumentError("name", "'" + std::string(name) + "' is not an input of this case (" + have + ")");
    }
    ssd::capi::copy_out(*t, encoding, dst, bytes);
  });
}

}  // extern "C"
