// Encoding and framing of the runner-worker messages.
#include "wire.h"

#include <poll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace ssd::wire {
namespace {

class Writer {
 public:
  void u64(std::uint64_t v) { put(&v, sizeof v); }
  void str(const std::string& s) {
    u64(s.size());
    put(s.data(), s.size());
  }
  void bytes(const std::vector<std::uint8_t>& b) {
    u64(b.size());
    put(b.data(), b.size());
  }
  void tensors(const std::vector<RawTensor>& list) {
    std::size_t total = 0;
    for (const RawTensor& t : list) total += t.bytes.size() + t.name.size() + 128;
    out_.reserve(out_.size() + total + 64);  // one allocation for the message, not one per doubling
    u64(list.size());
    for (const RawTensor& t : list) {
      str(t.name);
      u64(static_cast<std::uint64_t>(t.dtype));
      u64(t.shape.size());
      for (std::int64_t d : t.shape) u64(static_cast<std::uint64_t>(d));
      bytes(t.bytes);
    }
  }
  // The frame: its length in the first 8 bytes, reserved by the constructor.
  std::vector<std::uint8_t> take() {
    const std::uint64_t n = out_.size() - sizeof n;
    std::memcpy(out_.data(), &n, sizeof n);
    return std::move(out_);
  }

 private:
  void put(const void* p, std::size_t n) {
    const auto* c = static_cast<const std::uint8_t*>(p);
    out_.insert(out_.end(), c, c + n);
  }
  std::vector<std::uint8_t> out_ = std::vector<std::uint8_t>(sizeof(std::uint64_t));
};

class Reader {
 public:
  explicit Reader(const std::vector<std::uint8_t>& in) : in_(in) {}
  std::uint64_t u64() {
    std::uint64_t v;
    get(&v, sizeof v);
    return v;
  }
  std::string str() {
    const std::size_t n = size();
    std::string s(n, '\0');
    get(s.data(), n);
    return s;
  }
  std::vector<std::uint8_t> bytes() {
    const std::size_t n = size();
    std::vector<std::uint8_t> b(n);
    get(b.data(), n);
    return b;
  }
  std::vector<RawTensor> tensors() {
    std::vector<RawTensor> list(size_bounded(1 << 20));
    for (RawTensor& t : list) {
      t.name = str();
      const std::uint64_t dtype = u64();
      if (dtype > static_cast<std::uint64_t>(DType::i32)) throw std::runtime_error("worker message with dtype " + std::to_string(dtype));
      t.dtype = static_cast<DType>(dtype);
      t.shape.resize(size_bounded(16));
      for (std::int64_t& d : t.shape) d = static_cast<std::int64_t>(u64());
      t.bytes = bytes();
    }
    return list;
  }

  std::size_t size_bounded(std::uint64_t limit) {
    const std::uint64_t n = u64();
    if (n > limit) throw std::runtime_error("worker message with a count of " + std::to_string(n));
    return static_cast<std::size_t>(n);
  }

 private:
  std::size_t size() {
    const std::uint64_t n = u64();
    if (n > in_.size() - at_) throw std::runtime_error("worker message truncated");
    return static_cast<std::size_t>(n);
  }
  void get(void* p, std::size_t n) {
    if (n > in_.size() - at_) throw std::runtime_error("worker message truncated");
    std::memcpy(p, in_.data() + at_, n);
    at_ += n;
  }
  const std::vector<std::uint8_t>& in_;
  std::size_t at_ = 0;
};

// Writes every byte, retrying on EINTR and short transfers. The runner's end is
// non-blocking: a read tries first and waits in poll (with the deadline) only when nothing is
// there, which spares a system call per message when the worker has already answered. While
// there is no room, what the peer sends goes into `incoming` (when given).
bool write_all(int fd, const std::uint8_t* p, std::size_t n, FrameReader* incoming) {
  while (n > 0) {
    const ssize_t k = send(fd, p, n, MSG_NOSIGNAL);
    if (k > 0) {
      p += k;
      n -= static_cast<std::size_t>(k);
      continue;
    }
    if (k < 0 && errno == EINTR) continue;
    if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      pollfd pfd{fd, static_cast<short>(POLLOUT | (incoming ? POLLIN : 0)), 0};
      poll(&pfd, 1, -1);
      if (incoming && (pfd.revents & POLLIN) && !incoming->drain()) return false;
      continue;
    }
    return false;
  }
  return true;
}

}  // namespace

std::int64_t now_ms() {
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<std::int64_t>(t.tv_sec) * 1000 + t.tv_nsec / 1000000;
}

std::vector<std::uint8_t> encode(const Hello& m) {
  Writer w;
  w.u64(m.ok ? 1 : 0);
  w.str(m.message);
  return w.take();
}

std::vector<std::uint8_t> encode(const Request& m) {
  Writer w;
  w.u64(m.sequence);
  w.str(m.problem);
  w.tensors(m.inputs);
  return w.take();
}

