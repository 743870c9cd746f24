// Describing a tensor to C callers and copying its values into their buffers.
#include <cstring>

#include "guard.h"
#include "handles.h"
#include "ssd/reference/abi_views.h"

namespace ssd::capi {

ssd_capi_tensor_info tensor_info(const std::string& name, const ssd::Tensor& t, ssd::DType storage) {
  ssd_capi_tensor_info info{};
  info.name = name.c_str();
  info.dtype = static_cast<int32_t>(storage);
  if (t.rank() > SSD_CAPI_MAX_RANK) throw std::runtime_error("tensor '" + name + "' has rank above SSD_CAPI_MAX_RANK");
  info.rank = t.rank();
  for (int i = 0; i < t.rank(); ++i) info.shape[i] = t.shape()[static_cast<std::size_t>(i)];
  info.numel = t.numel();
  return info;
}

void copy_out(const ssd::Tensor& values, std::int32_t encoding, void* dst, std::int64_t bytes) {
  if (encoding != SSD_CAPI_AS_F64 && encoding != SSD_CAPI_NATIVE)
    throw ssd::ArgumentError("encoding", std::to_string(encoding) + " is neither SSD_CAPI_AS_F64 nor SSD_CAPI_NATIVE");
  if (dst == nullptr) throw ssd::ArgumentError("dst", "is NULL");
  const std::int64_t width = encoding == SSD_CAPI_AS_F64 ? 8 : static_cast<std::int64_t>(ssd::dtype_bytes(values.dtype()));
  const std::int64_t expected = values.numel() * width;
  if (bytes != expected)
    throw ssd::ArgumentError("bytes", std::to_string(bytes) + " given, the tensor needs " + std::to_string(expected));
  if (encoding == SSD_CAPI_AS_F64) {
    std::memcpy(dst, values.data(), static_cast<std::size_t>(expected));
  } else {
    const std::vector<std::uint8_t> encoded = ssd::encode(values);
    std::memcpy(dst, encoded.data(), encoded.size());
  }
}

}  // namespace ssd::capi
