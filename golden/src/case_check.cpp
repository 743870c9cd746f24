// Consistency of a case with its problem: which datasets must exist, with which shapes and dtypes.
#include "case_check.h"

#include <algorithm>
#include <set>

#include "hdf5_util.h"

namespace ssd::golden_detail {

namespace {

std::string where(std::string_view group, std::string_view name) {
  return "/" + std::string(group) + "/" + std::string(name);
}

void expect_shape(std::string_view group, std::string_view name, const Shape& got, const Shape& want) {
  if (got != want)
    throw CaseError(where(group, name) + ": shape " + shape_string(got) + ", but the problem implies " +
                    shape_string(want));
}

void expect_mask_size(std::string_view group, std::string_view name, std::size_t mask, std::int64_t numel) {
  if (mask != 0 && mask != static_cast<std::size_t>(numel))
    throw CaseError(where(group, name) + ": mask of " + std::to_string(mask) + " elements for " +
                    std::to_string(numel) + " values");
}

// Every expected name is present and nothing else is.
template <class Names>
void expect_names(std::string_view group, const Names& got, const std::vector<const OutputRole*>& expected) {
  std::set<std::string> want;
  for (const OutputRole* role : expected) want.insert(role->name);
  for (const std::string& name : got)
    if (want.count(name) == 0) throw CaseError("unexpected dataset " + where(group, name) + " (not an output of the problem)");
  for (const std::string& name : want)
    if (std::find(got.begin(), got.end(), name) == got.end()) throw CaseError("missing dataset " + where(group, name));
}

const Shape& reference_shape(const Outputs& reference, const std::string& name) {
  if (!reference.has(name)) throw CaseError("the oracle produced no output '" + name + "'");
  return reference.get(name).value.shape();
}

void check_oracle_and_bounds(const CaseFile& c, const std::vector<const OutputRole*>& expected,
                             const Outputs& reference) {
  std::vector<std::string> names;
  for (const Output& o : c.oracle.all()) names.push_back(o.name);
  expect_names("oracle", names, expected);
  for (const Output& o : c.oracle.all()) {
    if (o.value.dtype() != DType::f64)
      throw CaseError(where("oracle", o.name) + ": dtype " + std::string(dtype_name(o.value.dtype())) + ", expected f64");
    expect_shape("oracle", o.name, o.value.shape(), reference_shape(reference, o.name));
    expect_mask_size("oracle", o.name + ".defined", o.defined.size(), o.value.numel());
  }
  names.clear();
  for (const OutputBound& b : c.bounds.all()) names.push_back(b.name);
  expect_names("bounds", names, expected);
  for (const OutputBound& b : c.bounds.all()) {
    if (b.bound.dtype() != DType::f64)
      throw CaseError(where("bounds", b.name) + ": dtype " + std::string(dtype_name(b.bound.dtype())) + ", expected f64");
    expect_shape("bounds", b.name, b.bound.shape(), reference_shape(reference, b.name));
    expect_mask_size("bounds", b.name + ".exact", b.exact.size(), b.bound.numel());
  }
}

}  // namespace

std::vector<const OutputRole*> produced_outputs(const Problem& p) {
  std::vector<const OutputRole*> roles;
  for (const OutputRole& role : op_spec(p.op).outputs)
    if (!role.present || role.present(p)) roles.push_back(&role);
  return roles;
}

void check_inputs(const CaseFile& c) {
  const Problem& p = c.problem;
  if (auto why = invalid_reason(p)) throw CaseError("problem '" + to_string(p) + "' is outside the contract: " + *why);
  const OpSpec& spec = op_spec(p.op);
  for (const auto& [name, tensor] : c.inputs.all()) {
    const InputRole* role = spec.input(name);
    if (role == nullptr || (role->present && !role->present(p)))
      throw CaseError("unexpected dataset " + where("inputs", name) + " (not an input of the problem)");
  }
  for (const InputRole& role : spec.inputs) {
    if (role.present && !role.present(p)) continue;
    const Tensor* t = c.inputs.find(role.name);
    if (t == nullptr) throw CaseError("missing dataset " + where("inputs", role.name));
    const DType want = role_dtype(p, role.name);
    if (t->dtype() != want)
      throw CaseError(where("inputs", role.name) + ": dtype " + std::string(dtype_name(t->dtype())) +
                      ", but the problem implies " + std::string(dtype_name(want)));
    expect_shape("inputs", role.name, t->shape(), role.shape(p));
  }
}

void check_outputs(const CaseFile& c, const Outputs& reference) {
  const std::vector<const OutputRole*> expected = produced_outputs(c.problem);
  const bool has_oracle = !c.oracle.all().empty() || !c.bounds.all().empty();
  switch (c.kind) {
    case CaseKind::golden:
      if (!c.outputs.all().empty()) throw CaseError("a golden case holds no /outputs");
      check_oracle_and_bounds(c, expected, reference);
      break;
    case CaseKind::inputs:
      if (has_oracle || !c.outputs.all().empty()) throw CaseError("an inputs case holds /inputs only");
      break;
    case CaseKind::results: {
      if (has_oracle) check_oracle_and_bounds(c, expected, reference);
      std::vector<std::string> names;
      for (const Output& o : c.outputs.all()) names.push_back(o.name);
      expect_names("outputs", names, expected);
      for (const OutputRole* role : expected) {
        const Output& o = c.outputs.get(role->name);
        const DType want = role->dtype(c.problem);
        if (o.value.dtype() != want)
          throw CaseError(where("outputs", o.name) + ": dtype " + std::string(dtype_name(o.value.dtype())) +
                          ", but the problem stores it in " + std::string(dtype_name(want)));
        // A mis-shaped output is the kernel's fault, not the file's: the file reads, and judging
        // it FAILS naming the output and both shapes (ssd::judge).
      }
      break;
    }
  }
}

}  // namespace ssd::golden_detail
