// Pieces shared by the OpSpecs.
#include "specs.h"

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

}  // namespace ssd::specs