std::vector<std::uint8_t> encode(const Reply& m) {
  Writer w;
  w.u64(m.sequence);
  w.str(m.harness_error);
  w.u64(static_cast<std::uint64_t>(m.record.status));
  w.str(m.record.message);
  w.tensors(m.record.outputs);
  w.u64(m.record.damage.size());
  for (const std::string& d : m.record.damage) w.str(d);
  w.u64(m.record.device_error ? 1 : 0);
  w.u64(m.retiring ? 1 : 0);
  return w.take();
}

Hello decode_hello(const std::vector<std::uint8_t>& payload) {
  Reader r(payload);
  Hello m;
  m.ok = r.u64() != 0;
  m.message = r.str();
  return m;
}

Request decode_request(const std::vector<std::uint8_t>& payload) {
  Reader r(payload);
  Request m;
  m.sequence = r.u64();
  m.problem = r.str();
  m.inputs = r.tensors();
  return m;
}

Reply decode_reply(const std::vector<std::uint8_t>& payload) {
  Reader r(payload);
  Reply m;
  m.sequence = r.u64();
  m.harness_error = r.str();
  const std::uint64_t status = r.u64();
  if (status > static_cast<std::uint64_t>(CallStatus::error)) throw std::runtime_error("worker sent an unknown status");
  m.record.status = static_cast<CallStatus>(status);
  m.record.message = r.str();
  m.record.outputs = r.tensors();
  m.record.damage.resize(r.size_bounded(1 << 20));
  for (std::string& d : m.record.damage) d = r.str();
  m.record.device_error = r.u64() != 0;
  m.retiring = r.u64() != 0;
  return m;
}

bool write_frame(int fd, const std::vector<std::uint8_t>& frame, FrameReader* incoming) {
  return write_all(fd, frame.data(), frame.size(), incoming);
}

ReadOutcome FrameReader::read(std::int64_t deadline_ms, std::vector<std::uint8_t>& payload) {
  for (;;) {
    const std::size_t have = end_ - begin_;
    std::uint64_t n = 0;
    if (have >= sizeof n) {
      std::memcpy(&n, data_.get() + begin_, sizeof n);
      if (n > (std::uint64_t{1} << 40)) throw std::runtime_error("worker frame of " + std::to_string(n) + " bytes");
      if (have >= sizeof n + n) {
        const std::uint8_t* at = data_.get() + begin_ + sizeof n;
        payload.assign(at, at + n);
        begin_ += sizeof n + n;
        if (begin_ == end_) begin_ = end_ = 0;
        return ReadOutcome::frame;
      }
    }
    // Wait for more (a blocking descriptor waits in read itself; a non-blocking one tries first,
    // since the worker has often answered already), then take all that is there.
    if (deadline_ms >= 0 && !tried_) {
      tried_ = true;
    } else if (deadline_ms >= 0) {
      tried_ = false;
      pollfd pfd{fd_, POLLIN, 0};
      const std::int64_t left = std::max<std::int64_t>(0, deadline_ms - now_ms());
      const int ready = poll(&pfd, 1, static_cast<int>(std::min<std::int64_t>(left, 1 << 30)));
      if (ready < 0 && errno == EINTR) continue;
      if (ready < 0) return ReadOutcome::eof;
      if (ready == 0) return ReadOutcome::timeout;
    }
    if (pull() == Pull::eof) return ReadOutcome::eof;
  }
}

bool FrameReader::drain() {
  for (;;) {
    switch (pull()) {
      case Pull::data: continue;
      case Pull::none: return true;
      case Pull::eof: return false;
    }
  }
}

FrameReader::Pull FrameReader::pull() {
  const std::size_t have = end_ - begin_;
  std::uint64_t n = 0;
  if (have >= sizeof n) std::memcpy(&n, data_.get() + begin_, sizeof n);
  const std::size_t frame = have >= sizeof n ? sizeof n + n : sizeof n;
  const std::size_t room = std::max<std::size_t>(std::size_t{1} << 16, frame > have ? frame - have : 0);
  if (begin_ > 0) {
    std::memmove(data_.get(), data_.get() + begin_, have);
    begin_ = 0;
    end_ = have;
  }
  if (capacity_ < end_ + room) {
    std::unique_ptr<std::uint8_t[]> grown(new std::uint8_t[end_ + room]);
    if (end_ > 0) std::memcpy(grown.get(), data_.get(), end_);
    data_ = std::move(grown);
    capacity_ = end_ + room;
  }
  const ssize_t k = ::read(fd_, data_.get() + end_, capacity_ - end_);
  if (k > 0) {
    end_ += static_cast<std::size_t>(k);
    tried_ = false;
    return Pull::data;
  }
  if (k == 0) return Pull::eof;
  if (errno != EINTR && errno != EAGAIN && errno != EWOULDBLOCK) return Pull::eof;
  return Pull::none;
}

}  // namespace ssd::wire
