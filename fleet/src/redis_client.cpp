#include "fleet/redis_client.hpp"

#include <Poco/DigestEngine.h>
#include <Poco/Exception.h>
#include <Poco/Net/NetException.h>
#include <Poco/Redis/Array.h>
#include <Poco/Redis/Client.h>
#include <Poco/Redis/Error.h>
#include <Poco/Redis/Exception.h>
#include <Poco/Redis/Type.h>
#include <Poco/SHA1Engine.h>
#include <Poco/Timespan.h>

#include <charconv>

namespace fleet {

namespace {

using fsnap::Error;
using fsnap::ErrorCode;
namespace redis = Poco::Redis;

// An error reply of the server (the connection is still in step).
struct ErrorReply {
  std::string message;
};

int parse_number(std::string_view text, std::string_view what, std::string_view url) {
  int value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value < 0) {
    throw Error(ErrorCode::kInvalidArgument,
                "invalid " + std::string(what) + " in Redis URL " + fsnap::quote_input(url) +
                    " (expected redis://[:PASSWORD@]HOST[:PORT][/DB])");
  }
  return value;
}

RedisReply convert(const redis::RedisType::Ptr& value) {
  RedisReply out;
  if (value.isNull()) return out;
  switch (value->type()) {
    case redis::RedisTypeTraits<Poco::Int64>::TypeId: {
      out.kind = RedisReply::Kind::kInteger;
      out.integer = dynamic_cast<const redis::Type<Poco::Int64>&>(*value).value();
      return out;
    }
    case redis::RedisTypeTraits<std::string>::TypeId: {
      out.kind = RedisReply::Kind::kText;
      out.text = dynamic_cast<const redis::Type<std::string>&>(*value).value();
      return out;
    }
    case redis::RedisTypeTraits<redis::BulkString>::TypeId: {
      const redis::BulkString& bulk =
          dynamic_cast<const redis::Type<redis::BulkString>&>(*value).value();
      if (bulk.isNull()) return out;
      out.kind = RedisReply::Kind::kText;
      out.text = bulk.value();
      return out;
    }
    case redis::RedisTypeTraits<redis::Array>::TypeId: {
      const redis::Array& array = dynamic_cast<const redis::Type<redis::Array>&>(*value).value();
      if (array.isNull()) return out;
      out.kind = RedisReply::Kind::kArray;
      for (const redis::RedisType::Ptr& element : array) out.elements.push_back(convert(element));
      return out;
    }
    case redis::RedisTypeTraits<redis::Error>::TypeId:
      throw ErrorReply{dynamic_cast<const redis::Type<redis::Error>&>(*value).value().getMessage()};
    default:
      throw Error(ErrorCode::kCorrupt, "an answer of Redis that shadowbox cannot read");
  }
}

}  // namespace

RedisEndpoint RedisEndpoint::parse(std::string_view url) {
  constexpr std::string_view kScheme = "redis://";
  auto invalid = [&](const std::string& why) {
    return Error(ErrorCode::kInvalidArgument,
                 "invalid Redis URL " + fsnap::quote_input(url) + ": " + why +
                     " (expected redis://[:PASSWORD@]HOST[:PORT][/DB])");
  };
  if (url.substr(0, kScheme.size()) != kScheme) throw invalid("not redis://");
  std::string_view rest = url.substr(kScheme.size());
  RedisEndpoint out;
  if (std::size_t at = rest.rfind('@'); at != std::string_view::npos) {
    std::string_view user_info = rest.substr(0, at);
    if (std::size_t colon = user_info.find(':'); colon != std::string_view::npos) {
      out.password = std::string(user_info.substr(colon + 1));
    } else {
      out.password = std::string(user_info);
    }
    rest = rest.substr(at + 1);
  }
  if (std::size_t slash = rest.find('/'); slash != std::string_view::npos) {
    std::string_view db = rest.substr(slash + 1);
    if (!db.empty()) out.db = parse_number(db, "database", url);
    rest = rest.substr(0, slash);
  }
  std::size_t colon = rest.rfind(':');
  if (!rest.empty() && rest.front() == '[') {  // [IPv6]:PORT
    std::size_t close = rest.find(']');
    if (close == std::string_view::npos) throw invalid("unclosed '['");
    out.host = std::string(rest.substr(1, close - 1));
    colon = close + 1 < rest.size() && rest[close + 1] == ':' ? close + 1 : std::string_view::npos;
  } else {
    out.host = std::string(rest.substr(0, colon));
  }
  if (colon != std::string_view::npos) {
    out.port = parse_number(rest.substr(colon + 1), "port", url);
    if (out.port == 0 || out.port > 65535) throw invalid("port out of range");
  }
  if (out.host.empty()) throw invalid("no host");
  return out;
}

