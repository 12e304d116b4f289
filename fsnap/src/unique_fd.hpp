// UniqueFd — a file descriptor closed when it goes out of scope — and opening a
// directory below another without following any symlink on the way. Private to fsnap.
#pragma once

#include <unistd.h>

#include <string>
#include <utility>

namespace fsnap {

// Owns one file descriptor (or none, -1) and closes it.
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

// Opens the directory rel ("a/b", '/'-separated; "" is dirfd itself) below dirfd one
// component at a time with O_NOFOLLOW, so that no symlink along the way is followed.
// Returns -1 with errno set: ELOOP or ENOTDIR where a component is not a directory,
// EINVAL for an empty, "." or ".." component.
int open_directory_beneath(int dirfd, const std::string& rel);

}  // namespace fsnap
