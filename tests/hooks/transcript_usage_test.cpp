// TranscriptUsage and SpendMeter: requests counted once however often streaming wrote
// them, subagents' transcripts included, lines read as they are completed, unknown
// models priced high, and the spend charged to containment without counting anything
// twice or giving anything back.
#include <chrono>
#include <thread>

#include <gtest/gtest.h>
#include <boost/filesystem.hpp>

#include "hooks/agent_adapter.hpp"
#include "hooks/agent_session_state.hpp"
#include "hooks/agent_spend.hpp"
#include "hooks/run_slice_types.hpp"
#include "hooks/transcript_usage.hpp"
#include "test_support.hpp"

namespace {

namespace fs = boost::filesystem;
using hooks::TranscriptUsage;
using testing_support::write_file;

// One assistant entry as Claude Code writes it.
std::string assistant(const std::string& message_id, const std::string& request_id,
                      const std::string& model, int input, int output, int cache_read = 0,
                      const std::string& cache = "") {
  return "{\"type\":\"assistant\",\"requestId\":\"" + request_id +
         "\",\"isSidechain\":false,\"message\":{\"id\":\"" + message_id + "\",\"model\":\"" +
         model + "\",\"role\":\"assistant\",\"content\":[],\"usage\":{" +
         "\"input_tokens\":" + std::to_string(input) +
         ",\"output_tokens\":" + std::to_string(output) +
         ",\"cache_read_input_tokens\":" + std::to_string(cache_read) + cache + "}}}\n";
}

void append(const fs::path& file, const std::string& text) {
  std::string old = fs::exists(file) ? testing_support::read_file(file) : "";
  write_file(file, old + text);
}

class TranscriptUsageTest : public ::testing::Test {
 protected:
  testing_support::TempDir dir_;
  fs::path transcript_ = dir_ / "projects/-ws/sess-1.jsonl";
  runs::PriceTable prices_ = runs::PriceTable::defaults();
};

TEST_F(TranscriptUsageTest, AStreamedRequestCountsOnceWithItsLargestUsage) {
  // Streaming writes msg_1 three times as it grows; a user line mentions "usage" too.
  append(transcript_, "{\"type\":\"user\",\"message\":{\"content\":\"what is the usage?\"}}\n");
  append(transcript_, assistant("msg_1", "req_1", "claude-sonnet-4-6", 1000, 1));
  append(transcript_, assistant("msg_1", "req_1", "claude-sonnet-4-6", 1000, 500));
  append(transcript_, assistant("msg_1", "req_1", "claude-sonnet-4-6", 1000, 2));
  append(transcript_, assistant("msg_2", "req_2", "claude-sonnet-4-6", 2000, 100));
  TranscriptUsage usage(prices_);
  usage.update({transcript_});
  ASSERT_EQ(usage.requests().size(), 2u);
  EXPECT_EQ(usage.requests().at("msg_1 req_1").usage.output, 500u);
  TranscriptUsage::Cost cost = usage.cost();
  EXPECT_EQ(cost.requests, 2u);
  EXPECT_NEAR(cost.usd, (3000 * 3.0 + 600 * 15.0) / 1e6, 1e-12);
  EXPECT_TRUE(cost.unknown_models.empty());
}

TEST_F(TranscriptUsageTest, CacheWritesAreSplitByDurationAndReadsPricedApart) {
  append(transcript_,
         assistant("msg_1", "req_1", "claude-sonnet-4-6", 0, 0, 1'000'000,
                   ",\"cache_creation_input_tokens\":3000000,\"cache_creation\":{"
                   "\"ephemeral_5m_input_tokens\":1000000,\"ephemeral_1h_input_tokens\":2000000}"));
  // Without the split, all writes are priced as 5-minute ones.
  append(transcript_, assistant("msg_2", "req_2", "claude-sonnet-4-6", 0, 0, 0,
                                ",\"cache_creation_input_tokens\":1000000"));
  TranscriptUsage usage(prices_);
  usage.update({transcript_});
  EXPECT_NEAR(usage.cost().usd, 0.3 + 3.75 + 2 * 6 + 3.75, 1e-9);
}

TEST_F(TranscriptUsageTest, OnlyWhatWasAppendedIsReadAndAnUnfinishedLineWaits) {
  append(transcript_, assistant("msg_1", "req_1", "claude-sonnet-4-6", 1000, 10));
  std::string second = assistant("msg_2", "req_2", "claude-sonnet-4-6", 1000, 10);
  append(transcript_, second.substr(0, 40));  // being written
  TranscriptUsage usage(prices_);
  usage.update({transcript_});
  EXPECT_EQ(usage.requests().size(), 1u);
  append(transcript_, second.substr(40));
  usage.update({transcript_});
  EXPECT_EQ(usage.requests().size(), 2u);
  // A file replaced by a shorter one is read again; what it repeats counts once.
  write_file(transcript_, assistant("msg_1", "req_1", "claude-sonnet-4-6", 1000, 10));
  usage.update({transcript_});
  EXPECT_EQ(usage.requests().size(), 2u);
  usage.update({dir_ / "missing.jsonl"});
  EXPECT_EQ(usage.requests().size(), 2u);
}

TEST_F(TranscriptUsageTest, SubagentsTranscriptsBelongToTheSession) {
  append(transcript_, assistant("msg_1", "req_1", "claude-sonnet-4-6", 1000, 10));
  fs::path sub = dir_ / "projects/-ws/sess-1/subagents/agent-a1.jsonl";
  fs::path nested = dir_ / "projects/-ws/sess-1/subagents/team/agent-b2.jsonl";
  append(sub, assistant("msg_s", "req_s", "claude-haiku-4-5", 1000, 10));
  append(nested, assistant("msg_n", "req_n", "claude-haiku-4-5", 1000, 10));
  write_file(dir_ / "projects/-ws/sess-2.jsonl", assistant("msg_x", "req_x", "m", 1, 1));
  std::vector<fs::path> files = hooks::session_transcripts(transcript_);
  EXPECT_EQ(files.size(), 3u);
  TranscriptUsage usage(prices_);
  usage.update(files);
  EXPECT_EQ(usage.requests().size(), 3u);
  EXPECT_TRUE(hooks::session_transcripts(dir_ / "nothing.jsonl").empty());
}

TEST_F(TranscriptUsageTest, AnUnknownModelIsPricedAtTheHighestRatesNeverAtZero) {
  append(transcript_, assistant("msg_1", "req_1", "claude-future-9", 1'000'000, 0));
  // Claude Code's own entries (no model request) cost nothing and name no model.
  append(transcript_, assistant("msg_2", "req_2", "<synthetic>", 0, 0));
  TranscriptUsage usage(prices_);
  usage.update({transcript_});
  TranscriptUsage::Cost cost = usage.cost();
  EXPECT_EQ(cost.unknown_models, (std::set<std::string>{"claude-future-9"}));
  EXPECT_DOUBLE_EQ(cost.usd, prices_.highest().input);
  EXPECT_EQ(cost.requests, 1u);
}

TEST_F(TranscriptUsageTest, AFileReplacedByALongerOneIsReadFromItsStart) {
  append(transcript_, assistant("msg_1", "req_1", "claude-sonnet-4-6", 10, 10));
  TranscriptUsage usage(prices_);
  usage.update({transcript_});
  ASSERT_EQ(usage.requests().size(), 1u);
  // Another file in its place (a rewound session's, say), longer than what was read:
  // read from where the old one ended, its first requests would be missed.
  fs::path other = dir_ / "other.jsonl";
  write_file(other, assistant("msg_2", "req_2", "claude-sonnet-4-6", 10, 10) +
                        assistant("msg_3", "req_3", "claude-sonnet-4-6", 10, 10));
  fs::rename(other, transcript_);
  usage.update({transcript_});
  EXPECT_EQ(usage.requests().size(), 3u);
  EXPECT_EQ(usage.requests().count("msg_2 req_2"), 1u);
}

TEST_F(TranscriptUsageTest, AMeterMeetingASessionThatCountedNothingReadsAgainForIt) {
  // The watch daemon keeps a run's meter between events: a run made anew under the same
  // name has a session that counted nothing, and must not be charged the old run's.
  hooks::register_agent_run_slice_types();
  hooks::SpendMeter meter(prices_, dir_ / "agent-cost.json");
  append(transcript_, assistant("msg_1", "req_1", "claude-sonnet-4-6", 0, 66'667));
  sandbox::Session first;
  meter.update(first, nullptr, {transcript_});
  ASSERT_EQ(first.latest<hooks::AgentSpend>()->requests, 1u);
  fs::path mine = dir_ / "projects/-ws/sess-2.jsonl";
  append(mine, assistant("msg_9", "req_9", "claude-sonnet-4-6", 0, 10));
  sandbox::Session fresh;
  meter.update(fresh, nullptr, {mine});
  std::optional<hooks::AgentSpend> spend = fresh.latest<hooks::AgentSpend>();
  ASSERT_TRUE(spend);
  EXPECT_EQ(spend->requests, 1u) << "only the new run's request";
  EXPECT_LT(spend->transcript_usd, 0.01);
  // The same session again: the meter reads on, it does not start over.
  append(mine, assistant("msg_10", "req_10", "claude-sonnet-4-6", 0, 10));
  meter.update(fresh, nullptr, {mine});
  EXPECT_EQ(fresh.latest<hooks::AgentSpend>()->requests, 2u);
}

TEST_F(TranscriptUsageTest, TheMeterChargesWhatIsNewAndTheLargerOfTranscriptAndReports) {
  hooks::register_agent_run_slice_types();
  fs::path reported = dir_ / "agent-cost.json";
  sandbox::Session session;
  policy::ExecutionContext context({.max_cost_usd = 10.0});
  hooks::SpendMeter meter(prices_, reported);
  // $1 in the transcript (Sonnet: 1M output tokens is $15; 66,667 is $1.00005).
  append(transcript_, assistant("msg_1", "req_1", "claude-sonnet-4-6", 0, 66'667));
  EXPECT_TRUE(meter.update(session, &context, {transcript_}).empty());
  EXPECT_NEAR(context.state().cost_usd, 1.0, 1e-3);
  // The agent reports more than the transcript shows: the larger figure counts.
  write_file(reported, "{\"usd\": 2.5, \"requests\": 1}\n");
  meter.update(session, &context, {transcript_});
  EXPECT_NEAR(context.state().cost_usd, 2.5, 1e-9);
  // Nothing new: nothing charged.
  meter.update(session, &context, {transcript_});
  EXPECT_NEAR(context.state().cost_usd, 2.5, 1e-9);
  // A new request of an unknown model: reported once, and the transcript leads again.
  append(transcript_, assistant("msg_2", "req_2", "gpt-x", 0, 30'000));
  EXPECT_EQ(meter.update(session, &context, {transcript_}), std::vector<std::string>{"gpt-x"});
  EXPECT_TRUE(meter.update(session, &context, {transcript_}).empty());
  double expected = 66'667 * 15.0 / 1e6 + 30'000 * prices_.highest().output / 1e6;
  EXPECT_NEAR(context.state().cost_usd, expected, 1e-9);
  std::optional<hooks::AgentSpend> spend = session.latest<hooks::AgentSpend>();
  ASSERT_TRUE(spend);
  EXPECT_NEAR(spend->charged_usd, expected, 1e-9);
  EXPECT_NEAR(spend->reported_usd, 2.5, 1e-9);
  EXPECT_EQ(spend->requests, 2u);
  // Another process of the run (a fresh meter, a fresh context continuing the count)
  // that cannot see the transcript charges nothing and keeps the figures.
  policy::ExecutionContext next({.max_cost_usd = 10.0}, {}, nullptr, {}, context.state());
  hooks::SpendMeter fresh(prices_, reported);
  fresh.update(session, &next, {});
  EXPECT_NEAR(next.state().cost_usd, expected, 1e-9);
  EXPECT_NEAR(session.latest<hooks::AgentSpend>()->charged_usd, expected, 1e-9);
}

TEST_F(TranscriptUsageTest, NearTheCeilingTheRequestOfTheCallIsWaitedFor) {
  hooks::register_agent_run_slice_types();
  // $1 requests that ask for one tool call each.
  auto request = [&](int n) {
    std::string id = std::to_string(n);
    append(transcript_, "{\"type\":\"assistant\",\"requestId\":\"req_" + id +
                            "\",\"message\":{\"id\":\"msg_" + id +
                            "\",\"model\":\"claude-sonnet-4-6\",\"content\":[{\"type\":"
                            "\"tool_use\",\"id\":\"toolu_" +
                            id +
                            "\",\"name\":\"Bash\",\"input\":{}}],\"usage\":{"
                            "\"output_tokens\":66667}}}\n");
  };
  sandbox::Session session;
  policy::ExecutionContext context({.max_cost_usd = 5.0});
  hooks::SpendMeter meter(prices_, dir_ / "agent-cost.json");
  meter.set_max_wait(std::chrono::seconds(5));
  // Far from the ceiling ($1 charged + 2 x $1 < $5), a call whose request is not written
  // yet is not waited for.
  request(1);
  meter.update(session, &context, {transcript_}, "toolu_1");
  auto start = std::chrono::steady_clock::now();
  meter.update(session, &context, {transcript_}, "toolu_2");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1));
  request(2);
  request(3);
  meter.update(session, &context, {transcript_}, "toolu_3");
  EXPECT_NEAR(context.state().cost_usd, 3 * 1.000005, 1e-9);
  // Near it ($3 + 2 x $1 >= $5), the request is waited for, and charged.
  std::thread writer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    request(4);
  });
  meter.update(session, &context, {transcript_}, "toolu_4");
  writer.join();
  EXPECT_NEAR(context.state().cost_usd, 4 * 1.000005, 1e-9);
  // A request that never comes is waited for no longer than the limit.
  meter.set_max_wait(std::chrono::milliseconds(200));
  start = std::chrono::steady_clock::now();
  meter.update(session, &context, {transcript_}, "toolu_never");
  auto waited = std::chrono::steady_clock::now() - start;
  EXPECT_GE(waited, std::chrono::milliseconds(200));
  EXPECT_LT(waited, std::chrono::seconds(2));
}

}  // namespace

namespace {

TEST_F(TranscriptUsageTest, MessagesAreCountedOnceAndPerFile) {
  append(
      transcript_,
      "{\"type\":\"user\",\"uuid\":\"u1\",\"message\":{\"role\":\"user\",\"content\":\"go\"}}\n");
  append(transcript_, assistant("msg_1", "req_1", "claude-sonnet-4-6", 10, 1));
  append(transcript_, assistant("msg_1", "req_1", "claude-sonnet-4-6", 10, 9));  // streamed
  append(transcript_,
         "{\"type\":\"system\",\"uuid\":\"s1\",\"content\":\"hook ran: "
         "\\\"type\\\":\\\"user\\\"\"}\n");
  fs::path other = dir_ / "projects/-ws/sess-2.jsonl";
  append(other, "{\"type\":\"user\",\"uuid\":\"u9\",\"message\":{\"content\":\"hi\"}}\n");
  TranscriptUsage usage(prices_);
  usage.update({transcript_, other});
  EXPECT_EQ(usage.messages(transcript_), 2u) << "the prompt and one reply";
  EXPECT_EQ(usage.messages(other), 1u);
  append(transcript_, "{\"type\":\"user\",\"uuid\":\"u2\",\"message\":{\"content\":[]}}\n");
  usage.update({transcript_});
  EXPECT_EQ(usage.messages(transcript_), 3u) << "read as it grows";
  EXPECT_EQ(usage.messages(dir_ / "none.jsonl"), 0u);
}

}  // namespace

namespace {

// A Codex CLI rollout's lines (0.169.0): the turn's model, the call the response asked
// for, and the response's usage (cached input inside input_tokens).
std::string codex_turn(const std::string& model) {
  return R"({"timestamp":"t","type":"turn_context","payload":{"turn_id":"u","model":")" + model +
         "\"}}\n";
}
std::string codex_usage(const std::string& response, int input, int cached, int output) {
  return R"({"timestamp":"t","type":"token_usage_record","payload":{"response_id":")" + response +
         R"(","usage":{"input_tokens":)" + std::to_string(input) +
         ",\"cached_input_tokens\":" + std::to_string(cached) +
         ",\"cache_write_input_tokens\":0,\"output_tokens\":" + std::to_string(output) +
         ",\"reasoning_output_tokens\":0},\"thread_token_usage\":{\"input_tokens\":1}}}\n";
}

TEST(AgentSessionFiles, ACodexRolloutIsPricedByResponseWithCachedInputApart) {
  testing_support::TempDir dir;
  fs::path rollout = dir / "rollout-2026-11-25T10-00-00-thread.jsonl";
  runs::PriceTable prices;
  prices.set("gpt-5", {1, 10, 1, 1, 0.1});
  append(rollout, codex_turn("gpt-5.1-codex"));
  append(rollout,
         R"({"type":"response_item","payload":{"type":"function_call","call_id":"call_1"}})"
         "\n");
  append(rollout, codex_usage("resp_1", 1'000'000, 400'000, 100'000));
  append(rollout, codex_usage("resp_1", 1'000'000, 400'000, 100'000));  // written again
  append(rollout, codex_usage("resp_2", 2'000'000, 0, 0));
  TranscriptUsage usage(prices);
  usage.update({rollout});
  EXPECT_EQ(usage.cost().requests, 2u);
  // resp_1: 600k input, 400k cached, 100k output; resp_2: 2M input.
  EXPECT_NEAR(usage.cost().usd, 0.6 + 0.04 + 1.0 + 2.0, 1e-9);
  EXPECT_TRUE(usage.cost().unknown_models.empty());
  EXPECT_TRUE(usage.has_tool_call("call_1"));
}

TEST(AgentSessionFiles, AGeminiChatFileIsPricedByMessageWithThoughtsAsOutput) {
  testing_support::TempDir dir;
  fs::path chat = dir / "session-2026-11-25T10-16-18c99f68.jsonl";
  runs::PriceTable prices;
  prices.set("gemini-2.5-flash", {1, 10, 1, 1, 0.1});
  auto message = [](const std::string& id, int input, int cached, int output, int thoughts) {
    return R"({"id":")" + id +
           R"(","timestamp":"t","type":"gemini","content":"","tokens":{"input":)" +
           std::to_string(input) + ",\"output\":" + std::to_string(output) +
           ",\"cached\":" + std::to_string(cached) + ",\"thoughts\":" + std::to_string(thoughts) +
           ",\"tool\":0,\"total\":1},\"model\":\"gemini-2.5-flash\"}\n";
  };
  append(chat, R"({"id":"u1","timestamp":"t","type":"user","content":[{"text":"go"}]})"
               "\n");
  append(chat, message("m1", 1'000'000, 0, 100'000, 50'000));
  append(chat, message("m1", 1'000'000, 0, 100'000, 50'000));  // the record updated
  append(chat, message("m2", 1'000'000, 1'000'000, 0, 0));
  TranscriptUsage usage(prices);
  usage.update({chat});
  EXPECT_EQ(usage.cost().requests, 2u);
  EXPECT_NEAR(usage.cost().usd, 1.0 + 1.5 + 0.1, 1e-9);
}

}  // namespace