std::string RedisEndpoint::describe() const {
  std::string host_part = host.find(':') != std::string::npos ? "[" + host + "]" : host;
  return host_part + ":" + std::to_string(port) + "/" + std::to_string(db);
}

std::int64_t RedisReply::as_integer() const {
  if (kind == Kind::kInteger) return integer;
  if (kind == Kind::kText) {
    std::int64_t value = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec == std::errc() && end == text.data() + text.size()) return value;
  }
  throw Error(ErrorCode::kCorrupt, "Redis answered something other than a number");
}

const std::string& RedisReply::as_text() const {
  if (kind == Kind::kArray) throw Error(ErrorCode::kCorrupt, "Redis answered a list, not a text");
  return text;
}

RedisScript::RedisScript(std::string source) : source_(std::move(source)) {
  Poco::SHA1Engine engine;
  engine.update(source_);
  sha1_ = Poco::DigestEngine::digestToHex(engine.digest());
}

struct RedisClient::Connection {
  redis::Client client;
};

RedisClient::RedisClient(RedisEndpoint endpoint, std::chrono::milliseconds timeout)
    : endpoint_(std::move(endpoint)), timeout_(timeout) {}

RedisClient::~RedisClient() = default;

RedisReply RedisClient::command(const std::vector<std::string>& args) {
  std::lock_guard<std::mutex> lock(mutex_);
  return command_locked(args);
}

RedisReply RedisClient::command_locked(const std::vector<std::string>& args) {
  return exchange_locked({args}).front();
}

std::vector<RedisReply> RedisClient::pipeline(
    const std::vector<std::vector<std::string>>& commands) {
  if (commands.empty()) return {};
  std::lock_guard<std::mutex> lock(mutex_);
  return exchange_locked(commands);
}

std::vector<RedisReply> RedisClient::exchange_locked(
    const std::vector<std::vector<std::string>>& commands) {
  auto started = std::chrono::steady_clock::now();
  auto unreachable = [&](const std::string& why) {
    connection_.reset();
    // Poco reports a read that timed out as a lost connection.
    bool timed_out = std::chrono::steady_clock::now() - started >= timeout_;
    return Error(
        ErrorCode::kIo,
        "cannot reach Redis at " + endpoint_.describe() + ": " +
            (timed_out ? "no answer within " + std::to_string(timeout_.count()) + " ms" : why));
  };
  std::size_t answered = 0;  // the replies read (an error reply names its command)
  try {
    if (!connection_) {
      auto fresh = std::make_unique<Connection>();
      Poco::Timespan timeout(
          std::chrono::duration_cast<std::chrono::microseconds>(timeout_).count());
      fresh->client.connect(endpoint_.host, endpoint_.port, timeout);
      fresh->client.setReceiveTimeout(timeout);
      connection_ = std::move(fresh);
      try {
        if (!endpoint_.password.empty()) command_locked({"AUTH", endpoint_.password});
        if (endpoint_.db != 0) command_locked({"SELECT", std::to_string(endpoint_.db)});
      } catch (...) {
        connection_.reset();  // not usable as it is: the next command starts over
        throw;
      }
    }
    std::vector<redis::Array> requests(commands.size());
    for (std::size_t i = 0; i < commands.size(); ++i) {
      for (const std::string& arg : commands[i]) requests[i].add(arg);
    }
    // Every reply is read before any is looked at: the connection stays in step.
    redis::Array replies = connection_->client.sendCommands(requests);
    std::vector<RedisReply> out;
    out.reserve(replies.size());
    for (const redis::RedisType::Ptr& reply : replies) {
      out.push_back(convert(reply));
      ++answered;
    }
    return out;
  } catch (const Error&) {
    throw;
  } catch (const ErrorReply& e) {
    throw Error(ErrorCode::kInvalidArgument, "Redis at " + endpoint_.describe() + " refused " +
                                                 commands[answered].front() + ": " + e.message);
  } catch (const Poco::Exception& e) {
    throw unreachable(e.displayText());
  } catch (const std::exception& e) {
    throw unreachable(e.what());
  }
}

RedisReply RedisClient::run(const RedisScript& script, const std::vector<std::string>& keys,
                            const std::vector<std::string>& args) {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<std::string> request = {"EVALSHA", script.sha1(), std::to_string(keys.size())};
  request.insert(request.end(), keys.begin(), keys.end());
  request.insert(request.end(), args.begin(), args.end());
  try {
    return command_locked(request);
  } catch (const Error& e) {
    if (e.code() != ErrorCode::kInvalidArgument ||
        std::string_view(e.what()).find("NOSCRIPT") == std::string_view::npos) {
      throw;
    }
  }
  request[0] = "EVAL";
  request[1] = script.source();
  return command_locked(request);
}

void RedisClient::ping() {
  command({"PING"});
}

}  // namespace fleet
