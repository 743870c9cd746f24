// One variant of the fp32 emulation as a kernel library: SSD_EMULATION_ORDER (sequential or
// blocked), SSD_EMULATION_FLAW (none, or a planted bug) and SSD_EMULATION_DOTS (ieee or tf32, how
// f32 operands enter dot products) are fixed when the library is built,
// so each variant is a shared object of its own, loaded from outside like any user's library.
#include <string>

#include "table.h"

extern "C" __attribute__((visibility("default"))) const ssd_kernel_table* ssd_get_kernel_table(void) {
  static const std::string name = SSD_EMULATION_NAME;
  static const ssd_kernel_table table = ssd::emulation_table(
      {std::string(SSD_EMULATION_ORDER) == "blocked" ? ssd::SumOrder::blocked : ssd::SumOrder::sequential,
       ssd::parse_flaw(SSD_EMULATION_FLAW), std::string(SSD_EMULATION_DOTS) == "tf32"},
      name.c_str());
  return &table;
}
