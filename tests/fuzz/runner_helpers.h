// Helpers the runner's tests share: one case checked in process, and the view buffer of one layout
// buffer filled with a problem's inputs.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "ssd/harness/case_checker.h"
#include "ssd/harness/kernel_library.h"
#include "ssd/harness/view_buffer.h"
#include "ssd/reference/abi_views.h"
#include "ssd/reference/layout.h"

namespace ssd_test {

// `problem` checked against `library` in this process, with or without the invariance relations.
inline ssd::CaseJudgement check_in_process(const char* library, const std::string& problem, bool invariance = true) {
  const auto lib = ssd::KernelLibrary::open(library);
  ssd::CaseChecker checker(lib, ssd::CheckOptions{ssd::Isolation::none, std::nullopt, invariance});
  return checker.check(ssd::parse_problem(problem));
}

// The layout buffer `name` of problem `p` holding its views of `raw` (null when p has no such buffer).
inline std::unique_ptr<ssd::ViewBuffer> view_buffer_of(ssd::MemoryPool& pool, const ssd::Problem& p,
                                                       const std::vector<ssd::RawTensor>& raw, const std::string& name) {
  const ssd::InputLayout layout = ssd::input_layout(p);
  std::vector<ssd::Placement> views;
  std::vector<const ssd::RawTensor*> contents;
  for (const ssd::Placement& v : layout.placements)
    if (v.buffer == name)
      for (const ssd::RawTensor& t : raw)
        if (t.name == v.role) views.push_back(v), contents.push_back(&t);
  for (const ssd::LayoutBuffer& b : layout.buffers)
    if (b.name == name) return std::make_unique<ssd::ViewBuffer>(pool, b, views, contents);
  return nullptr;
}

}  // namespace ssd_test
