// The README's "Using the oracle" example, built against the installed package: it prints the
// output names and shapes, and the element count of the defined mask of out.
#include <cstdio>

#include "ssd/reference/op_spec.h"

int main() {
  ssd::Problem p = ssd::parse_problem("chunk_scan:bf16 b2 s1000 h8 p64 g2 n128 q256 +D +z seq=rand seed=7");
  ssd::InputSet in = ssd::make_inputs(p);                 // deterministic from the string
  ssd::Outputs want = ssd::op_spec(p.op).chunked(p, in);  // float64, with the "defined" mask
  for (const ssd::Output& o : want.all()) std::printf("%s %s\n", o.name.c_str(), ssd::shape_string(o.value.shape()).c_str());
  return 0;
}
