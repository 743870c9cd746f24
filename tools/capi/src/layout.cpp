// The layout of a problem's inputs (ssd::input_layout): its buffers and where each laid-out input lies.
#include <memory>

#include "guard.h"
#include "handles.h"
#include "ssd/harness/poison.h"

using ssd::capi::guarded;
using ssd::capi::need;

extern "C" {

ssd_capi_status ssd_capi_layout_make(const ssd_problem* problem, ssd_layout** out) {
  return guarded("ssd_capi_layout_make", [&] {
    need(out, "out") = nullptr;
    const ssd_problem& p = need(problem, "problem");
    // input_layout assumes a valid problem (a zxbcdt layout needs the op's zxbcdt roles).
    if (p.invalid) throw ssd::ArgumentError("problem", *p.invalid + " (" + p.text + ")");
    auto handle = std::make_unique<ssd_layout>();
    handle->layout = ssd::input_layout(p.problem);
    // The C structs point into handle->layout, which stays where it is from here on.
    for (const ssd::LayoutBuffer& b : handle->layout.buffers) {
      ssd_capi_buffer_info c{};
      c.name = b.name.c_str();
      c.dtype = static_cast<int32_t>(b.dtype);
      c.extent = b.extent;
      c.poison = ssd::poison_bits(b.dtype);
      handle->buffers.push_back(c);
    }
    for (const ssd::Placement& v : handle->layout.placements) {
      if (v.shape.size() > SSD_CAPI_MAX_RANK)
        throw std::runtime_error("input '" + v.role + "' has rank above SSD_CAPI_MAX_RANK");
      ssd_capi_placement_info c{};
      c.role = v.role.c_str();
      c.buffer = v.buffer.c_str();
      c.rank = static_cast<int32_t>(v.shape.size());
      for (std::size_t axis = 0; axis < v.shape.size(); ++axis) {
        c.shape[axis] = v.shape[axis];
        c.strides[axis] = v.strides[axis];
      }
      c.offset = v.offset;
      handle->placements.push_back(c);
    }
    *out = handle.release();
  });
}

void ssd_capi_layout_free(ssd_layout* layout) { delete layout; }

ssd_capi_status ssd_capi_layout_buffer_count(const ssd_layout* layout, int64_t* count) {
  return guarded("ssd_capi_layout_buffer_count",
                 [&] { need(count, "count") = static_cast<int64_t>(need(layout, "layout").buffers.size()); });
}

ssd_capi_status ssd_capi_layout_buffer(const ssd_layout* layout, int64_t index, ssd_capi_buffer_info* buffer) {
  return guarded("ssd_capi_layout_buffer", [&] {
    const ssd_layout& l = need(layout, "layout");
    need(buffer, "buffer") = l.buffers[ssd::capi::need_index(index, l.buffers.size())];
  });
}

ssd_capi_status ssd_capi_layout_placement_count(const ssd_layout* layout, int64_t* count) {
  return guarded("ssd_capi_layout_placement_count",
                 [&] { need(count, "count") = static_cast<int64_t>(need(layout, "layout").placements.size()); });
}

ssd_capi_status ssd_capi_layout_placement(const ssd_layout* layout, int64_t index, ssd_capi_placement_info* placement) {
  return guarded("ssd_capi_layout_placement", [&] {
    const ssd_layout& l = need(layout, "layout");
    need(placement, "placement") = l.placements[ssd::capi::need_index(index, l.placements.size())];
  });
}

}  // extern "C"
