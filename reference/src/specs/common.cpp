// Pieces shared by the OpSpecs.
#include "specs.h"

#include "ssd/reference/abi_views.h"

namespace ssd::specs {

std::vector<Problem> parse_all(std::initializer_list<std::string_view> lines) {
  std::vector<Problem> problems;
  for (auto line : lines) problems.push_back(parse_problem(line));
  return problems;
}

InputRole seq_idx_role() {
  return {"seq_idx", false, DType::i32, false,
          [](const Problem& p) { return p.seq.kind != SeqSpec::Kind::none; },
          [](const Problem& p) { return Shape{p.b, p.s}; },
          [](const Problem&) { return FillRule{FillRule::Kind::seq_idx}; }};
}

namespace abi {

void mark_D(Problem& p, const Tensor& D) { p.D = D.rank() == 1 ? DMode::per_head : DMode::per_head_dim; }
void mark_z(Problem& p, const Tensor&) { p.z = true; }
void mark_dt_bias(Problem& p, const Tensor&) { p.dt_bias = true; }
void mark_init(Problem& p, const Tensor&) { p.init = true; }
void mark_seq(Problem& p, const Tensor&) { p.seq.kind = SeqSpec::Kind::random; }
void mark_varlen(Problem& p, const Tensor&) { p.varlen = true; }

AbiScalarField state_dtype(std::size_t offset) {
  AbiScalarField f{"state_dtype", offset, AbiScalarField::Type::i32,
                   [](const Problem& p) {
                     auto it = p.dtypes.find("state");
                     return it == p.dtypes.end() ? -1.0 : static_cast<double>(abi_dtype(it->second));
                   },
                   [](Problem& p, double v) {
                     if (v >= 0) p.dtypes["state"] = from_abi_dtype(static_cast<std::int32_t>(v));
                   }};
  f.since = 3;
  return f;
}

AbiScalarField chunk_size(std::size_t offset) {
  return {"chunk_size", offset, AbiScalarField::Type::i64, [](const Problem& p) { return static_cast<double>(p.q); },
          [](Problem& p, double v) { p.q = static_cast<std::int64_t>(v); }};
}
AbiScalarField dt_softplus(std::size_t offset) {
  return {"dt_softplus", offset, AbiScalarField::Type::i32, [](const Problem& p) { return p.softplus ? 1.0 : 0.0; },
          [](Problem& p, double v) { p.softplus = v != 0; }};
}
// The clamp is absent from a problem when it is the default (0, +inf), so a call that passes the
// default reads back as a problem without `limit=`. Bound is &DtLimit::lo or &DtLimit::hi.
template <double DtLimit::*Bound>
AbiScalarField dt_limit_bound(std::string_view name, std::size_t offset) {
  return {name, offset, AbiScalarField::Type::f64, [](const Problem& p) { return p.dt_limit.value_or(DtLimit{}).*Bound; },
          [](Problem& p, double v) {
            DtLimit limit = p.dt_limit.value_or(DtLimit{});
            limit.*Bound = v;
            p.dt_limit = limit == DtLimit{} ? std::nullopt : std::optional(limit);
          }};
}
AbiScalarField dt_limit_lo(std::size_t offset) { return dt_limit_bound<&DtLimit::lo>("dt_limit_lo", offset); }
AbiScalarField dt_limit_hi(std::size_t offset) { return dt_limit_bound<&DtLimit::hi>("dt_limit_hi", offset); }
AbiScalarField causal(std::size_t offset) {
  return {"causal", offset, AbiScalarField::Type::i32, [](const Problem& p) { return p.causal ? 1.0 : 0.0; },
          [](Problem& p, double v) { p.causal = v != 0; }};
}

}  // namespace abi

}  // namespace ssd::specs
