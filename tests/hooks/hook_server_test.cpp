// The HTTP side of the Claude Code hook: the loopback HookServer, the replies it
// gives for each kind of answer, and the settings entries that point Claude Code at it.
#include <atomic>
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
#include "sandbox/errors.hpp"

namespace {

using Poco::JSON::Object;

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
