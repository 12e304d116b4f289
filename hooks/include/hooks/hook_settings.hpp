// HookSettings — how the agent hooks reach shadowbox (config hooks.*).
// Thread-safety: a plain value.
#pragma once

#include <string>

namespace hooks {

// hooks.*: how the agent hooks reach shadowbox. (What becomes of failed calls is
// Config::rollback, rollback.*.)
struct HookSettings {
  // hooks.transport: how `shadowbox run` receives hook events — "http" (posted to the
  // run's own loopback server) or "command" (one `shadowbox hook` process per event).
  std::string transport = "http";
};

}  // namespace hooks
