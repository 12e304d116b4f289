// LoopbackHttpServer — the connections of a HookServer. One thread accepts and reads
// every connection as its bytes come (poll, non-blocking sockets), each request within
// its deadline, and hands each complete request to whoever answers it; the answer is
// written back the same way. So a connection that sends slowly, or nothing, or does
// not read its reply, costs a descriptor until its deadline, never a thread: no client
// can delay another's request.
//
// A request line must name one of the server's paths (compared in constant time) or
// the connection is answered 404 and closed before anything after the line is read.
// Only POST is served. Private to hooks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "hooks/agent_hook.hpp"
#include "hooks/hook_server_limits.hpp"

namespace hooks {

// A complete request, for whoever answers it.
struct HttpRequestIn {
  std::uint64_t connection = 0;
  int fd = -1;           // the connection's, left alone by the server until reply()
  std::size_t path = 0;  // index of the path it was sent to
  std::string content_type;
  std::string body;
  bool keep_alive = false;
};

// A loopback HTTP server for a few fixed paths.
class LoopbackHttpServer {
 public:
  // Receives each complete request, on the server's thread: it must not block.
  using Dispatch = std::function<void(HttpRequestIn request)>;

  // Listens on 127.0.0.1, on a port the system picks, for POSTs to paths; connections
  // wait until start(). Error kIo if it cannot.
  LoopbackHttpServer(std::vector<std::string> paths, HookServerLimits limits, Dispatch dispatch);
  // Stops (as stop() does).
  ~LoopbackHttpServer();
  LoopbackHttpServer(const LoopbackHttpServer&) = delete;
  LoopbackHttpServer& operator=(const LoopbackHttpServer&) = delete;

  int port() const;
  // Starts the server's thread.
  void start();
  // Answers request (each one once, from any thread, before stop()): as much of the
  // reply as the connection takes at once is sent before this returns, the rest by
  // the server's thread.
  void reply(const HttpRequestIn& request, const HttpHookReply& reply);
  // Closes the socket and every connection, requests waiting for an answer included,
  // and waits for the server's thread. Idempotent.
  void stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace hooks
