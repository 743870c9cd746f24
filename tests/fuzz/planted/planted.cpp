// A kernel library with one planted misbehaviour (PLANTED_FLAW), for testing that the runner
// survives and names it: every op is forwarded to the honest fp32 emulation (PLANTED_EMULATION,
// opened with dlopen) and one op misbehaves. With PLANTED_DEVICE the table claims device memory
// and brings its own memory functions (host memory underneath, with every pointer and copy
// checked), so the runner's device paths (interior pointers, fills and checks through
// device_copy, sticky errors) run without a GPU.
#include <dlfcn.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <vector>

#include "ssd/kernel_abi.h"

namespace {

enum class Flaw { segv, abort_call, exit_call, hang, overrun, underrun, unwritten, input_modified, nan, undefined_skipped,
                  sticky_error };

constexpr Flaw kFlaw = Flaw::PLANTED_FLAW;

const ssd_kernel_table& honest() {
  static const ssd_kernel_table* table = [] {
    void* handle = dlopen(PLANTED_EMULATION, RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      std::fprintf(stderr, "planted: %s\n", dlerror());
      std::abort();
    }
    return reinterpret_cast<ssd_kernel_table_fn>(dlsym(handle, SSD_KERNEL_TABLE_SYMBOL))();
  }();
  return *table;
}

std::int64_t numel(const ssd_tensor& t) {
  std::int64_t n = 1;
  for (int i = 0; i < t.rank; ++i) n *= t.shape[i];
  return n;
}

std::size_t width(const ssd_tensor& t) { return t.dtype == SSD_DTYPE_F16 || t.dtype == SSD_DTYPE_BF16 ? 2 : 4; }

// A value stored at element `index` of `t` (index may lie outside it: that is the flaw).
void store(const ssd_tensor& t, std::int64_t index, float value) {
  auto* at = static_cast<std::uint8_t*>(t.data) + index * static_cast<std::int64_t>(width(t));
  std::uint32_t bits;
  std::memcpy(&bits, &value, 4);
  if (width(t) == 4) std::memcpy(at, &bits, 4);
  else {
    // bf16 keeps the top half of the f32 bits; f16 NaN and 1.0 are written as their own patterns.
    const std::uint16_t half = t.dtype == SSD_DTYPE_BF16 ? static_cast<std::uint16_t>(bits >> 16)
                               : std::isnan(value)        ? std::uint16_t{0x7E00}
                                                          : std::uint16_t{0x3C00};
    std::memcpy(at, &half, 2);
  }
}

bool g_sticky = false;  // a device error that every later call repeats, as a CUDA context does

const char* last_error() { return g_sticky ? "planted: illegal memory access (sticky)" : honest().last_error(); }

#ifdef PLANTED_DEVICE
// --- device memory of a PLANTED_DEVICE table: host blocks, every access checked ----------------

std::map<std::uintptr_t, std::size_t>& blocks() {
  static std::map<std::uintptr_t, std::size_t> live;
  return live;
}

// Inside one live block: the runner must only copy within what it allocated.
bool inside(const void* p, std::size_t n) {
  const auto a = reinterpret_cast<std::uintptr_t>(p);
  auto it = blocks().upper_bound(a);
  if (it == blocks().begin()) return false;
  --it;
  return a + n <= it->first + it->second;
}

ssd_status device_alloc(void** p, std::size_t bytes) {
  *p = std::malloc(bytes);
  if (*p == nullptr) return SSD_STATUS_RUNTIME_ERROR;
  blocks()[reinterpret_cast<std::uintptr_t>(*p)] = bytes;
  return SSD_STATUS_OK;
}

ssd_status device_free(void* p) {
  if (blocks().erase(reinterpret_cast<std::uintptr_t>(p)) != 1) {
    std::fprintf(stderr, "planted: device_free of a pointer that is not a block\n");
    std::abort();
  }
  std::free(p);
  return SSD_STATUS_OK;
}

ssd_status device_copy(void* dst, const void* src, std::size_t n, int32_t to_host) {
  if (g_sticky) return SSD_STATUS_RUNTIME_ERROR;
  if (!inside(to_host ? src : dst, n)) {
    std::fprintf(stderr, "planted: device_copy outside a block\n");
    std::abort();
  }
  std::memcpy(dst, src, n);
  return SSD_STATUS_OK;
}

ssd_status device_synchronize() { return g_sticky ? SSD_STATUS_RUNTIME_ERROR : SSD_STATUS_OK; }
#endif

// --- the ops ----------------------------------------------------------------------------------

ssd_status chunk_cumsum(const ssd_chunk_cumsum_args* a) {
  if (g_sticky) return SSD_STATUS_RUNTIME_ERROR;
  switch (kFlaw) {
    case Flaw::segv: {
      volatile int* volatile nowhere = nullptr;  // volatile twice: a real store to address 0, never optimised away
      *nowhere = 1;
      break;
    }
    case Flaw::abort_call: std::abort();
    case Flaw::exit_call: _exit(0);
    case Flaw::hang: {
      volatile bool spinning = true;
      while (spinning) {
      }
      break;
    }
    case Flaw::sticky_error: g_sticky = true; return SSD_STATUS_RUNTIME_ERROR;
    case Flaw::unwritten: {
      // Computes everything, then puts back what dt_out held in the padded tail of the last
      // chunk: a kernel that never stores the tail's zeros.
      const std::int64_t q = a->chunk_size, s = a->dt.shape[1];
      const std::int64_t bt = a->dt_out.shape[0], h = a->dt_out.shape[1], nc = a->dt_out.shape[2];
      const std::int64_t valid = s - (nc - 1) * q;  // positions of the last chunk that hold tokens
      std::vector<float> before(static_cast<std::size_t>(numel(a->dt_out)));
      std::memcpy(before.data(), a->dt_out.data, before.size() * 4);
      const ssd_status status = honest().chunk_cumsum(a);
      auto* out = static_cast<float*>(a->dt_out.data);
      for (std::int64_t b = 0; b < bt; ++b)
        for (std::int64_t hh = 0; hh < h; ++hh)
          for (std::int64_t l = valid; l < q; ++l) {
            const std::int64_t i = ((b * h + hh) * nc + (nc - 1)) * q + l;
            out[i] = before[static_cast<std::size_t>(i)];
          }
      return status;
    }
    default: break;
  }
  return honest().chunk_cumsum(a);
}

ssd_status chunk_coupling(const ssd_chunk_coupling_args* a) {
  if (kFlaw == Flaw::undefined_skipped && a->causal) {
    // Leaves the upper triangle of every causal Q x Q block as it found it: the contract leaves
    // those elements undefined, so this is no bug.
    std::vector<std::uint8_t> before(static_cast<std::size_t>(numel(a->CB)) * width(a->CB));
    std::memcpy(before.data(), a->CB.data, before.size());
    const ssd_status status = honest().chunk_coupling(a);
    const std::int64_t q = a->CB.shape[4], blocks_ = numel(a->CB) / (q * q);
    const std::size_t w = width(a->CB);
    for (std::int64_t blk = 0; blk < blocks_; ++blk)
      for (std::int64_t i = 0; i < q; ++i)
        for (std::int64_t k = i + 1; k < q; ++k) {
          const std::size_t at = static_cast<std::size_t>((blk * q + i) * q + k) * w;
          std::memcpy(static_cast<std::uint8_t*>(a->CB.data) + at, before.data() + at, w);
        }
    return status;
  }
  const ssd_status status = honest().chunk_coupling(a);
  if (kFlaw == Flaw::nan && status == SSD_STATUS_OK && numel(a->CB) > 0) store(a->CB, 0, NAN);
  return status;
}

ssd_status chunk_state(const ssd_chunk_state_args* a) {
  const ssd_status status = honest().chunk_state(a);
  // Uses x as scratch space: its second element loses its sign bit pattern.
  if (kFlaw == Flaw::input_modified && numel(a->x) > 1)
    static_cast<std::uint8_t*>(a->x.data)[2 * width(a->x) - 1] ^= 0x80;
  return status;
}

ssd_status state_passing(const ssd_state_passing_args* a) {
  const ssd_status status = honest().state_passing(a);
  if (kFlaw == Flaw::overrun) store(a->out, numel(a->out), 1.0f);  // one element past the end
  if (kFlaw == Flaw::underrun) store(a->final_states, -1, 1.0f);   // one element before the start
  return status;
}

}  // namespace

extern "C" __attribute__((visibility("default"))) const ssd_kernel_table* ssd_get_kernel_table(void) {
  static const ssd_kernel_table table = [] {
    ssd_kernel_table t = honest();
    t.name = "planted-" PLANTED_NAME;
    t.chunk_cumsum = chunk_cumsum;
    t.chunk_coupling = chunk_coupling;
    t.chunk_state = chunk_state;
    t.state_passing = state_passing;
    t.last_error = last_error;
#ifdef PLANTED_DEVICE
    t.memory_kind = SSD_MEMORY_CUDA;
    t.device_alloc = device_alloc;
    t.device_free = device_free;
    t.device_copy = device_copy;
    t.device_synchronize = device_synchronize;
#endif
    return t;
  }();
  return &table;
}
