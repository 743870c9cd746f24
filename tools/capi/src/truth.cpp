// The oracle and the bounds of a problem (ssd::compute_truth), with their masks, copied out.
#include <cstring>
#include <memory>

#include "guard.h"
#include "handles.h"

using ssd::capi::guarded;
using ssd::capi::need;

namespace {

const ssd::Output& find_output(const ssd_truth& t, const char* name) {
  if (const ssd::Output* o = t.truth.oracle.find(ssd::capi::need_text(name, "name"))) return *o;
  std::string have;
  for (const ssd::Output& o : t.truth.oracle.all()) have.append(have.empty() ? "" : ", ").append(o.name);
  throw ssd::ArgumentError("name", "'" + std::string(name) + "' is not an output of this case (" + have + ")");
}

// A mask as one byte per element; an empty mask means "every element" (DEFINED) or "none" (EXACT).
void copy_mask(const std::vector<std::uint8_t>& mask, std::uint8_t empty_value, std::int64_t numel, void* dst,
               std::int64_t bytes) {
  if (dst == nullptr) throw ssd::ArgumentError("dst", "is NULL");
  if (bytes != numel)
    throw ssd::ArgumentError("bytes", std::to_string(bytes) + " given, the mask needs " + std::to_string(numel));
  if (mask.empty()) std::memset(dst, empty_value, static_cast<std::size_t>(numel));
  else std::memcpy(dst, mask.data(), static_cast<std::size_t>(numel));
}

}  // namespace

extern "C" {

ssd_capi_status ssd_capi_truth_compute(const ssd_problem* problem, const ssd_inputs* inputs, ssd_truth** out) {
  return guarded("ssd_capi_truth_compute", [&] {
    need(out, "out") = nullptr;
    const ssd::Problem& p = need(problem, "problem").problem;
    auto handle = std::make_unique<ssd_truth>();
    handle->problem = p;
    if (inputs != nullptr) {
      // The bounds are of these inputs; other inputs would judge a different case.
      if (!(inputs->problem == p))
        throw ssd::ArgumentError("inputs", "made for '" + ssd::to_string(inputs->problem) + "', not for '" +
                                               ssd::to_string(p) + "'");
      handle->inputs = inputs->inputs;
    } else {
      handle->inputs = ssd::make_inputs(p);
    }
    handle->truth = ssd::compute_truth(p, handle->inputs);
    const ssd::OpSpec& spec = ssd::op_spec(p.op);
    for (const ssd::Output& o : handle->truth.oracle.all()) {
      ssd_capi_tensor_info info = ssd::capi::tensor_info(o.name, o.value, spec.output(o.name).dtype(p));
      const ssd::OutputBound& b = handle->truth.bounds.get(o.name);
      for (std::uint8_t d : o.defined) info.has_undefined |= d == 0 ? 1 : 0;
      for (std::uint8_t e : b.exact) info.has_exact |= e != 0 ? 1 : 0;
      info.reduction_length = b.reduction_length;
      handle->infos.push_back(info);
    }
    *out = handle.release();
  });
}

void ssd_capi_truth_free(ssd_truth* truth) { delete truth; }

ssd_capi_status ssd_capi_truth_count(const ssd_truth* truth, int64_t* count) {
  return guarded("ssd_capi_truth_count",
                 [&] { need(count, "count") = static_cast<int64_t>(need(truth, "truth").infos.size()); });
}

ssd_capi_status ssd_capi_truth_info(const ssd_truth* truth, int64_t index, ssd_capi_tensor_info* info) {
  return guarded("ssd_capi_truth_info", [&] {
    const ssd_truth& t = need(truth, "truth");
    need(info, "info") = t.infos[ssd::capi::need_index(index, t.infos.size())];
  });
}

ssd_capi_status ssd_capi_truth_copy(const ssd_truth* truth, const char* name, int32_t field, void* dst, int64_t bytes) {
  return guarded("ssd_capi_truth_copy", [&] {
    const ssd_truth& t = need(truth, "truth");
    const ssd::Output& o = find_output(t, name);
    const ssd::OutputBound& b = t.truth.bounds.get(o.name);
    switch (field) {
      case SSD_CAPI_ORACLE: ssd::capi::copy_out(o.value, SSD_CAPI_AS_F64, dst, bytes); break;
      case SSD_CAPI_BOUND: ssd::capi::copy_out(b.bound, SSD_CAPI_AS_F64, dst, bytes); break;
      case SSD_CAPI_DEFINED: copy_mask(o.defined, 1, o.value.numel(), dst, bytes); break;
      case SSD_CAPI_EXACT: copy_mask(b.exact, 0, o.value.numel(), dst, bytes); break;
      default: throw ssd::ArgumentError("field", std::to_string(field) + " is not an ssd_capi_field");
    }
  });
}

}  // extern "C"
