// The HTTP side of the Claude Code hook: the loopback HookServer, the replies it
// gives for each kind of answer, and the settings entries that point Claude Code at it.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <Poco/JSON/Object.h>
#include <Poco/JSON/Parser.h>
#include <Poco/Net/HTTPClientSession.h>
#include <Poco/Net/HTTPRequest.h>
#include <Poco/Net/HTTPResponse.h>
#include <Poco/StreamCopier.h>
#include <Poco/URI.h>
#include <gtest/gtest.h>

#include "hooks/agent_hook.hpp"
#include "hooks/claude_code_settings.hpp"
#include "hooks/hook_server.hpp"
#include "raw_socket.hpp"
#include "sandbox/errors.hpp"

namespace {

using Poco::JSON::Object;
using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

struct Reply {
  int status = 0;
  std::string body;
};

Reply send(const std::string& url, const std::string& body,
           const std::string& method = Poco::Net::HTTPRequest::HTTP_POST) {
  Poco::URI uri(url);
  Poco::Net::HTTPClientSession session(uri.getHost(), uri.getPort());
  session.setTimeout(Poco::Timespan(10, 0));
  Poco::Net::HTTPRequest request(method, uri.getPathAndQuery(), Poco::Net::HTTPMessage::HTTP_1_1);
  request.setContentType("application/json");
  request.setContentLength(static_cast<std::streamsize>(body.size()));
  session.sendRequest(request) << body;
  Poco::Net::HTTPResponse response;
  std::istream& in = session.receiveResponse(response);
  Reply r;
  r.status = response.getStatus();
  Poco::StreamCopier::copyToString(in, r.body);
  return r;
}

// A connection to the server for what a well-behaved client never does: sending
// slowly, partly or nothing.
class RawConnection : public testing_support::RawSocket {
 public:
  explicit RawConnection(const std::string& url)
      : RawSocket(static_cast<std::uint16_t>(Poco::URI(url).getPort())) {}
};

std::string path_of(const std::string& url) {
  return Poco::URI(url).getPath();
}

// A whole reply has come (small replies only: Content-Length is read, not parsed).
bool whole_reply(const std::string& data) {
  std::size_t head = data.find("\r\n\r\n");
  if (head == std::string::npos) return false;
  std::size_t at = data.find("Content-Length: ");
  if (at == std::string::npos) return true;
  return data.size() >= head + 4 + std::stoul(data.substr(at + 16));
}

hooks::HttpHookReply ok(const std::string&) {
  return hooks::HttpHookReply{200, "application/json", "{}"};
}

// Sends a hook event as Claude Code does and returns how long it took to be answered;
// fails the test if it was not answered in two seconds.
milliseconds time_an_event(const hooks::HookServer& server) {
  Clock::time_point start = Clock::now();
  Poco::URI uri(server.url());
  Poco::Net::HTTPClientSession session(uri.getHost(), uri.getPort());
  session.setTimeout(Poco::Timespan(3, 0));
  try {
    Poco::Net::HTTPRequest request(Poco::Net::HTTPRequest::HTTP_POST, uri.getPath(),
                                   Poco::Net::HTTPMessage::HTTP_1_1);
    request.setContentType("application/json");
    request.setContentLength(2);
    session.sendRequest(request) << "{}";
    Poco::Net::HTTPResponse response;
    session.receiveResponse(response);
    EXPECT_EQ(response.getStatus(), 200);
  } catch (const Poco::Exception& e) {
    ADD_FAILURE() << "no answer: " << e.displayText();
  }
  auto took = std::chrono::duration_cast<milliseconds>(Clock::now() - start);
  EXPECT_LT(took, milliseconds(2000)) << "a valid event was held up";
  return took;
}

Object::Ptr parse(const std::string& text) {
  Poco::JSON::Parser parser;
  return parser.parse(text).extract<Object::Ptr>();
}

TEST(HookServerTest, TelemetryIsReceivedBesideHookEventsNotBehindThem) {
  std::atomic<bool> in_hook{false};
  std::atomic<bool> release{false};
  std::vector<std::string> exports;
  std::mutex exports_mutex;
  hooks::HookServer server(
      [&](const std::string&) {
        in_hook = true;
        while (!release) std::this_thread::sleep_for(std::chrono::milliseconds(5));
        return hooks::HttpHookReply{200, "application/json", "{}"};
      },
      {},
      [&](const std::string& body) {
        if (body == "bad") throw std::runtime_error("not OTLP");
        std::lock_guard<std::mutex> lock(exports_mutex);
        exports.push_back(body);
      });
  ASSERT_EQ(server.telemetry_url().rfind("http://127.0.0.1:", 0), 0u);
  ASSERT_NE(server.telemetry_url().find("/v1/logs"), std::string::npos);
  // A hook event being answered does not hold telemetry up.
  std::thread hook([&] { send(server.url(), "{}"); });
  while (!in_hook) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  Reply r = send(server.telemetry_url(), "{\"resourceLogs\":[]}");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "{}");
  release = true;
  hook.join();
  EXPECT_EQ(send(server.telemetry_url(), "bad").status, 400);
  EXPECT_EQ(exports, std::vector<std::string>{"{\"resourceLogs\":[]}"});
  // The token guards it like the hook path.
  std::string wrong = server.telemetry_url();
  wrong.replace(wrong.find("/otel/") + 6, 4, "zzzz");
  EXPECT_EQ(send(wrong, "{}").status, 404);
  server.stop();
}

