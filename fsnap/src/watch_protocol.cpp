#include "watch_protocol.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>

#include "fsnap/error.hpp"

namespace fsnap::watch_wire {

namespace {

// Waits until fd is ready for events; false on a timeout or an error.
bool wait_for(int fd, short events, int timeout_ms) {
  pollfd p{fd, events, 0};
  for (;;) {
    int n = ::poll(&p, 1, timeout_ms);
    if (n < 0 && errno == EINTR) continue;
    return n > 0;
  }
}

bool read_exact(int fd, char* out, std::size_t n, int timeout_ms) {
  while (n > 0) {
    if (!wait_for(fd, POLLIN, timeout_ms)) return false;
    ssize_t got = ::recv(fd, out, n, 0);
    if (got < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (got <= 0) return false;
    out += got;
    n -= static_cast<std::size_t>(got);
  }
  return true;
}

// The address of path, or through /proc/self/fd/<dir_fd> when path is too long (the
// caller keeps dir_fd open while using the address).
bool address_of(const boost::filesystem::path& path, sockaddr_un& addr, int& dir_fd) {
  std::memset(&addr, 0, sizeof addr);
  addr.sun_family = AF_UNIX;
  std::string name = path.string();
  if (name.size() >= sizeof addr.sun_path) {
    dir_fd = ::open(path.parent_path().c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (dir_fd < 0) return false;
    name = "/proc/self/fd/" + std::to_string(dir_fd) + "/" + path.filename().string();
    if (name.size() >= sizeof addr.sun_path) {
      errno = ENAMETOOLONG;
      return false;
    }
  }
  std::memcpy(addr.sun_path, name.data(), name.size());
  return true;
}

// Closes a descriptor on scope exit (if any), keeping errno.
struct CloseOnExit {
  int fd = -1;
  ~CloseOnExit() {
    if (fd >= 0) {
      int saved = errno;
      ::close(fd);
      errno = saved;
    }
  }
};

}  // namespace

FrameWriter& FrameWriter::u8(std::uint8_t v) {
  buf_.push_back(static_cast<char>(v));
  return *this;
}

FrameWriter& FrameWriter::u32(std::uint32_t v) {
  for (int i = 0; i < 4; ++i) buf_.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  return *this;
}

FrameWriter& FrameWriter::u64(std::uint64_t v) {
  for (int i = 0; i < 8; ++i) buf_.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  return *this;
}

FrameWriter& FrameWriter::str(std::string_view v) {
  u32(static_cast<std::uint32_t>(v.size()));
  buf_.append(v);
  return *this;
}

std::string_view FrameReader::take(std::size_t n) {
  if (data_.size() < n) throw Error(ErrorCode::kCorrupt, "watch daemon: truncated message");
  std::string_view out = data_.substr(0, n);
  data_.remove_prefix(n);
  return out;
}

std::uint8_t FrameReader::u8() {
  return static_cast<std::uint8_t>(take(1)[0]);
}

std::uint32_t FrameReader::u32() {
  std::string_view b = take(4);
  std::uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | static_cast<std::uint8_t>(b[i]);
  return v;
}

std::uint64_t FrameReader::u64() {
  std::string_view b = take(8);
  std::uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<std::uint8_t>(b[i]);
  return v;
}

std::string FrameReader::str() {
  std::uint32_t n = u32();
  return std::string(take(n));
}

void put_options(FrameWriter& w, const CaptureOptions& options) {
  w.u32(static_cast<std::uint32_t>(options.excludes.size()));
  for (const std::string& e : options.excludes) w.str(e);
  w.u64(options.max_file_size);
  w.u8(options.respect_gitignore ? 1 : 0);
}

CaptureOptions get_options(FrameReader& r) {
  CaptureOptions options;
  std::uint32_t n = r.u32();
  for (std::uint32_t i = 0; i < n; ++i) options.excludes.push_back(r.str());
  options.max_file_size = r.u64();
  options.respect_gitignore = r.u8() != 0;
  return options;
}

bool same_capture(const CaptureOptions& a, const CaptureOptions& b) {
  return a.excludes == b.excludes && a.max_file_size == b.max_file_size &&
         a.respect_gitignore == b.respect_gitignore;
}

bool send_frame(int fd, std::string_view payload, int timeout_ms) {
  FrameWriter header;
  header.u32(static_cast<std::uint32_t>(payload.size()));
  std::string out = header.bytes();
  out.append(payload);
  auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  std::size_t done = 0;
  while (done < out.size()) {
    ssize_t n = ::send(fd, out.data() + done, out.size() - done, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) {
      auto left =
          std::chrono::ceil<std::chrono::milliseconds>(until - std::chrono::steady_clock::now());
      if (left.count() <= 0 || !wait_for(fd, POLLOUT, static_cast<int>(left.count()))) {
        return false;
      }
      continue;
    }
    if (n <= 0) return false;
    done += static_cast<std::size_t>(n);
  }
  return true;
}

bool receive_frame(int fd, std::string& payload, int timeout_ms) {
  char header[4];
  if (!read_exact(fd, header, sizeof header, timeout_ms)) return false;
  std::uint32_t size = FrameReader(std::string_view(header, 4)).u32();
  if (size > kMaxFrame) return false;
  payload.resize(size);
  return read_exact(fd, payload.data(), size, timeout_ms);
}

FrameReceiver::Result FrameReceiver::read_from(int fd) {
  for (;;) {
    char chunk[64 << 10];
    std::size_t want =
        header_got_ < 4 ? 4 - header_got_ : std::min(sizeof chunk, size_ - payload_.size());
    if (header_got_ == 4 && want == 0) return Result::kDone;
    ssize_t n = ::recv(fd, header_got_ < 4 ? header_ + header_got_ : chunk, want, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return Result::kMore;
    if (n <= 0) return Result::kClosed;
    if (header_got_ < 4) {
      header_got_ += static_cast<std::size_t>(n);
      if (header_got_ < 4) continue;
      size_ = FrameReader(std::string_view(header_, 4)).u32();
      if (size_ > max_) return Result::kTooLarge;
    } else {
      // Grows with what has come, never to what was announced before it has.
      payload_.append(chunk, static_cast<std::size_t>(n));
    }
  }
}

int connect_socket(const boost::filesystem::path& path) {
  sockaddr_un addr;
  CloseOnExit dir;
  if (!address_of(path, addr, dir.fd)) return -1;
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
    int err = errno;
    ::close(fd);
    errno = err;
    return -1;
  }
  return fd;
}

int listen_socket(const boost::filesystem::path& path) {
  sockaddr_un addr;
  CloseOnExit dir;
  if (!address_of(path, addr, dir.fd)) return -1;
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  mode_t old = ::umask(0177);
  int bound = ::bind(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr);
  int err = errno;
  ::umask(old);
  if (bound != 0 || ::chmod(path.c_str(), 0600) != 0 || ::listen(fd, 16) != 0) {
    if (bound == 0) err = errno;
    ::close(fd);
    errno = err;
    return -1;
  }
  return fd;
}

}  // namespace fsnap::watch_wire
