// The POSIX helpers of every library of ours, each written once: an owning file
// descriptor, whole writes and reads that resume after a signal or a partial transfer,
// and the one way a message about a failed system call is made ("what: strerror").
//
// (cli/hook_client links nothing of ours, to start in about a millisecond: it keeps a
// few lines of its own.)
#pragma once

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>

#include "fsnap/error.hpp"

namespace fsnap {

// Owns one file descriptor (or none, -1) and closes it when it goes out of scope.
class UniqueFd {
 public:
  explicit UniqueFd(int fd = -1) : fd_(fd) {}
  ~UniqueFd() { reset(); }
  UniqueFd(UniqueFd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept {
    if (this != &other) reset(std::exchange(other.fd_, -1));
    return *this;
  }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  // Gives up the descriptor without closing it.
  int release() { return std::exchange(fd_, -1); }
  // Closes the descriptor held and holds fd instead.
  void reset(int fd = -1) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = fd;
  }

 private:
  int fd_;
};

// Writes all n bytes of data to fd: a pipe or a terminal may take them in pieces, a
// signal may interrupt a write. False, with errno set, if a write fails (ENOSPC if one
// writes nothing).
bool write_all(int fd, const void* data, std::size_t n);

// The same with pwrite, from offset on.
bool write_all_at(int fd, const void* data, std::size_t n, std::uint64_t offset);

// Reads exactly n bytes at offset with pread. False on an error (errno set) or where the
// file ends first.
bool read_all_at(int fd, void* out, std::size_t n, std::uint64_t offset);

// Appends what fd holds to out, to its end — or only until out is longer than limit (a
// file that grows while it is read is never read whole). False, with errno set, if a
// read fails.
bool read_all(int fd, std::string& out,
              std::size_t limit = std::numeric_limits<std::size_t>::max());

// "what: <strerror(err)>", how every message about a failed system call reads.
std::string errno_message(const std::string& what, int err);

// The Error saying that what failed with errno err: code, errno_message(what, err).
Error system_error(const std::string& what, int err, ErrorCode code = ErrorCode::kIo);

}  // namespace fsnap
