// A planted-bug kernel library: the fp32 emulation with one flaw (SSD_MUTANT_FLAW), exported
// through the kernel ABI like any user's library, so the suite must catch it from outside.
#include "ssd/emulation_table.h"

extern "C" __attribute__((visibility("default"))) const ssd_kernel_table* ssd_get_kernel_table(void) {
  return ssd::emulation_table({ssd::SumOrder::sequential, ssd::parse_flaw(SSD_MUTANT_FLAW)});
}
