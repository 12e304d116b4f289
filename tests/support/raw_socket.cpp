#include "raw_socket.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

namespace testing_support {

RawSocket::RawSocket(const boost::filesystem::path& unix_socket)
    : fd_(::socket(AF_UNIX, SOCK_STREAM, 0)) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, unix_socket.c_str(), sizeof addr.sun_path - 1);
  connected_ = ::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
}

RawSocket::RawSocket(std::uint16_t loopback_port) : fd_(::socket(AF_INET, SOCK_STREAM, 0)) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(loopback_port);
  connected_ = ::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
}

RawSocket::~RawSocket() {
  ::close(fd_);
}

bool RawSocket::send(const std::string& bytes) {
  return ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL) ==
         static_cast<ssize_t>(bytes.size());
}

RawSocket::Received RawSocket::receive(std::chrono::milliseconds wait,
                                       const std::function<bool(const std::string&)>& until) {
  using Clock = std::chrono::steady_clock;
  Received r;
  for (auto end = Clock::now() + wait; !until || !until(r.data);) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(end - Clock::now()).count();
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(std::max<long long>(left, 0))) <= 0) break;
    char buf[4096];
    ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
    if (n <= 0) {
      r.closed = true;
      break;
    }
    r.data.append(buf, static_cast<std::size_t>(n));
  }
  return r;
}

}  // namespace testing_support
