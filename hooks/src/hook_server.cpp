#include "hooks/hook_server.hpp"

#include <condition_variable>
#include <cstdio>
#include <deque>
#include <mutex>
#include <random>
#include <thread>

#include "loopback_http_server.hpp"

namespace hooks {

namespace {

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

// A thread answering requests one at a time, in the order they came.
class Answerer {
 public:
  explicit Answerer(std::function<void(const HttpRequestIn&)> answer)
      : answer_(std::move(answer)), thread_([this] { run(); }) {}
  ~Answerer() { stop(); }
  Answerer(const Answerer&) = delete;
  Answerer& operator=(const Answerer&) = delete;

  // Queues a request (from the server's thread: never waits for an answer).
  void push(HttpRequestIn request) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (stopping_) return;
      queue_.push_back(std::move(request));
    }
    ready_.notify_one();
  }

  // Waits for the request being answered, if any; those still queued are not answered.
  void stop() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
    }
    ready_.notify_one();
    if (thread_.joinable()) thread_.join();
  }

 private:
  void run() {
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      ready_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (stopping_) return;
      HttpRequestIn request = std::move(queue_.front());
      queue_.pop_front();
      lock.unlock();
      answer_(request);
      lock.lock();
    }
  }

  std::function<void(const HttpRequestIn&)> answer_;
  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<HttpRequestIn> queue_;
  bool stopping_ = false;
  std::thread thread_;  // last: starts once the rest is there
};

}  // namespace

struct HookServer::Impl {
  Handler handler;
  AfterReply after_reply;
  TelemetryHandler telemetry;
  std::string url;
  std::string telemetry_url;
  std::mutex mutex;     // one event at a time
  bool closed = false;  // set by stop() under the mutex: exclusive work is not run
  std::unique_ptr<LoopbackHttpServer> server;
  std::unique_ptr<Answerer> events;
  std::unique_ptr<Answerer> exports;  // telemetry, beside the events

  void answer_event(const HttpRequestIn& request) {
    std::lock_guard<std::mutex> lock(mutex);
    HttpHookReply answer;
    try {
      answer = handler(request.body);
    } catch (const std::exception& e) {
      answer = HttpHookReply{500, "text/plain", std::string("shadowbox: ") + e.what()};
    }
    server->reply(request, answer);
    if (after_reply) {
      try {
        after_reply(answer);
      } catch (const std::exception&) {
        // after_reply reports its own failures.
      }
    }
  }

  void answer_export(const HttpRequestIn& request) {
    if (request.content_type.find("json") == std::string::npos) {
      return server->reply(
          request,
          {415, "text/plain", "OTLP/HTTP JSON only (OTEL_EXPORTER_OTLP_PROTOCOL=http/json)\n"});
    }
    try {
      telemetry(request.body);
    } catch (const std::exception& e) {
      return server->reply(request, {400, "text/plain", std::string(e.what()) + "\n"});
    }
    server->reply(request, {200, "application/json", "{}"});
  }
};

HookServer::HookServer(Handler handler, AfterReply after_reply, TelemetryHandler telemetry,
                       HookServerLimits limits)
    : impl_(std::make_unique<Impl>()) {
  Impl& impl = *impl_;
  impl.handler = std::move(handler);
  impl.after_reply = std::move(after_reply);
  impl.telemetry = std::move(telemetry);
  std::string token = random_token();
  std::string path = "/hook/" + token;
  std::string telemetry_path = "/otel/" + token + "/v1/logs";
  // Without a handler, a path is not served at all (404).
  std::vector<std::string> paths{impl.handler ? path : "", impl.telemetry ? telemetry_path : ""};
  impl.server = std::make_unique<LoopbackHttpServer>(paths, limits, [&impl](HttpRequestIn request) {
    (request.path == 0 ? impl.events : impl.exports)->push(std::move(request));
  });
  std::string origin = "http://127.0.0.1:" + std::to_string(impl.server->port());
  impl.url = origin + path;
  impl.telemetry_url = origin + telemetry_path;
  impl.events =
      std::make_unique<Answerer>([&impl](const HttpRequestIn& r) { impl.answer_event(r); });
  impl.exports =
      std::make_unique<Answerer>([&impl](const HttpRequestIn& r) { impl.answer_export(r); });
  impl.server->start();
}

HookServer::~HookServer() {
  stop();
}

void HookServer::stop() {
  if (!impl_->server) return;
  // A request being answered is answered before this returns; none is after.
  impl_->events->stop();
  impl_->exports->stop();
  impl_->server->stop();
  {
    std::lock_guard<std::mutex> lock(impl_->mutex);
    impl_->closed = true;
  }
  impl_->server.reset();
}

bool HookServer::exclusive(const std::function<void()>& work) {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  if (impl_->closed) return false;
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
