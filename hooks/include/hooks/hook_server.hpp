// HookServer — receives Claude Code's HTTP hooks (`"type": "http"`) in the process
// that supervises the agent, so a tool boundary costs a loopback request instead of
// starting a process, and the workspace's watch and caches stay warm between calls.
//
// Listens on 127.0.0.1 only, on a port the system picks, at paths holding a random
// token: another local process cannot drive it without reading the agent's settings.
// Nor can it slow it down: connections are read as their bytes come, by one thread
// that never waits on any of them, each within a deadline (HookServerLimits); a
// request line that does not name the token is refused before its headers are read,
// and slow or silent connections never hold up the threads that answer.
// Hook requests are answered one at a time (parallel tool calls serialise here as they
// do on the store lock); work that the agent need not wait for can follow each reply.
// The same server can receive the agent's OpenTelemetry logs (OTLP/HTTP JSON), which
// are handled beside hook events, not behind them.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>

#include "hooks/agent_hook.hpp"
#include "hooks/hook_server_limits.hpp"

namespace hooks {

// A loopback HTTP server for hook events.
class HookServer {
 public:
  // Answers the JSON body of one hook request.
  using Handler = std::function<HttpHookReply(const std::string& event_json)>;

  // Work done after a reply is sent, before the next event is answered.
  using AfterReply = std::function<void(const HttpHookReply& reply)>;

  // Receives the body of one OTLP/HTTP JSON logs export; what it throws is answered
  // with 400.
  using TelemetryHandler = std::function<void(const std::string& body)>;

  // Starts listening. Without a handler, hook requests are answered 404 (a server for
  // telemetry only); without a telemetry handler, there is no telemetry endpoint.
  // Error kIo if no loopback port can be bound.
  explicit HookServer(Handler handler, AfterReply after_reply = {}, TelemetryHandler telemetry = {},
                      HookServerLimits limits = {});
  // Stops listening (as stop() does).
  ~HookServer();
  HookServer(const HookServer&) = delete;
  HookServer& operator=(const HookServer&) = delete;

  // The URL hooks post to: http://127.0.0.1:<port>/hook/<token>.
  const std::string& url() const;
  // The OTLP logs endpoint: http://127.0.0.1:<port>/otel/<token>/v1/logs.
  const std::string& telemetry_url() const;
  // Stops listening and waits for the request being answered, if any. Idempotent.
  void stop();
  // Runs work as a hook event is answered: never beside one (from any thread). Returns
  // false, without running it, once stopped.
  bool exclusive(const std::function<void()>& work);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace hooks
