// A connection for what a well-behaved client never does — sending slowly, partly,
// nothing or too much — to a loopback port or a Unix socket, for the tests of servers
// that must not wait on one.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>

#include <boost/filesystem/path.hpp>

namespace testing_support {

class RawSocket {
 public:
  // Connects to the Unix socket at path.
  explicit RawSocket(const boost::filesystem::path& unix_socket);
  // Connects to 127.0.0.1:port.
  explicit RawSocket(std::uint16_t loopback_port);
  ~RawSocket();
  RawSocket(const RawSocket&) = delete;
  RawSocket& operator=(const RawSocket&) = delete;

  bool connected() const { return connected_; }
  // Sends all of bytes at once; false if the peer took less.
  bool send(const std::string& bytes);

  // What the peer sent: until it closed the connection (closed), until returns true for
  // what came, or wait passed.
  struct Received {
    std::string data;
    bool closed = false;
  };
  Received receive(std::chrono::milliseconds wait,
                   const std::function<bool(const std::string&)>& until = nullptr);

 private:
  int fd_;
  bool connected_ = false;
};

}  // namespace testing_support