TEST(HookServerTest, ATelemetryOnlyServerAnswersNoHookEvents) {
  hooks::HookServer server(nullptr, {}, [](const std::string&) {});
  EXPECT_EQ(send(server.url(), "{}").status, 404);
  EXPECT_EQ(send(server.telemetry_url(), "{\"resourceLogs\":[]}").status, 200);
}

TEST(HookServerTest, ListensOnLoopbackBehindARandomToken) {
  std::vector<std::string> seen;
  hooks::HookServer server([&](const std::string& event) {
    seen.push_back(event);
    return hooks::HttpHookReply{200, "application/json", "{\"ok\":1}"};
  });
  ASSERT_EQ(server.url().rfind("http://127.0.0.1:", 0), 0u) << server.url();
  std::string token = server.url().substr(server.url().rfind('/') + 1);
  EXPECT_EQ(token.size(), 32u);

  Reply ok = send(server.url(), "{\"hook_event_name\":\"Stop\"}");
  EXPECT_EQ(ok.status, 200);
  EXPECT_EQ(ok.body, "{\"ok\":1}");
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0], "{\"hook_event_name\":\"Stop\"}");

  std::string guessed = server.url().substr(0, server.url().rfind('/') + 1) + "0123456789abcdef";
  EXPECT_EQ(send(guessed, "{}").status, 404);
  EXPECT_EQ(send(server.url(), "", Poco::Net::HTTPRequest::HTTP_GET).status, 405);
  EXPECT_EQ(seen.size(), 1u) << "only the right path and method reach the handler";

  hooks::HookServer other([](const std::string&) { return hooks::HttpHookReply{}; });
  EXPECT_NE(other.url(), server.url());
}

TEST(HookServerTest, EventsAreAnsweredOneAtATime) {
  std::atomic<int> inside{0};
  std::atomic<int> most{0};
  hooks::HookServer server([&](const std::string&) {
    int now = ++inside;
    most = std::max(most.load(), now);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    --inside;
    return hooks::HttpHookReply{200, "application/json", "{}"};
  });
  std::vector<std::thread> clients;
  std::atomic<int> ok{0};
  for (int i = 0; i < 4; ++i) {
    clients.emplace_back([&] {
      if (send(server.url(), "{}").status == 200) ++ok;
    });
  }
  for (std::thread& t : clients) t.join();
  EXPECT_EQ(ok, 4);
  EXPECT_EQ(most, 1);
}

TEST(HookServerTest, AHandlerThatThrowsIsAServerError) {
  hooks::HookServer server(
      [](const std::string&) -> hooks::HttpHookReply { throw std::runtime_error("disk full"); });
  Reply r = send(server.url(), "{}");
  EXPECT_EQ(r.status, 500);
  EXPECT_NE(r.body.find("disk full"), std::string::npos);
}

TEST(HookServerTest, StopWaitsAndRefusesLaterEvents) {
  hooks::HookServer server([](const std::string&) { return hooks::HttpHookReply{}; });
  std::string url = server.url();
  server.stop();
  server.stop();  // idempotent
  EXPECT_ANY_THROW(send(url, "{}"));
}

