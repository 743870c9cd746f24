// Helpers of the property tests.
#include "support.h"

namespace ssd_test {

ssd::Tensor slice_tokens(const ssd::Tensor& t, std::int64_t begin, std::int64_t end) {
  ssd::Shape shape = t.shape();
  const std::int64_t batch = shape[0], seqlen = shape[1], inner = t.numel() / (batch * seqlen);
  shape[1] = end - begin;
  ssd::Tensor out(t.dtype(), shape);
  for (std::int64_t b = 0; b < batch; ++b)
    for (std::int64_t s = begin; s < end; ++s)
      for (std::int64_t i = 0; i < inner; ++i)
        out.data()[(b * (end - begin) + (s - begin)) * inner + i] = t[(b * seqlen + s) * inner + i];
  return out;
}

void place_tokens(ssd::Output& whole, const ssd::Output& part, std::int64_t begin) {
  const std::int64_t batch = whole.value.dim(0), seqlen = whole.value.dim(1), len = part.value.dim(1);
  const std::int64_t inner = whole.value.numel() / (batch * seqlen);
  if (whole.defined.empty()) whole.defined.assign(static_cast<std::size_t>(whole.value.numel()), 1);
  for (std::int64_t b = 0; b < batch; ++b)
    for (std::int64_t s = 0; s < len; ++s)
      for (std::int64_t i = 0; i < inner; ++i) {
        const std::int64_t to = (b * seqlen + begin + s) * inner + i, from = (b * len + s) * inner + i;
        whole.value.data()[to] = part.value[from];
        whole.defined[static_cast<std::size_t>(to)] = part.is_defined(from) ? 1 : 0;
      }
}

ssd::Tensor repeat_groups(const ssd::Tensor& t, std::int64_t heads) {
  const std::int64_t batch = t.dim(0), seqlen = t.dim(1), groups = t.dim(2), n = t.dim(3);
  ssd::Tensor out(t.dtype(), {batch, seqlen, heads, n});
  for (std::int64_t bs = 0; bs < batch * seqlen; ++bs)
    for (std::int64_t h = 0; h < heads; ++h)
      for (std::int64_t k = 0; k < n; ++k)
        out.data()[(bs * heads + h) * n + k] = t[(bs * groups + h / (heads / groups)) * n + k];
  return out;
}

void require_agreement(const ssd::Output& candidate, const ssd::Output& reference, double tolerance,
                       const std::string& what) {
  const ssd::Agreement a = ssd::agreement(candidate, reference);
  RC_LOG() << what << " '" << reference.name << "': " << a.describe() << '\n';
  if (!(a.relative() <= tolerance))
    RC_FAIL(what + " '" + reference.name + "' disagrees: " + a.describe() + " (at flat index " +
            std::to_string(a.worst) + ")");
  RC_ASSERT(a.compared > 0 || reference.value.numel() == 0 || !reference.defined.empty());
}

void require_all_agree(const ssd::Outputs& candidate, const ssd::Outputs& reference, double tolerance,
                       const std::string& what) {
  RC_ASSERT(candidate.all().size() == reference.all().size());
  for (const ssd::Output& ref : reference.all()) require_agreement(candidate.get(ref.name), ref, tolerance, what);
}

}  // namespace ssd_test
