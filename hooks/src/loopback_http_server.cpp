#include "loopback_http_server.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <map>
#include <mutex>
#include <string_view>
#include <thread>

#include <Poco/Net/HTTPResponse.h>

#include "fsnap/posix.hpp"
#include "http_request_reader.hpp"
#include "sandbox/errors.hpp"

namespace hooks {

namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr std::size_t kReadChunk = 256 << 10;
constexpr std::size_t kStrangerChunk = 4 << 10;
// A body and a reply get a second per MiB on top of the head's time.
constexpr std::size_t kBytesPerSecond = 1 << 20;
// How long a refused connection is read before it is closed.
constexpr milliseconds kLinger{1000};

milliseconds time_for(std::size_t bytes) {
  return milliseconds(bytes / (kBytesPerSecond / 1000));
}

// Whether given is expected, in a time that depends on expected alone.
bool same_path(std::string_view given, std::string_view expected) {
  unsigned char differ = given.size() != expected.size() ? 1 : 0;
  for (std::size_t i = 0; i < expected.size(); ++i) {
    differ |= static_cast<unsigned char>((i < given.size() ? given[i] : 0) ^ expected[i]);
  }
  return differ == 0;
}

std::string response(int status, const std::string& content_type, const std::string& body,
                     bool keep_alive) {
  std::string out = "HTTP/1.1 " + std::to_string(status) + " " +
                    Poco::Net::HTTPResponse::getReasonForStatus(
                        static_cast<Poco::Net::HTTPResponse::HTTPStatus>(status)) +
                    "\r\n";
  if (!content_type.empty()) out += "Content-Type: " + content_type + "\r\n";
  out += "Content-Length: " + std::to_string(body.size()) + "\r\n";
  out += keep_alive ? "Connection: keep-alive\r\n\r\n" : "Connection: close\r\n\r\n";
  out += body;
  return out;
}

// Sends what the socket takes now; the bytes sent, or -1 if the connection is gone.
long send_some(int fd, std::string_view data) {
  for (;;) {
    ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n >= 0) return n;
    if (errno == EINTR) continue;
    return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -1;
  }
}

// A reply whose writing the server's thread takes back from the answering one.
struct Answered {
  std::uint64_t connection = 0;
  std::string rest;  // not yet sent
  bool close = false;
};

struct Connection {
  enum class State {
    kWaiting,    // for the first byte of a request
    kReading,    // a request
    kAnswering,  // its request is with whoever answers it
    kWriting,    // a reply
    kClosing,    // its reply written, it is read until it closes (or briefly)
  };
  explicit Connection(int fd_, const HttpRequestLimits& limits) : fd(fd_), reader(limits) {}

  int fd;
  HttpRequestReader reader;
  State state = State::kWaiting;
  bool proven = false;         // a request line of it named one of the paths
  bool kept_alive = false;     // waiting between requests
  Clock::time_point since;     // of its wait for a request (the oldest stranger goes first)
  Clock::time_point deadline;  // it is closed then
  std::size_t path = 0;
  std::string out;  // the reply being written
  std::size_t out_done = 0;
  bool close_after = false;
};

}  // namespace

struct LoopbackHttpServer::Impl {
  std::vector<std::string> paths;
  HookServerLimits limits;
  HttpRequestLimits request_limits;
  Dispatch dispatch;
  int listen_fd = -1;
  int wake_fd = -1;
  int port = 0;
  std::thread thread;
  std::atomic<bool> stopping{false};
  std::mutex answered_mutex;
  std::vector<Answered> answered;  // replies handed back to the server's thread
  std::map<std::uint64_t, Connection> connections;
  std::uint64_t next_id = 1;
  Clock::time_point accept_paused_until{};
  std::string read_buffer = std::string(kReadChunk, '\0');

  ~Impl() {
    for (auto& [id, c] : connections) ::close(c.fd);
    if (listen_fd >= 0) ::close(listen_fd);
    if (wake_fd >= 0) ::close(wake_fd);
  }

  void wake() {
    std::uint64_t one = 1;
    [[maybe_unused]] ssize_t n = ::write(wake_fd, &one, sizeof one);
  }

