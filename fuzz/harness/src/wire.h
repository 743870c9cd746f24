// The messages between the runner and its worker process, and their framing on a stream socket:
// an 8-byte length, then the payload, written with one send. The worker announces itself once (Hello), then answers each
// Request with a Reply carrying the request's sequence number.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ssd/harness/call_record.h"

namespace ssd::wire {

struct Hello {
  bool ok = true;
  std::string message;  // why the library could not be opened
};

// The case as its problem string (op, sizes, flags) and its inputs already encoded: the runner
// builds them anyway for the oracle, and a worker that rebuilt them from the string would spend
// as long again on every case.
struct Request {
  std::uint64_t sequence = 0;
  std::string problem;
  std::vector<RawTensor> inputs;
};

struct Reply {
  std::uint64_t sequence = 0;
  std::string harness_error;  // non-empty: the runner itself failed (not the kernel)
  CallRecord record;
  bool retiring = false;      // the worker exits after this reply (device error)
};

// Each message as a whole frame, length included, for write_frame.
std::vector<std::uint8_t> encode(const Hello& m);
std::vector<std::uint8_t> encode(const Request& m);
std::vector<std::uint8_t> encode(const Reply& m);
// From a frame's payload (what FrameReader::read returns); each throws std::runtime_error when malformed.
Hello decode_hello(const std::vector<std::uint8_t>& payload);
Request decode_request(const std::vector<std::uint8_t>& payload);
Reply decode_reply(const std::vector<std::uint8_t>& payload);

class FrameReader;
// Writes one frame; false when the peer is gone. Never raises SIGPIPE. With `incoming` (the reader
// of the same non-blocking connection), whatever the peer sends while this waits for room is
// taken into it: a runner queueing a request while the worker writes a large reply would
// otherwise wait on the worker while the worker waits on it.
bool write_frame(int fd, const std::vector<std::uint8_t>& frame, FrameReader* incoming = nullptr);
// Reads frames from one connection. It reads whatever has arrived in one system call and keeps
// the rest for the next frame: a case costs each side a single read, not one per header and body.
enum class ReadOutcome { frame, eof, timeout };
class FrameReader {
 public:
  explicit FrameReader(int fd = -1) : fd_(fd) {}
  // Waits at most until `deadline_ms` (CLOCK_MONOTONIC milliseconds; negative = no limit; a
  // limit needs a non-blocking descriptor). Outcome: a payload, the peer closed (eof), or the
  // time ran out.
  ReadOutcome read(std::int64_t deadline_ms, std::vector<std::uint8_t>& payload);
  // Takes in whatever has arrived, without waiting (a non-blocking descriptor); false once the
  // peer has closed. read() returns it frame by frame.
  bool drain();

 private:
  enum class Pull { data, none, eof };
  Pull pull();  // one read(2) into the buffer, room made for the frame under way
  int fd_;
  // Unread bytes are data_[begin_, end_). Not a vector: growing one zero-fills it, and that
  // showed up in every case's profile.
  std::unique_ptr<std::uint8_t[]> data_;
  std::size_t capacity_ = 0, begin_ = 0, end_ = 0;
  bool tried_ = false;  // the last read found nothing: wait in poll before the next
};
std::int64_t now_ms();

}  // namespace ssd::wire