namespace {

using hooks::adapter_for;
using hooks::AgentKind;
using hooks::SessionLine;

TEST(AgentSessionLines, ClaudeCodesAdapterReadsItsTranscriptLines) {
  const hooks::AgentAdapter& claude = adapter_for(AgentKind::kClaudeCode);
  std::string reply =
      R"({"type":"assistant","requestId":"req_1","message":{"id":"msg_1","model":"claude-sonnet-4-6",)"
      R"("content":[{"type":"tool_use","id":"toolu_1","name":"Bash","input":{}}],)"
      R"("usage":{"input_tokens":10,"output_tokens":5,"cache_read_input_tokens":3,)"
      R"("cache_creation_input_tokens":7}}})";
  std::optional<SessionLine> read = claude.read_session_line(reply);
  ASSERT_TRUE(read && read->request);
  EXPECT_EQ(read->request->key, "msg_1 req_1");
  EXPECT_EQ(read->request->model, "claude-sonnet-4-6");
  EXPECT_EQ(read->request->usage.input, 10u);
  EXPECT_EQ(read->request->usage.output, 5u);
  EXPECT_EQ(read->request->usage.cache_read, 3u);
  EXPECT_EQ(read->request->usage.cache_write_5m, 7u);
  EXPECT_EQ(read->tool_calls, std::vector<std::string>{"toolu_1"});
  EXPECT_EQ(read->message, "assistant msg_1");
  // Claude Agent SDK applications write the same transcripts.
  EXPECT_EQ(adapter_for(AgentKind::kClaudeSdk).read_session_line(reply), read);
  read = claude.read_session_line(R"({"type":"user","uuid":"u1","message":{"content":"go"}})");
  ASSERT_TRUE(read);
  EXPECT_EQ(read->message, "user u1");
  EXPECT_FALSE(read->request);
  EXPECT_FALSE(claude.read_session_line(R"({"type":"system","uuid":"s1"})"));
  EXPECT_FALSE(claude.read_session_line(codex_usage("resp_1", 1, 0, 1)));
}

TEST(AgentSessionLines, CodexsAdapterReadsItsRolloutLines) {
  const hooks::AgentAdapter& codex = adapter_for(AgentKind::kCodex);
  std::optional<SessionLine> read = codex.read_session_line(codex_turn("gpt-5.1-codex"));
  ASSERT_TRUE(read);
  EXPECT_EQ(read->file_model, "gpt-5.1-codex");
  EXPECT_FALSE(read->request);
  read = codex.read_session_line(
      R"({"type":"response_item","payload":{"type":"function_call","call_id":"call_1"}})");
  ASSERT_TRUE(read);
  EXPECT_EQ(read->tool_calls, std::vector<std::string>{"call_1"});
  read = codex.read_session_line(codex_usage("resp_1", 1000, 400, 100));
  ASSERT_TRUE(read && read->request);
  EXPECT_EQ(read->request->key, "codex resp_1");
  EXPECT_EQ(read->request->model, "") << "the turn_context's, which the file named before";
  EXPECT_EQ(read->request->usage.input, 600u);
  EXPECT_EQ(read->request->usage.cache_read, 400u);
  EXPECT_EQ(read->request->usage.output, 100u);
  EXPECT_FALSE(codex.read_session_line(assistant("msg_1", "req_1", "claude-sonnet-4-6", 1, 1)));
}

TEST(AgentSessionLines, GeminisAdapterReadsItsChatFileLines) {
  const hooks::AgentAdapter& gemini = adapter_for(AgentKind::kGemini);
  std::optional<SessionLine> read = gemini.read_session_line(
      R"({"id":"m1","type":"gemini","content":"","tokens":{"input":1000,"output":100,)"
      R"("cached":400,"thoughts":50,"tool":0,"total":1},"model":"gemini-2.5-flash"})");
  ASSERT_TRUE(read && read->request);
  EXPECT_EQ(read->request->key, "gemini m1");
  EXPECT_EQ(read->request->model, "gemini-2.5-flash");
  EXPECT_EQ(read->request->usage.input, 600u);
  EXPECT_EQ(read->request->usage.cache_read, 400u);
  EXPECT_EQ(read->request->usage.output, 150u) << "thoughts are billed as output";
  EXPECT_FALSE(gemini.read_session_line(R"({"id":"u1","type":"user","content":[]})"));
  EXPECT_FALSE(gemini.read_session_line(codex_usage("resp_1", 1, 0, 1)));
}

}  // namespace