  void run() {
    std::vector<pollfd> polled;
    std::vector<std::uint64_t> ids;
    while (!stopping) {
      Clock::time_point now = Clock::now();
      polled.clear();
      ids.clear();
      polled.push_back({wake_fd, POLLIN, 0});
      bool accepting = now >= accept_paused_until;
      polled.push_back({accepting ? listen_fd : -1, POLLIN, 0});
      Clock::time_point wake_at = accepting ? Clock::time_point::max() : accept_paused_until;
      for (auto& [id, c] : connections) {
        if (c.state == Connection::State::kAnswering) continue;
        short events = c.state == Connection::State::kWriting ? POLLOUT : POLLIN;
        polled.push_back({c.fd, events, 0});
        ids.push_back(id);
        wake_at = std::min(wake_at, c.deadline);
      }
      int timeout = -1;
      if (wake_at != Clock::time_point::max()) {
        auto left = std::chrono::ceil<milliseconds>(wake_at - now).count();
        timeout = static_cast<int>(std::clamp<long long>(left, 0, 60'000));
      }
      int ready = ::poll(polled.data(), polled.size(), timeout);
      if (ready < 0 && errno != EINTR) break;
      if (stopping) break;
      if (ready > 0) {
        if (polled[0].revents != 0) take_answered();
        if (polled[1].revents != 0) accept_all();
        for (std::size_t i = 0; i < ids.size(); ++i) {
          if (polled[i + 2].revents == 0) continue;
          auto it = connections.find(ids[i]);
          if (it == connections.end()) continue;
          if (it->second.state == Connection::State::kWriting) {
            write_more(it->first, it->second);
          } else if (it->second.state != Connection::State::kAnswering) {
            read_more(it->first, it->second);
          }
        }
      }
      expire(Clock::now());
    }
  }

  void close_connection(std::uint64_t id) {
    auto it = connections.find(id);
    if (it == connections.end()) return;
    ::close(it->second.fd);
    connections.erase(it);
  }

  void accept_all() {
    for (;;) {
      int fd = ::accept4(listen_fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0) {
        if (errno == EINTR || errno == ECONNABORTED) continue;
        if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
          // Out of descriptors: strangers make room, else accepting waits a little.
          if (!close_oldest_stranger()) accept_paused_until = Clock::now() + milliseconds(100);
        }
        return;
      }
      int one = 1;
      ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      while (strangers() >= limits.max_strangers && close_oldest_stranger()) {
      }
      Clock::time_point now = Clock::now();
      Connection& c = connections.try_emplace(next_id++, fd, request_limits).first->second;
      c.since = now;
      c.deadline = now + limits.head_timeout;
    }
  }

  std::size_t strangers() const {
    std::size_t n = 0;
    for (const auto& [id, c] : connections) n += c.proven ? 0 : 1;
    return n;
  }

  bool close_oldest_stranger() {
    auto oldest = connections.end();
    for (auto it = connections.begin(); it != connections.end(); ++it) {
      if (!it->second.proven &&
          (oldest == connections.end() || it->second.since < oldest->second.since)) {
        oldest = it;
      }
    }
    if (oldest == connections.end()) return false;
    close_connection(oldest->first);
    return true;
  }

  void read_more(std::uint64_t id, Connection& c) {
    // A stranger is read a little at a time: it holds no more than its request line
    // needs until that line has named a path.
    std::size_t want = c.proven ? read_buffer.size() : kStrangerChunk;
    ssize_t n = ::recv(c.fd, read_buffer.data(), want, 0);
    if (n < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)) return;
    if (n <= 0) {
      close_connection(id);  // gone, or it sends no more: no request can complete
      return;
    }
    if (c.state == Connection::State::kClosing) return;
    if (c.state == Connection::State::kWaiting) {
      c.state = Connection::State::kReading;
      if (c.kept_alive) c.deadline = Clock::now() + limits.head_timeout;
      c.kept_alive = false;
    }
    c.reader.append(std::string_view(read_buffer.data(), static_cast<std::size_t>(n)));
    advance(id, c);
  }

  // Reads the request as far as its bytes go; refuses it, or hands it on, once it can.
  void advance(std::uint64_t id, Connection& c) {
    for (;;) {
      switch (c.reader.next()) {
        case HttpRequestReader::Step::kNeedMore:
          return;
        case HttpRequestReader::Step::kRequestLine: {
          bool found = false;
          for (std::size_t i = 0; i < paths.size(); ++i) {
            if (same_path(c.reader.target(), paths[i])) {
              found = true;
              c.path = i;
            }
          }
          if (!found) return refuse(id, c, 404, "not found");
          c.proven = true;
          break;
        }
        case HttpRequestReader::Step::kHead: {
          if (c.reader.method() != Poco::Net::HTTPRequest::HTTP_POST) {
            return refuse(id, c, 405, "only POST is served here");
          }
          std::int64_t length = c.reader.announced_body();
          std::size_t body =
              length < 0 ? request_limits.max_body : static_cast<std::size_t>(length);
          c.deadline = Clock::now() + limits.head_timeout + time_for(body);
          if (c.reader.head().getExpectContinue()) {
            std::string_view go_on = "HTTP/1.1 100 Continue\r\n\r\n";
            if (send_some(c.fd, go_on) != static_cast<long>(go_on.size())) {
              return close_connection(id);
            }
          }
          break;
        }
        case HttpRequestReader::Step::kComplete: {
          c.state = Connection::State::kAnswering;
          c.deadline = Clock::time_point::max();
          HttpRequestIn request;
          request.connection = id;
          request.fd = c.fd;
          request.path = c.path;
          request.content_type = c.reader.head().getContentType();
          request.body = std::move(c.reader.body());
          request.keep_alive = c.reader.head().getKeepAlive();
          dispatch(std::move(request));
          return;
        }
        case HttpRequestReader::Step::kRefused:
          return refuse(id, c, c.reader.refusal_status(), c.reader.refusal());
      }
    }
  }

