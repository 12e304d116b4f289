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
  std::string path;
  std::mutex mutex;  // one event at a time
};

void reply(HTTPServerResponse& response, int status, const std::string& content_type,
           const std::string& body) {
  response.setStatus(static_cast<Poco::Net::HTTPResponse::HTTPStatus>(status));
  response.setContentType(content_type);
  response.sendBuffer(body.data(), body.size());
}

class EventHandler : public HTTPRequestHandler {
 public:
  explicit EventHandler(Shared& shared) : shared_(shared) {}

  void handleRequest(HTTPServerRequest& request, HTTPServerResponse& response) override {
    if (request.getURI() != shared_.path) {
      reply(response, 404, "text/plain", "not found\n");
      return;
    }
    if (request.getMethod() != Poco::Net::HTTPRequest::HTTP_POST) {
      reply(response, 405, "text/plain", "hook events are POSTed\n");
      return;
    }
    if (request.hasContentLength() && request.getContentLength64() > kMaxEventBytes) {
      reply(response, 413, "text/plain", "hook event too large\n");
      return;
    }
    std::string body;
    Poco::StreamCopier::copyToString(request.stream(), body);
    std::lock_guard<std::mutex> lock(shared_.mutex);
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
  Shared& shared_;
};

class Factory : public Poco::Net::HTTPRequestHandlerFactory {
 public:
  explicit Factory(Shared& shared) : shared_(shared) {}
  HTTPRequestHandler* createRequestHandler(const HTTPServerRequest&) override {
    return new EventHandler(shared_);
  }

 private:
  Shared& shared_;
};

}  // namespace

struct HookServer::Impl {
  Shared shared;
  std::string url;
  std::unique_ptr<Poco::Net::HTTPServer> server;
};

HookServer::HookServer(Handler handler, AfterReply after_reply) : impl_(std::make_unique<Impl>()) {
  impl_->shared.handler = std::move(handler);
  impl_->shared.after_reply = std::move(after_reply);
  impl_->shared.path = "/hook/" + random_token();
  try {
    Poco::Net::ServerSocket socket(Poco::Net::SocketAddress("127.0.0.1", 0));
    auto* params = new Poco::Net::HTTPServerParams;
    params->setMaxThreads(4);
    params->setKeepAlive(true);
    impl_->url = "http://127.0.0.1:" + std::to_string(socket.address().port()) + impl_->shared.path;
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
  // A request already inside the handler finishes before this returns.
  std::lock_guard<std::mutex> lock(impl_->shared.mutex);
  impl_->server.reset();
}

const std::string& HookServer::url() const {
  return impl_->url;
}

}  // namespace hooks
