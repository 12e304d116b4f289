// The limits a HookServer's connections are held to (hooks/hook_server.hpp), in a header
// of their own because the server's connection loop (LoopbackHttpServer, private to
// hooks) is held to them too and knows nothing else of the HookServer.
#pragma once

#include <chrono>
#include <cstddef>

namespace hooks {

// How long and how much a HookServer's connections may take. Whoever connects is a
// stranger until a request line names the token.
struct HookServerLimits {
  // From a connection's start (or, kept alive, its next request's first byte) to the
  // end of the request's headers. Its body then has as long again plus a second per
  // MiB announced (a body is at most 64 MiB), and so has a reply to be written.
  std::chrono::milliseconds head_timeout{5000};
  // How long a connection that has named the token may stay open between requests.
  std::chrono::milliseconds idle_timeout{60000};
  // Connections that have not named the token: beyond this many, the oldest is closed.
  std::size_t max_strangers = 64;
};

}  // namespace hooks