  void refuse(std::uint64_t id, Connection& c, int status, const std::string& why) {
    start_writing(id, c, response(status, "text/plain", why + "\n", false), true);
  }

  void start_writing(std::uint64_t id, Connection& c, std::string out, bool close_after) {
    c.state = Connection::State::kWriting;
    c.out = std::move(out);
    c.out_done = 0;
    c.close_after = close_after;
    c.deadline = Clock::now() + limits.head_timeout + time_for(c.out.size());
    write_more(id, c);
  }

  void write_more(std::uint64_t id, Connection& c) {
    long n = send_some(c.fd, std::string_view(c.out).substr(c.out_done));
    if (n < 0) return close_connection(id);
    c.out_done += static_cast<std::size_t>(n);
    if (c.out_done == c.out.size()) replied(id, c);
  }

  // A reply is out: the connection waits for its next request, or is closed.
  void replied(std::uint64_t id, Connection& c) {
    if (c.close_after) {
      // Closing with bytes unread would reset the connection, and the client might not
      // see its reply: the rest is read, and dropped, for a moment first.
      ::shutdown(c.fd, SHUT_WR);
      c.state = Connection::State::kClosing;
      c.deadline = Clock::now() + std::min<milliseconds>(limits.head_timeout, kLinger);
      return;
    }
    c.out.clear();
    c.out.shrink_to_fit();
    c.reader.start_next();
    Clock::time_point now = Clock::now();
    c.state = Connection::State::kWaiting;
    c.kept_alive = true;
    c.since = now;
    c.deadline = now + limits.idle_timeout;
    if (c.reader.unread() > 0) {
      // The next request came before this one's reply.
      c.state = Connection::State::kReading;
      c.kept_alive = false;
      c.deadline = now + limits.head_timeout;
      advance(id, c);
    }
  }

  void take_answered() {
    std::uint64_t count = 0;
    [[maybe_unused]] ssize_t n = ::read(wake_fd, &count, sizeof count);
    std::vector<Answered> taken;
    {
      std::lock_guard<std::mutex> lock(answered_mutex);
      taken.swap(answered);
    }
    for (Answered& a : taken) {
      auto it = connections.find(a.connection);
      if (it == connections.end()) continue;
      if (a.close && a.rest.empty()) {
        close_connection(a.connection);
        continue;
      }
      start_writing(a.connection, it->second, std::move(a.rest), a.close);
    }
  }

  void expire(Clock::time_point now) {
    for (auto it = connections.begin(); it != connections.end();) {
      if (it->second.state != Connection::State::kAnswering && it->second.deadline <= now) {
        ::close(it->second.fd);
        it = connections.erase(it);
      } else {
        ++it;
      }
    }
  }
};

LoopbackHttpServer::LoopbackHttpServer(std::vector<std::string> paths, HookServerLimits limits,
                                       Dispatch dispatch)
    : impl_(std::make_unique<Impl>()) {
  impl_->paths = std::move(paths);
  impl_->limits = limits;
  impl_->dispatch = std::move(dispatch);
  auto fail = [](const std::string& what) {
    throw fsnap::system_error("cannot listen for hook events on 127.0.0.1: " + what, errno);
  };
  impl_->wake_fd = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (impl_->wake_fd < 0) fail("eventfd");
  impl_->listen_fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (impl_->listen_fd < 0) fail("socket");
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t size = sizeof addr;
  if (::bind(impl_->listen_fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    fail("bind");
  }
  if (::listen(impl_->listen_fd, 64) != 0) fail("listen");
  if (::getsockname(impl_->listen_fd, reinterpret_cast<sockaddr*>(&addr), &size) != 0) {
    fail("getsockname");
  }
  impl_->port = ntohs(addr.sin_port);
}

void LoopbackHttpServer::start() {
  impl_->thread = std::thread([impl = impl_.get()] { impl->run(); });
}

LoopbackHttpServer::~LoopbackHttpServer() {
  stop();
}

int LoopbackHttpServer::port() const {
  return impl_->port;
}

void LoopbackHttpServer::reply(const HttpRequestIn& request, const HttpHookReply& reply) {
  Answered a;
  a.connection = request.connection;
  a.close = !request.keep_alive;
  std::string out = response(reply.status, reply.content_type, reply.body, request.keep_alive);
  // The connection is this thread's until handed back: what it takes now is sent now.
  long sent = send_some(request.fd, out);
  if (sent < 0) {
    a.close = true;
  } else {
    a.rest = out.substr(static_cast<std::size_t>(sent));
  }
  {
    std::lock_guard<std::mutex> lock(impl_->answered_mutex);
    impl_->answered.push_back(std::move(a));
  }
  impl_->wake();
}

void LoopbackHttpServer::stop() {
  if (!impl_->thread.joinable()) return;
  impl_->stopping = true;
  impl_->wake();
  impl_->thread.join();
  for (auto& [id, c] : impl_->connections) ::close(c.fd);
  impl_->connections.clear();
  ::close(impl_->listen_fd);
  impl_->listen_fd = -1;
}

}  // namespace hooks
