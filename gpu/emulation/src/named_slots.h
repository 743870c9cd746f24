// The decode step on a state buffer too large to read whole (+farslots: 2^32 elements and more,
// 16 GiB at f32): the emulation gathers the slots the call's tables name into a compact state,
// runs the call on that, and scatters them back, touching nothing else of the buffer.
#pragma once
#include <functional>

#include "ssd/emulation/emulation.h"
#include "ssd/reference/abi_call.h"

namespace ssd {

// Whether a recurrent call's state holds 2^31 elements or more (where the emulation's dense
// copy of it, as floats and as doubles, would take 24 GiB and more).
bool holds_far_slots(const AbiArgs& call);

// Runs `body` on a copy of `call` whose state is the named slots (read and write tables, and the
// padding slot when it is a real one) in ascending order of id, its tables and pad_slot_id
// renumbered to match, then stores those slots back. Under slot_offset_uint32 a slot's element
// offset is id * H*P*N computed in uint32 (vLLM #35275), for the gather and the scatter alike.
// Throws ArgumentError naming a table whose entry is out of range, or a missing read table.
void on_named_slots(const AbiArgs& call, Flaw flaw, const std::function<void(AbiArgs&)>& body);

}  // namespace ssd