// The server has a few threads; none of them may be held by a connection that does
// not send its request, whoever opens it (any local user can).
TEST(HookServerTest, SilentConnectionsDoNotDelayAnEvent) {
  hooks::HookServer server(ok);
  std::vector<std::unique_ptr<RawConnection>> silent;
  for (int i = 0; i < 8; ++i) {
    silent.push_back(std::make_unique<RawConnection>(server.url()));
    ASSERT_TRUE(silent.back()->connected());
  }
  time_an_event(server);
}

TEST(HookServerTest, TricklingConnectionsDoNotDelayAnEvent) {
  hooks::HookServer server(ok);
  std::vector<std::unique_ptr<RawConnection>> slow;
  for (int i = 0; i < 8; ++i) {
    slow.push_back(std::make_unique<RawConnection>(server.url()));
    ASSERT_TRUE(slow.back()->connected());
  }
  // A request line, then headers, a byte every 100 ms each.
  std::string request = "POST /hook/" + std::string(40, 'a') + " HTTP/1.1\r\nHost: x\r\n";
  std::atomic<bool> done{false};
  std::thread trickle([&] {
    for (std::size_t i = 0; !done; i = (i + 1) % request.size()) {
      for (auto& c : slow) c->send(request.substr(i, 1));
      std::this_thread::sleep_for(milliseconds(100));
    }
  });
  std::this_thread::sleep_for(milliseconds(150));  // the first bytes are in
  time_an_event(server);
  done = true;
  trickle.join();
}

TEST(HookServerTest, IdleKeptAliveConnectionsDoNotDelayAnEvent) {
  hooks::HookServer server(ok);
  Poco::URI uri(server.url());
  std::vector<std::unique_ptr<Poco::Net::HTTPClientSession>> idle;
  for (int i = 0; i < 8; ++i) {
    idle.push_back(std::make_unique<Poco::Net::HTTPClientSession>(uri.getHost(), uri.getPort()));
    idle.back()->setKeepAlive(true);
    idle.back()->setTimeout(Poco::Timespan(3, 0));
    for (int k = 0; k < 2; ++k) {  // two requests on one connection
      Poco::Net::HTTPRequest request(Poco::Net::HTTPRequest::HTTP_POST, uri.getPath(),
                                     Poco::Net::HTTPMessage::HTTP_1_1);
      request.setContentLength(2);
      idle.back()->sendRequest(request) << "{}";
      Poco::Net::HTTPResponse response;
      std::string body;
      Poco::StreamCopier::copyToString(idle.back()->receiveResponse(response), body);
      ASSERT_EQ(response.getStatus(), 200);
      ASSERT_EQ(body, "{}");
    }
  }
  time_an_event(server);
}

// The token is checked first: a request line naming another path is answered at
// once, without the server waiting for the headers (it never reads them).
TEST(HookServerTest, AWrongPathIsRefusedAfterItsRequestLine) {
  hooks::HookServer server(ok, {}, [](const std::string&) {});
  std::string hook = path_of(server.url());
  std::string guessed = hook.substr(0, hook.size() - 4) + "0000";
  for (const std::string& path :
       {guessed, hook + "x", hook.substr(0, hook.size() - 1), std::string("/"),
        hook.substr(0, hook.rfind('/') + 1) + std::string(2000, 'f')}) {
    RawConnection c(server.url());
    ASSERT_TRUE(c.send("POST " + path + " HTTP/1.1\r\n"));
    RawConnection::Received r = c.receive(milliseconds(1000));
    EXPECT_TRUE(r.closed) << path;
    EXPECT_EQ(r.data.substr(0, 13), path.size() > 1000 ? "HTTP/1.1 414 " : "HTTP/1.1 404 ") << path;
  }
}

