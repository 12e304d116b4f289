// fleet::RedisClient — one connection to a Redis server: a command in, a reply out, and
// every failure an fsnap::Error that names the server. Poco::Redis speaks the protocol.
//
// A connection that fails (refused, reset, timed out) is dropped; the next command
// connects again, so a client outlives a restart of the server. Lua scripts run with
// EVALSHA, loaded on the server's first NOSCRIPT (a restarted server has none).
//
// Thread-safety: commands are serialised on an internal mutex; one client may be shared.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fsnap/error.hpp"

namespace fleet {

// Where a Redis server is: redis://[:PASSWORD@]HOST[:PORT][/DB].
struct RedisEndpoint {
  std::string host;
  int port = 6379;
  int db = 0;
  std::string password;

  // Throws fsnap::Error kInvalidArgument for anything else.
  static RedisEndpoint parse(std::string_view url);
  // "HOST:PORT/DB" (never the password): for messages.
  std::string describe() const;
};

// One reply of Redis. An error reply is not a reply: it is thrown (kInvalidArgument).
struct RedisReply {
  enum class Kind { kNil, kInteger, kText, kArray };
  Kind kind = Kind::kNil;
  std::int64_t integer = 0;
  std::string text;                  // a simple or bulk string
  std::vector<RedisReply> elements;  // an array

  bool nil() const { return kind == Kind::kNil; }
  // The integer (an integer reply, or text that is one); kCorrupt otherwise.
  std::int64_t as_integer() const;
  // The text ("" for nil); kCorrupt for an array.
  const std::string& as_text() const;
};

// A Lua script: its source and SHA-1 (for EVALSHA).
class RedisScript {
 public:
  explicit RedisScript(std::string source);
  const std::string& source() const { return source_; }
  const std::string& sha1() const { return sha1_; }

 private:
  std::string source_;
  std::string sha1_;
};

class RedisClient {
 public:
  // Connects at the first command; timeout bounds a connect and each reply.
  RedisClient(RedisEndpoint endpoint,
              std::chrono::milliseconds timeout = std::chrono::milliseconds(2000));
  ~RedisClient();
  RedisClient(const RedisClient&) = delete;
  RedisClient& operator=(const RedisClient&) = delete;

  const RedisEndpoint& endpoint() const { return endpoint_; }

  // Runs one command. Throws fsnap::Error kIo when the server cannot be reached or does
  // not answer in time (the connection is dropped), kInvalidArgument for an error reply.
  RedisReply command(const std::vector<std::string>& args);
  // Runs commands in one round trip (pipelined); their replies in order. An error reply
  // is thrown as command's is.
  std::vector<RedisReply> pipeline(const std::vector<std::vector<std::string>>& commands);
  // Runs script with keys and args (EVALSHA, loading it when the server lacks it).
  RedisReply run(const RedisScript& script, const std::vector<std::string>& keys,
                 const std::vector<std::string>& args);
  // Connects now if not connected (kIo if it cannot). A PING.
  void ping();

 private:
  struct Connection;
  RedisReply command_locked(const std::vector<std::string>& args);
  // Sends commands (connecting first if need be) and reads every reply.
  std::vector<RedisReply> exchange_locked(const std::vector<std::vector<std::string>>& commands);

  RedisEndpoint endpoint_;
  std::chrono::milliseconds timeout_;
  std::mutex mutex_;
  std::unique_ptr<Connection> connection_;
};

}  // namespace fleet
