// The OpSpec registry, the checks every op shares, and InputSet.
#include "ssd/reference/op_spec.h"

#include <algorithm>
#include <cstdlib>
#include <limits>

#include "ssd/reference/errors.h"
#include "ssd/reference/layout.h"
#include "specs/specs.h"

namespace ssd {

const Tensor* InputSet::find(std::string_view name) const {
  auto it = tensors_.find(name);
  return it == tensors_.end() ? nullptr : &it->second;
}

const Tensor& InputSet::at(std::string_view name) const {
  if (const Tensor* t = find(name)) return *t;
  throw ArgumentError("inputs", "no input named '" + std::string(name) + "'");
}

bool OpSpec::takes_flag(std::string_view flag) const {
  return std::find(flags.begin(), flags.end(), flag) != flags.end();
}

bool OpSpec::takes_dim(char dim) const { return std::find(dims.begin(), dims.end(), dim) != dims.end(); }

const OutputRole& OpSpec::output(std::string_view role) const {
  for (const auto& r : outputs)
    if (r.name == role) return r;
  throw ArgumentError("output", std::string(name) + " has no output '" + std::string(role) + "'");
}

const InputRole* OpSpec::input(std::string_view role) const {
  for (const auto& r : inputs)
    if (r.name == role) return &r;
  return nullptr;
}

const OpSpec& op_spec(Op op) {
  static const std::vector<OpSpec> specs = [] {
    std::vector<OpSpec> all;
    all.push_back(specs::mamba2());
    all.push_back(specs::chunk_cumsum());
    all.push_back(specs::chunk_coupling());
    all.push_back(specs::chunk_state());
    all.push_back(specs::state_passing());
    all.push_back(specs::chunk_scan());
    all.push_back(specs::recurrent());
    all.push_back(specs::discretize_segsum());
    return all;
  }();
  for (const auto& s : specs)
    if (s.op == op) return s;
  throw ArgumentError("op", "no OpSpec registered");
}

std::vector<std::pair<std::string, Shape>> output_shapes(const Problem& p) {
  std::vector<std::pair<std::string, Shape>> shapes;
  for (const OutputRole& role : op_spec(p.op).outputs)
    if (!role.present || role.present(p)) shapes.emplace_back(role.name, role.shape(p));
  return shapes;
}

constexpr std::string_view kWholeChunks = "S must be a multiple of Q (S = chunks * Q)";

std::optional<std::string> invalid_reason(const Problem& p) {
  const OpSpec& spec = op_spec(p.op);
  if (std::find(spec.primary_dtypes.begin(), spec.primary_dtypes.end(), p.dtype) == spec.primary_dtypes.end())
    return std::string(spec.name) + " does not take primary dtype " + std::string(dtype_name(p.dtype));
  const std::pair<char, std::int64_t> sizes[] = {{'b', p.b}, {'s', p.s}, {'h', p.h}, {'p', p.p},
                                                 {'g', p.g}, {'n', p.n}, {'q', p.q}, {'d', p.d}};
  for (auto [dim, value] : sizes)
    if (spec.takes_dim(dim) && value <= 0) return std::string("size ") + dim + " must be positive, got " + std::to_string(value);
  if (spec.takes_dim('g') && spec.takes_dim('h') && p.h % p.g != 0)
    return "H % G != 0 (H = " + std::to_string(p.h) + ", G = " + std::to_string(p.g) + ")";
  if (spec.whole_chunks && p.s % p.q != 0) return std::string(kWholeChunks);
  if (p.dt_limit && !(p.dt_limit->lo <= p.dt_limit->hi)) return "dt_limit needs lo <= hi";
  if (p.seq.kind == SeqSpec::Kind::runs) {
    // Summed as magnitudes with an overflow check: a run may be any int64 the parser read.
    std::uint64_t total = 0;
    bool overflow = false;
    for (auto r : p.seq.runs) {
      const std::uint64_t length = r < 0 ? 0 - static_cast<std::uint64_t>(r) : static_cast<std::uint64_t>(r);
      overflow = overflow || __builtin_add_overflow(total, length, &total);
    }
    if (overflow) return "seq runs cover more than 2^64 tokens, S = " + std::to_string(p.s);
    if (total != static_cast<std::uint64_t>(p.s))
      return "seq runs cover " + std::to_string(total) + " tokens, S = " + std::to_string(p.s);
  }
  for (const auto& [role, dtype] : p.dtypes) {
    if (role == "out") continue;
    if (role == "state" && spec.takes_flag("state")) {
      if (!is_float(dtype) || dtype == DType::f64) return "state must be f32, f16 or bf16";
      continue;
    }
    const InputRole* r = spec.input(role);
    if (r == nullptr) return "no input '" + role + "'";
    if (r->present && !r->present(p)) return "dtype given for absent input '" + role + "'";
    if (!is_float(dtype) || dtype == DType::f64) return "input '" + role + "' must be f32, f16 or bf16";
  }
  if (auto it = p.dtypes.find("out"); it != p.dtypes.end() && (!is_float(it->second) || it->second == DType::f64))
    return "out must be f32, f16 or bf16";
  if (auto why = layout_reason(p)) return why;
  if (spec.invalid_reason)
    if (auto why = spec.invalid_reason(p)) return why;
  // Tensors are indexed by int64: a case whose element counts overflow it cannot exist. (A case
  // larger than this machine's memory is still inside the contract: size_reason, with a limit.)
  return size_reason(p, std::numeric_limits<std::int64_t>::max());
}

std::optional<std::string> unseen_invalid_reason(const Problem& p) {
  if (!op_spec(p.op).whole_chunks || p.q <= 0 || p.s <= 0 || p.s % p.q == 0) return std::nullopt;
  if (p.s > std::numeric_limits<std::int64_t>::max() - p.q) return std::nullopt;
  Problem whole = p;  // the same case in whole chunks: any reason left is one the tensors show
  whole.s = (p.s / p.q + 1) * p.q;
  if (invalid_reason(whole)) return std::nullopt;
  return std::string(kWholeChunks);
}

}  // namespace ssd