TEST(HookServerTest, ConnectionsAreClosedAtTheirDeadlineHoweverSlowlyTheySend) {
  hooks::HookServerLimits limits;
  limits.head_timeout = milliseconds(200);
  limits.idle_timeout = milliseconds(300);
  hooks::HookServer server(ok, {}, {}, limits);
  RawConnection silent(server.url());
  RawConnection slow(server.url());
  std::string request = "POST " + path_of(server.url()) + " HTTP/1.1\r\nHost: x\r\n";
  std::atomic<bool> done{false};
  std::thread trickle([&] {
    for (std::size_t i = 0; !done && slow.send(request.substr(i % request.size(), 1)); ++i) {
      std::this_thread::sleep_for(milliseconds(20));
    }
  });
  Clock::time_point start = Clock::now();
  EXPECT_TRUE(silent.receive(milliseconds(1500)).closed);
  // Each byte comes well within any wait for one, and the request line names the
  // token: the whole head still has its deadline.
  EXPECT_TRUE(slow.receive(milliseconds(1500)).closed);
  EXPECT_LT(Clock::now() - start, milliseconds(1000));
  done = true;
  trickle.join();

  // A connection kept alive after a request is closed once it has been idle too long.
  RawConnection kept(server.url());
  kept.send("POST " + path_of(server.url()) + " HTTP/1.1\r\nContent-Length: 2\r\n\r\n{}");
  RawConnection::Received r = kept.receive(milliseconds(1500));
  EXPECT_TRUE(r.closed);
  EXPECT_EQ(r.data.substr(0, 13), "HTTP/1.1 200 ");
}

TEST(HookServerTest, StrangersBeyondTheLimitAreClosedOldestFirst) {
  hooks::HookServerLimits limits;
  limits.max_strangers = 2;
  hooks::HookServer server(ok, {}, {}, limits);
  std::string head = "POST " + path_of(server.url()) + " HTTP/1.1\r\nContent-Length: 2\r\n\r\n";
  // One that has named the token is no stranger.
  RawConnection agent(server.url());
  ASSERT_TRUE(agent.send(head + "{}"));
  ASSERT_EQ(agent.receive(milliseconds(1000), whole_reply).data.substr(0, 13), "HTTP/1.1 200 ");
  RawConnection first(server.url());
  RawConnection second(server.url());
  RawConnection third(server.url());
  EXPECT_TRUE(first.receive(milliseconds(1000)).closed);
  EXPECT_FALSE(second.receive(milliseconds(0)).closed);
  ASSERT_TRUE(agent.send(head + "{}"));
  RawConnection::Received again = agent.receive(milliseconds(1000), whole_reply);
  EXPECT_FALSE(again.closed);
  EXPECT_EQ(again.data.substr(0, 13), "HTTP/1.1 200 ");
}

TEST(HookServerTest, BodiesComeWithALengthChunkedOrAfterContinue) {
  std::vector<std::string> seen;
  hooks::HookServer server([&](const std::string& event) {
    seen.push_back(event);
    return hooks::HttpHookReply{200, "application/json", "{}"};
  });
  std::string line = "POST " + path_of(server.url()) + " HTTP/1.1\r\n";
  RawConnection c(server.url());
  ASSERT_TRUE(c.send(
      line + "Transfer-Encoding: chunked\r\n\r\n3\r\n{\"a\r\n5;x=y\r\n\":1}\n\r\n0\r\n\r\n"));
  EXPECT_EQ(c.receive(milliseconds(1000), whole_reply).data.substr(0, 13), "HTTP/1.1 200 ");
  ASSERT_TRUE(c.send(line + "Expect: 100-continue\r\nContent-Length: 4\r\n\r\n"));
  EXPECT_EQ(c.receive(milliseconds(1000),
                      [](const std::string& d) { return d.find("\r\n\r\n") != std::string::npos; })
                .data,
            "HTTP/1.1 100 Continue\r\n\r\n");
  ASSERT_TRUE(c.send("[42]"));
  EXPECT_EQ(c.receive(milliseconds(1000), whole_reply).data.substr(0, 13), "HTTP/1.1 200 ");
  EXPECT_EQ(seen, (std::vector<std::string>{"{\"a\":1}\n", "[42]"}));
}

TEST(HookServerTest, OversizedRequestsAreRefusedBeforeTheirBodies) {
  hooks::HookServer server(ok);
  std::string line = "POST " + path_of(server.url()) + " HTTP/1.1\r\n";
  struct Case {
    std::string head;
    std::string status;
  };
  for (const Case& k : {Case{line + "Content-Length: 67108865\r\n\r\n", "413"},
                        Case{line + "Transfer-Encoding: chunked\r\n\r\n4000001\r\n", "413"},
                        Case{line + "X: " + std::string(70000, 'x') + "\r\n\r\n", "431"},
                        Case{line + "Transfer-Encoding: gzip\r\n\r\n", "501"},
                        Case{"GET " + path_of(server.url()) + " HTTP/1.1\r\n\r\n", "405"}}) {
    RawConnection c(server.url());
    ASSERT_TRUE(c.send(k.head));
    RawConnection::Received r = c.receive(milliseconds(1000));
    EXPECT_TRUE(r.closed) << k.status;
    EXPECT_EQ(r.data.substr(0, 13), "HTTP/1.1 " + k.status + " ");
  }
}

