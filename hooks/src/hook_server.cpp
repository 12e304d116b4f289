#include "hooks/hook_server.hpp"

#include <cstdio>
#include <mutex>
#include <random>

#include <Poco/Exception.h>
#include <Poco/Net/HTTPRequestHandler.h>
#include <Poco/Net/HTTPRequestHandlerFactory.h>
#include <Poco/Net/HTTPServer.h>
#include <Poco/Net/HTTPServerParams.h>
#include <Poco/Net/HTTPServerRequest.h>
#include <Poco/Net/HTTPServerResponse.h>
#include <Poco/Net/ServerSocket.h>
#include <Poco/StreamCopier.h>

#include "sandbox/errors.hpp"

namespace hooks {

namespace {

using Poco::Net::HTTPRequestHandler;
using Poco::Net::HTTPServerRequest;
using Poco::Net::HTTPServerResponse;

// Largest event accepted (Claude Code caps tool output well below this).
constexpr std::streamsize kMaxEventBytes = 64 << 20;

std::string random_token() {
  std::random_device device;  // /dev/urandom
  std::string token;
  for (int i = 0; i < 4; ++i) {
    char part[9];
    std::snprintf(part, sizeof part, "%08x", device());
    token += part;
  }
  return token;
}

struct Shared {
  HookServer::Handler handler;
  HookServer::AfterReply after_reply;
  HookServer::TelemetryHandler telemetry;
  std::string path;
  std::string telemetry_path;
  std::mutex mutex;            // one event at a time
  std::mutex telemetry_mutex;  // one telemetry export at a time
  bool closed = false;         // set by stop() under both mutexes: handlers are not called
};

void reply(HTTPServerResponse& response, int status, const std::string& content_type,
           const std::string& body) {
  response.setStatus(static_cast<Poco::Net::HTTPResponse::HTTPStatus>(status));
  response.setContentType(content_type);
  response.sendBuffer(body.data(), body.size());
}

class EventHandler : public HTTPRequestHandler {
 public:
  explicit EventHandler(std::shared_ptr<Shared> shared)
      : shared_(*shared), keep_(std::move(shared)) {}

  void handleRequest(HTTPServerRequest& request, HTTPServerResponse& response) override {
    bool hook = shared_.handler && request.getURI() == shared_.path;
    bool telemetry = shared_.telemetry && request.getURI() == shared_.telemetry_path;
    if (!hook && !telemetry) {
      reply(response, 404, "text/plain", "not found\n");
      return;
    }
    if (request.getMethod() != Poco::Net::HTTPRequest::HTTP_POST) {
      reply(response, 405, "text/plain", "only POST is served here\n");
      return;
    }
    if (request.hasContentLength() && request.getContentLength64() > kMaxEventBytes) {
      reply(response, 413, "text/plain", "request too large\n");
      return;
    }
    std::string body;
    Poco::StreamCopier::copyToString(request.stream(), body);
    if (telemetry) {
      receive_telemetry(request, response, body);
      return;
    }
    std::lock_guard<std::mutex> lock(shared_.mutex);
    if (shared_.closed) {
      reply(response, 503, "text/plain", "the run is over\n");
      return;
    }
    HttpHookReply answer;
    try {
      answer = shared_.handler(body);
    } catch (const std::exception& e) {
      answer = HttpHookReply{500, "text/plain", std::string("shadowbox: ") + e.what()};
    }
    try {
      reply(response, answer.status, answer.content_type, answer.body);
    } catch (const Poco::Exception&) {
      // The agent went away; what follows is still done.
    }
    if (shared_.after_reply) {
      try {
        shared_.after_reply(answer);
      } catch (const std::exception&) {
        // after_reply reports its own failures.
      }
    }
  }

 private:
  void receive_telemetry(HTTPServerRequest& request, HTTPServerResponse& response,
                         const std::string& body) {
    if (request.getContentType().find("json") == std::string::npos) {
      reply(response, 415, "text/plain",
            "OTLP/HTTP JSON only (OTEL_EXPORTER_OTLP_PROTOCOL=http/json)\n");
      return;
    }
    std::lock_guard<std::mutex> lock(shared_.telemetry_mutex);
    if (shared_.closed) {
      reply(response, 503, "text/plain", "the run is over\n");
      return;
    }
    try {
      shared_.telemetry(body);
    } catch (const std::exception& e) {
      reply(response, 400, "text/plain", std::string(e.what()) + "\n");
      return;
    }
    reply(response, 200, "application/json", "{}");
  }

  Shared& shared_;
  std::shared_ptr<Shared> keep_;  // outlives the HookServer if a request does
};

class Factory : public Poco::Net::HTTPRequestHandlerFactory {
 public:
  explicit Factory(std::shared_ptr<Shared> shared) : shared_(std::move(shared)) {}
  HTTPRequestHandler* createRequestHandler(const HTTPServerRequest&) override {
    return new EventHandler(shared_);
  }

 private:
  std::shared_ptr<Shared> shared_;
};

}  // namespace

struct HookServer::Impl {
  std::shared_ptr<Shared> shared = std::make_shared<Shared>();
  std::string url;
  std::string telemetry_url;
  std::unique_ptr<Poco::Net::HTTPServer> server;
};

HookServer::HookServer(Handler handler, AfterReply after_reply, TelemetryHandler telemetry)
    : impl_(std::make_unique<Impl>()) {
  impl_->shared->handler = std::move(handler);
  impl_->shared->after_reply = std::move(after_reply);
  impl_->shared->telemetry = std::move(telemetry);
  std::string token = random_token();
  impl_->shared->path = "/hook/" + token;
  impl_->shared->telemetry_path = "/otel/" + token + "/v1/logs";
  try {
    Poco::Net::ServerSocket socket(Poco::Net::SocketAddress("127.0.0.1", 0));
    auto* params = new Poco::Net::HTTPServerParams;
    params->setMaxThreads(4);
    params->setKeepAlive(true);
    std::string origin = "http://127.0.0.1:" + std::to_string(socket.address().port());
    impl_->url = origin + impl_->shared->path;
    impl_->telemetry_url = origin + impl_->shared->telemetry_path;
    impl_->server =
        std::make_unique<Poco::Net::HTTPServer>(new Factory(impl_->shared), socket, params);
    impl_->server->start();
  } catch (const Poco::Exception& e) {
    throw sandbox::Error(sandbox::ErrorCode::kIo,
                         "cannot listen for hook events on 127.0.0.1: " + e.displayText());
  }
}

HookServer::~HookServer() {
  stop();
}

void HookServer::stop() {
  if (!impl_->server) return;
  impl_->server->stopAll(true);
  {
    // A request already inside a handler finishes before this returns; one that comes
    // later is not handled.
    std::scoped_lock lock(impl_->shared->mutex, impl_->shared->telemetry_mutex);
    impl_->shared->closed = true;
  }
  impl_->server.reset();
}

bool HookServer::exclusive(const std::function<void()>& work) {
  std::lock_guard<std::mutex> lock(impl_->shared->mutex);
  if (impl_->shared->closed) return false;
  work();
  return true;
}

const std::string& HookServer::url() const {
  return impl_->url;
}

const std::string& HookServer::telemetry_url() const {
  return impl_->telemetry_url;
}

}  // namespace hooks
