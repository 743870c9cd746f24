// Where +farslots puts the decode step's state slots (docs/contract.md §8.1, "Far slot ids"):
// each compact slot j of the problem at a slot id of a far larger state buffer, so that a slot
// id times the slot stride H·P·N passes 2^32 elements (vLLM #35275 computes that product in
// uint32), and the stretches of that buffer the runner fills and checks. A pure function of the
// problem and its slot tables: the oracle, the bounds and golden files never see it.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ssd/reference/problem.h"
#include "ssd/reference/tensor.h"

namespace ssd {

// The element offset a far slot starts at or beyond.
inline constexpr std::int64_t kFarSlotOffset = std::int64_t{1} << 32;

// One stretch [begin, end) of the far state's elements.
struct ElementRange {
  std::int64_t begin = 0, end = 0;
  bool operator==(const ElementRange&) const = default;
};

struct FarSlots {
  std::int64_t stride = 0;        // H·P·N: the elements of one slot
  std::int64_t first_far = 0;     // F = ceil(2^32 / stride): the lowest id whose offset passes 2^32
  std::vector<std::int64_t> ids;  // ids[j]: where compact slot j lies
  std::int64_t slots = 0;         // the far state's first extent (the largest id + 2: a poisoned slot after it)
  // What is materialised: values at the slots, poison around them. Two stretches, the low one
  // [0, (2·slots + 1)·stride) and the far one [(F − 1)·stride, slots·stride).
  std::vector<ElementRange> regions;
  // Where the offset of a far slot lands when it is truncated to 32 bits (id·stride mod 2^32 in
  // elements, and id·stride·width mod 2^32 in bytes), one slot long each: inside the low region,
  // on no slot, so poison that a flawed read takes and a flawed store changes.
  std::vector<ElementRange> landings;
  std::int64_t id(std::int64_t compact) const;  // a padding entry (negative) stays as it is
};

// The placement of compact slots 0..slots-1 for a valid +farslots problem, from its read table
// (state_batch_indices) and its write table (dst_state_batch_indices, or nullptr). The slots the
// tables name, in order of first appearance (the read table, then the write table, row-major,
// padding entries skipped), go far at even ranks (0, 2, 4, ...: the first row's slot among them)
// to ids F, F + 2, F + 4, ...; every other slot (odd ranks, slots no entry names, the padding
// slot) stays low, in compact order, at ids 2m + 1, 2m + 3, ... (m far slots), below the far ones
// and clear of where their truncated offsets land. Every slot has a poisoned slot beside it.
// `width` is the state dtype's bytes.
FarSlots far_slots(const Problem& p, const Tensor& reads, const Tensor* writes, std::size_t width);

// Why +farslots cannot hold for the problem (called by the recurrent OpSpec's invalid_reason), or nullopt.
std::optional<std::string> far_slots_reason(const Problem& p);

}  // namespace ssd