TEST(HttpReplyTest, ProceedIsTheHooksJson) {
  hooks::HookAnswer proceed;
  proceed.event = "PostToolUseFailure";
  proceed.stdout_json = "{\"hookSpecificOutput\":{}}";
  hooks::HttpHookReply r = hooks::to_http_reply(proceed);
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, proceed.stdout_json);
  proceed.stdout_json.clear();
  EXPECT_EQ(hooks::to_http_reply(proceed).body, "{}") << "an empty body is not JSON";
}

TEST(HttpReplyTest, BlockingAnswersBlockInJson) {
  hooks::HookAnswer pre{2, "", "checkpointing failed", "PreToolUse"};
  hooks::HttpHookReply r = hooks::to_http_reply(pre);
  EXPECT_EQ(r.status, 200) << "Claude Code only reads a decision from a 2xx reply";
  Object::Ptr specific = parse(r.body)->getObject("hookSpecificOutput");
  ASSERT_FALSE(specific.isNull()) << r.body;
  EXPECT_EQ(specific->getValue<std::string>("permissionDecision"), "deny");
  EXPECT_EQ(specific->getValue<std::string>("permissionDecisionReason"), "checkpointing failed");

  hooks::HookAnswer post{2, "", "could not record", "PostToolUse"};
  Object::Ptr block = parse(hooks::to_http_reply(post).body);
  EXPECT_EQ(block->getValue<std::string>("decision"), "block");
  EXPECT_EQ(block->getValue<std::string>("reason"), "could not record");

  hooks::HookAnswer stop{2, "", "could not mark complete", "Stop"};
  Object::Ptr message = parse(hooks::to_http_reply(stop).body);
  EXPECT_FALSE(message->has("decision")) << "a Stop is never blocked: the agent would go on";
  EXPECT_EQ(message->getValue<std::string>("systemMessage"), "could not mark complete");
}

TEST(HttpReplyTest, NonBlockingErrorsAreA400) {
  hooks::HookAnswer bad{1, "", "shadowbox: ignoring a malformed hook event", ""};
  hooks::HttpHookReply r = hooks::to_http_reply(bad);
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(r.body, bad.stderr_text);
}

TEST(HttpSettingsTest, ToolEventsPostAndSessionStartRunsTheCommand) {
  std::string url = "http://127.0.0.1:4242/hook/abc";
  std::string text = hooks::install_http_hooks("{\"model\":\"opus\"}", url, "sb hook claude-code");
  Object::Ptr hooks_object = parse(text)->getObject("hooks");
  for (const char* event : hooks::kHookEvents) {
    Object::Ptr hook = hooks_object->getArray(event)->getObject(0)->getArray("hooks")->getObject(0);
    if (std::string(event) == "SessionStart") {
      EXPECT_EQ(hook->getValue<std::string>("type"), "command") << "no HTTP hooks for " << event;
      EXPECT_EQ(hook->getValue<std::string>("command"), "sb hook claude-code");
    } else {
      EXPECT_EQ(hook->getValue<std::string>("type"), "http") << event;
      EXPECT_EQ(hook->getValue<std::string>("url"), url);
    }
  }
  // Installing again replaces ours; uninstalling removes both kinds and keeps the rest.
  std::string again = hooks::install_http_hooks(text, url, "sb hook claude-code");
  EXPECT_EQ(again, text);
  std::string removed = hooks::uninstall_hooks(again);
  EXPECT_EQ(removed.find("127.0.0.1"), std::string::npos) << removed;
  EXPECT_EQ(removed.find("hook claude-code"), std::string::npos) << removed;
  EXPECT_NE(removed.find("opus"), std::string::npos);

  EXPECT_THROW(hooks::install_http_hooks("{}", "http://example.com/hook/x", "c"), sandbox::Error)
      << "hooks only ever post to loopback";
}

}  // namespace
