// ssd-kernel-worker: the process a kernel library runs in when the runner isolates it. Opens the
// library, says hello, then for each request (a problem string and its encoded inputs) makes one
// guarded call (buffers reused across cases) and replies with the call record. Exits when
// the runner closes the connection, or after a device error (CUDA errors are sticky).
//   ssd-kernel-worker --fd N --kernels FILE
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "ssd/harness/kernel_library.h"
#include "ssd/harness/memory_pool.h"
#include "ssd/harness/runner.h"
#include "wire.h"

namespace {

int usage() {
  std::fprintf(stderr, "usage: ssd-kernel-worker --fd N --kernels FILE (started by the ssd runner, not by hand)\n");
  return 2;
}

ssd::wire::Reply answer(const ssd::KernelLibrary& library, ssd::MemoryPool& pool, ssd::wire::Request request) {
  ssd::wire::Reply reply;
  reply.sequence = request.sequence;
  const bool device = library.table().memory_kind != SSD_MEMORY_HOST;
  try {
    const ssd::Problem p = ssd::parse_problem(request.problem);
    reply.record = ssd::record_call(library, p, std::move(request.inputs), &pool);
    reply.retiring = reply.record.device_error;
  } catch (const std::exception& e) {
    reply.harness_error = e.what();
    reply.retiring = device;  // a failed device copy or allocation may be a sticky error too
  }
  return reply;
}

}  // namespace

int main(int argc, char** argv) {
  int fd = -1;
  std::string file;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--fd") == 0) fd = std::atoi(argv[i + 1]);
    else if (std::strcmp(argv[i], "--kernels") == 0) file = argv[i + 1];
    else return usage();
  }
  if (fd < 0 || file.empty()) return usage();

  std::unique_ptr<ssd::KernelLibrary> library;
  ssd::wire::Hello hello;
  try {
    library = std::make_unique<ssd::KernelLibrary>(ssd::KernelLibrary::open(file));
  } catch (const std::exception& e) {
    hello.ok = false;
    hello.message = e.what();
  }
  std::unique_ptr<ssd::MemoryPool> pool;
  if (hello.ok) {
    pool = std::make_unique<ssd::MemoryPool>(library->table());
    // A device library creates its context on the first allocation: do it before saying hello,
    // so that the seconds it takes are not charged to the first case's time limit.
    try {
      if (pool->device()) pool->release(pool->acquire(1));
    } catch (const std::exception& e) {
      hello.ok = false;
      hello.message = e.what();
    }
  }
  if (!ssd::wire::write_frame(fd, ssd::wire::encode(hello)) || !hello.ok) return hello.ok ? 0 : 3;

  std::vector<std::uint8_t> payload;
  ssd::wire::FrameReader reader(fd);
  while (reader.read(-1, payload) == ssd::wire::ReadOutcome::frame) {
    const ssd::wire::Reply reply = answer(*library, *pool, ssd::wire::decode_request(payload));
    if (!ssd::wire::write_frame(fd, ssd::wire::encode(reply)) || reply.retiring) break;
  }
  // Quit without running the library's destructors: after a device error they may hang, and
  // the runner is waiting for this process to go.
  std::fflush(nullptr);
  std::_Exit(0);
}
