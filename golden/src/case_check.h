// Internal to ssd_golden: whether a case holds exactly what its problem implies (shared by the
// writer, which refuses inconsistent cases, and the reader, which reports inconsistent files).
#pragma once
#include "ssd/golden/case_file.h"

namespace ssd::golden_detail {

// The problem is valid and /inputs holds exactly the input roles present in it, each with the
// role's shape and dtype. Throws CaseError naming the dataset.
void check_inputs(const CaseFile& c);

// The output groups the kind requires are there and hold exactly the outputs the problem
// produces: /oracle float64 and /bounds with `reference`'s shapes (an oracle evaluation on the
// inputs), /outputs in each output's storage dtype with those shapes; masks as long as their
// output. Throws CaseError naming the dataset.
void check_outputs(const CaseFile& c, const Outputs& reference);

// The outputs a problem produces, in the OpSpec's order.
std::vector<const OutputRole*> produced_outputs(const Problem& p);

}  // namespace ssd::golden_detail
