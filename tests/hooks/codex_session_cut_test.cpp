// Codex's conversation cut before a tool call (codex_cut_session), over rollouts the
// pinned Codex CLI wrote against the scripted mock (fixtures/mock-openai): a PreToolUse
// hook copies $CODEX_HOME/sessions at every call, as shadowbox preserves the HOME just
// before it records the call. Run once for the suite: a prompt, call_a, a reply of two
// parallel calls (call_b1, call_b2), a reply that says something then calls call_c,
// "done". The cut is a new rollout under a new thread id holding the lines before the
// reply that made the call; the original is left as it was; what cannot be cut is an
// error and writes nothing. (tests/e2e/codex_cli_test.cpp resumes a cut session with the
// real CLI.)
#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

#include <Poco/JSON/Object.h>
#include <Poco/JSON/Parser.h>

#include <gtest/gtest.h>
#include <boost/filesystem/operations.hpp>

#include "../e2e/agent_harness.hpp"
#include "hooks/agent_adapter.hpp"
#include "hooks/codex_adapter.hpp"
#include "sandbox/errors.hpp"
#include "test_support.hpp"

namespace {

namespace fs = boost::filesystem;
using Poco::JSON::Object;
using testing_support::read_file;
using testing_support::write_file;

constexpr const char* kNewThread = "01a21899-0000-7000-8000-0000000000aa";

std::vector<Object::Ptr> json_lines(const std::string& text) {
  std::vector<Object::Ptr> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    Poco::JSON::Parser parser;
    out.push_back(parser.parse(line).extract<Object::Ptr>());
  }
  return out;
}

// The call ids of the function calls (or their outputs) in a rollout's response items.
std::vector<std::string> items(const std::string& rollout, const std::string& type) {
  std::vector<std::string> out;
  for (const Object::Ptr& line : json_lines(rollout)) {
    Object::Ptr payload = line->getObject("payload");
    if (line->getValue<std::string>("type") == "response_item" &&
        payload->getValue<std::string>("type") == type) {
      out.push_back(payload->getValue<std::string>("call_id"));
    }
  }
  return out;
}

// The rollouts under home/.codex/sessions.
std::vector<fs::path> rollouts(const fs::path& home) {
  std::vector<fs::path> out;
  for (fs::recursive_directory_iterator it(home / ".codex" / "sessions"), end; it != end; ++it) {
    if (fs::is_regular_file(it->path())) out.push_back(it->path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

class CodexSessionCutTest : public ::testing::Test {
 protected:
  // The real CLI's run, once for the suite.
  static void SetUpTestSuite() {
    suite_ = new testing_support::TempDir("shadowbox-codex-cut");
    if (!fs::exists(e2e::codex_binary())) return;
    fs::path codex_home = *suite_ / "codex-home";
    fs::create_directories(*suite_ / "ws");
    snapshots_ = new e2e::SessionSnapshots(*suite_ / "snapshots",
                                           {{codex_home / "sessions", ".codex/sessions"}});
    write_file(codex_home / "hooks.json",
               "{\"hooks\":{\"PreToolUse\":[{\"matcher\":\"*\",\"hooks\":[{\"type\":\"command\","
               "\"command\":\"" +
                   snapshots_->command() + "\",\"timeout\":30}]}]}}");
    auto shell = [](const std::string& command, const std::string& id,
                    const std::string& say = "") {
      return "{\"tool\":\"shell\",\"id\":\"" + id + "\"," +
             (say.empty() ? "" : "\"say\":\"" + say + "\",") + "\"input\":{\"command\":\"" +
             command + "\"}}";
    };
    write_file(*suite_ / "scenario.json",
               "{\"steps\":[" + shell("echo one > one.txt", "call_a") + ",{\"tools\":[" +
                   shell("echo two > two.txt", "call_b1") + "," +
                   shell("echo more > more.txt", "call_b2") + "]}," +
                   shell("echo three > three.txt", "call_c", "Now the third file.") +
                   ",{\"text\":\"done\"}]}");
    e2e::MockServer server(*suite_ / "scenario.json", *suite_ / "mock.log", e2e::MockApi::kOpenAi);
    write_file(codex_home / "config.toml",
               "model = \"gpt-5.1-codex\"\nmodel_provider = \"mock\"\n[model_providers.mock]\n"
               "name = \"mock\"\nbase_url = \"" +
                   server.base_url() +
                   "/v1\"\nenv_key = \"OPENAI_API_KEY\"\nwire_api = \"responses\"\n"
                   "request_max_retries = 0\nstream_max_retries = 0\n");
    run_ = new testing_support::CommandResult(testing_support::run_command(
        {e2e::codex_binary(), "exec", "--skip-git-repo-check",
         "--dangerously-bypass-approvals-and-sandbox", "--dangerously-bypass-hook-trust", "--json",
         "do three things"},
        *suite_ / "ws",
        {"HOME=" + (*suite_ / "home").string(), "CODEX_HOME=" + codex_home.string(),
         "OPENAI_API_KEY=sk-mock-key", "OPENAI_BASE_URL="},
        "", std::chrono::seconds(120)));
    std::istringstream out(run_->out);
    for (std::string line; std::getline(out, line);) {
      if (line.find("\"thread.started\"") == std::string::npos) continue;
      Poco::JSON::Parser parser;
      thread_ = parser.parse(line).extract<Object::Ptr>()->getValue<std::string>("thread_id");
    }
  }
  static void TearDownTestSuite() {
    delete run_;
    delete snapshots_;
    delete suite_;
    run_ = nullptr;
    snapshots_ = nullptr;
    suite_ = nullptr;
  }

  void SetUp() override {
    ASSERT_TRUE(fs::exists(e2e::codex_binary())) << "run scripts/setup.sh";
    ASSERT_EQ(run_->exit_code, 0) << run_->out << run_->err;
    ASSERT_FALSE(thread_.empty()) << run_->out;
  }

  // A HOME of this test: the sessions as they were when call's PreToolUse hook ran.
  fs::path home_at(const std::string& call) {
    fs::path snapshot = snapshots_->home_where("\"" + call + "\"");
    EXPECT_FALSE(snapshot.empty()) << "no snapshot at " << call;
    fs::path home = temp_ / ("home-" + call);
    testing_support::CommandResult copy =
        testing_support::run_command({"cp", "-R", snapshot.string(), home.string()});
    EXPECT_EQ(copy.exit_code, 0) << copy.err;
    return home;
  }
  hooks::SessionCutPoint point(const std::string& call) const {
    return hooks::SessionCutPoint{thread_, call, "Bash", ""};
  }
  // The rollout of thread in home.
  static fs::path rollout_of(const fs::path& home, const std::string& thread) {
    for (const fs::path& file : rollouts(home)) {
      if (file.filename().string().ends_with("-" + thread + ".jsonl")) return file;
    }
    return {};
  }

  static testing_support::TempDir* suite_;
  static e2e::SessionSnapshots* snapshots_;
  static testing_support::CommandResult* run_;
  static std::string thread_;
  testing_support::TempDir temp_{"shadowbox-codex-cut-test"};
};

testing_support::TempDir* CodexSessionCutTest::suite_ = nullptr;
e2e::SessionSnapshots* CodexSessionCutTest::snapshots_ = nullptr;
testing_support::CommandResult* CodexSessionCutTest::run_ = nullptr;
std::string CodexSessionCutTest::thread_;

TEST_F(CodexSessionCutTest, ANewRolloutHoldsTheLinesBeforeTheCallsReplyAndTheOriginalStays) {
  fs::path home = home_at("call_c");
  fs::path original = rollout_of(home, thread_);
  ASSERT_FALSE(original.empty());
  std::string before = read_file(original);
  // As preserved at pre:call_c, the rollout holds the call already.
  ASSERT_EQ(items(before, "function_call"),
            (std::vector<std::string>{"call_a", "call_b1", "call_b2", "call_c"}));

  hooks::SessionCut cut = hooks::codex_cut_session(home, point("call_c"), kNewThread);
  EXPECT_EQ(cut.session_id, kNewThread);
  EXPECT_TRUE(cut.resume_args.empty());
  EXPECT_EQ(read_file(original), before) << "the original rollout must stay as it was";
  fs::path forked = rollout_of(home, kNewThread);
  ASSERT_FALSE(forked.empty());
  EXPECT_EQ(rollouts(home).size(), 2u);
  EXPECT_TRUE(forked.filename().string().starts_with("rollout-")) << forked;
  std::string text = read_file(forked);
  EXPECT_EQ(items(text, "function_call"),
            (std::vector<std::string>{"call_a", "call_b1", "call_b2"}));
  EXPECT_EQ(items(text, "function_call_output"),
            (std::vector<std::string>{"call_a", "call_b1", "call_b2"}));
  // The new thread's session_meta, naming the thread it was forked from.
  std::vector<Object::Ptr> lines = json_lines(text);
  Object::Ptr meta = lines.front()->getObject("payload");
  EXPECT_EQ(lines.front()->getValue<std::string>("type"), "session_meta");
  EXPECT_EQ(meta->getValue<std::string>("id"), kNewThread);
  EXPECT_EQ(meta->getValue<std::string>("session_id"), kNewThread);
  EXPECT_EQ(meta->getValue<std::string>("forked_from_id"), thread_);
  // The rest is the original's lines, unchanged, up to the reply of call_c.
  std::vector<std::string> original_lines;
  std::istringstream in(before);
  for (std::string line; std::getline(in, line);) original_lines.push_back(line);
  std::istringstream out(text);
  std::string line;
  std::getline(out, line);
  std::size_t n = 1;
  for (; std::getline(out, line); ++n) EXPECT_EQ(line, original_lines[n]) << "line " << n + 1;
  // The cut is just before the reply holding call_c, which began with what the model
  // said before it.
  ASSERT_LT(n, original_lines.size());
  EXPECT_NE(original_lines[n].find("Now the third file."), std::string::npos) << original_lines[n];
  EXPECT_EQ(text.find("Now the third file."), std::string::npos);
}

TEST_F(CodexSessionCutTest, ACallOfAReplyOfParallelCallsCutsTheWholeReply) {
  fs::path home = home_at("call_b2");
  hooks::codex_cut_session(home, point("call_b2"), kNewThread);
  std::string text = read_file(rollout_of(home, kNewThread));
  EXPECT_EQ(items(text, "function_call"), (std::vector<std::string>{"call_a"}));
  EXPECT_EQ(items(text, "function_call_output"), (std::vector<std::string>{"call_a"}));
}

TEST_F(CodexSessionCutTest, TheFirstCallLeavesThePromptAndNoCall) {
  fs::path home = home_at("call_a");
  hooks::codex_cut_session(home, point("call_a"), kNewThread);
  std::string text = read_file(rollout_of(home, kNewThread));
  EXPECT_TRUE(items(text, "function_call").empty());
  EXPECT_NE(text.find("do three things"), std::string::npos);
}

TEST_F(CodexSessionCutTest, TheAdapterForksUnderANewThreadIdItsSessionPathsName) {
  fs::path home = home_at("call_c");
  hooks::SessionCut cut =
      hooks::adapter_for(hooks::AgentKind::kCodex).cut_session(home, point("call_c"));
  // A UUIDv7, as Codex makes thread ids.
  ASSERT_EQ(cut.session_id.size(), 36u);
  EXPECT_NE(cut.session_id, thread_);
  EXPECT_EQ(cut.session_id[14], '7') << cut.session_id;
  EXPECT_TRUE(cut.resume_args.empty());
  fs::path forked = rollout_of(home, cut.session_id);
  ASSERT_FALSE(forked.empty());
  EXPECT_TRUE(
      hooks::adapter_for(hooks::AgentKind::kCodex)
          .is_session_path(forked.lexically_relative(home).generic_string(), cut.session_id));
  EXPECT_TRUE(hooks::adapter_for(hooks::AgentKind::kCodex).has_session_data(home, cut.session_id));
}

// A resume forks the whole thread: a copy under a new id, the original as it was.
TEST_F(CodexSessionCutTest, AResumesForkCopiesTheWholeThreadUnderANewId) {
  fs::path home = home_at("call_c");
  fs::path original = rollout_of(home, thread_);
  std::string before = read_file(original);
  const hooks::AgentAdapter& codex = hooks::adapter_for(hooks::AgentKind::kCodex);
  std::optional<hooks::SessionCut> fork = codex.fork_session(home, thread_);
  ASSERT_TRUE(fork.has_value());
  ASSERT_EQ(fork->session_id.size(), 36u);
  EXPECT_NE(fork->session_id, thread_);
  EXPECT_EQ(read_file(original), before);
  std::string text = read_file(rollout_of(home, fork->session_id));
  std::vector<Object::Ptr> lines = json_lines(text);
  ASSERT_EQ(lines.size(), json_lines(before).size()) << "every line of the original";
  EXPECT_EQ(lines.front()->getObject("payload")->getValue<std::string>("id"), fork->session_id);
  EXPECT_EQ(lines.front()->getObject("payload")->getValue<std::string>("forked_from_id"), thread_);
  EXPECT_EQ(text.substr(text.find('\n')), before.substr(before.find('\n')));
  EXPECT_TRUE(codex.has_session_data(home, fork->session_id));
  // Claude Code forks on its own (--fork-session).
  EXPECT_FALSE(hooks::adapter_for(hooks::AgentKind::kClaudeCode).fork_session(home, thread_));
  EXPECT_THROW(codex.fork_session(home, "no-such-thread"), sandbox::Error);
}

TEST_F(CodexSessionCutTest, AnUnfinishedLastLineAfterTheCallIsLeftOut) {
  fs::path home = home_at("call_c");
  fs::path original = rollout_of(home, thread_);
  std::string text = read_file(original) + "{\"timestamp\":\"2026-";  // being written
  write_file(original, text);
  hooks::codex_cut_session(home, point("call_c"), kNewThread);
  EXPECT_EQ(items(read_file(rollout_of(home, kNewThread)), "function_call").size(), 3u);
  EXPECT_EQ(read_file(original), text);
}

// Expects f to throw Error code with a message holding every text in says, and home to
// be as it was.
template <typename F>
void expect_error(const fs::path& home, sandbox::ErrorCode code,
                  const std::vector<std::string>& says, F f) {
  testing_support::Manifest before = testing_support::take_manifest(home);
  try {
    f();
    ADD_FAILURE() << "no error";
  } catch (const sandbox::Error& e) {
    EXPECT_EQ(e.code(), code) << e.what();
    for (const std::string& text : says)
      EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << e.what();
  }
  EXPECT_EQ(testing_support::describe_difference(before, testing_support::take_manifest(home)), "");
}

TEST_F(CodexSessionCutTest, AHomeWithoutTheThreadIsNotFound) {
  fs::path home = temp_ / "empty";
  fs::create_directories(home / ".codex" / "sessions");
  expect_error(home, sandbox::ErrorCode::kNotFound, {"no rollout", thread_},
               [&] { hooks::codex_cut_session(home, point("call_a"), kNewThread); });
}

TEST_F(CodexSessionCutTest, ACallTheRolloutDoesNotHoldIsNotFound) {
  fs::path home = home_at("call_b1");
  // call_c was not made yet when call_b1's hook ran.
  expect_error(home, sandbox::ErrorCode::kNotFound, {"holds no call", "call_c"},
               [&] { hooks::codex_cut_session(home, point("call_c"), kNewThread); });
}

TEST_F(CodexSessionCutTest, AMalformedLineIsCorruptAndNothingIsWritten) {
  fs::path home = home_at("call_c");
  fs::path original = rollout_of(home, thread_);
  std::string text = read_file(original);
  std::size_t third = text.find('\n', text.find('\n') + 1) + 1;
  text.replace(third, text.find('\n', third) - third, "{\"type\":\"response_item\",");
  write_file(original, text);
  expect_error(home, sandbox::ErrorCode::kCorrupt, {original.string(), "line 3"},
               [&] { hooks::codex_cut_session(home, point("call_c"), kNewThread); });
}

TEST_F(CodexSessionCutTest, ARolloutThatIsNotTheThreadsIsCorrupt) {
  fs::path home = home_at("call_c");
  fs::path original = rollout_of(home, thread_);
  std::string text = read_file(original);
  std::string id = "\"id\":\"" + thread_ + "\"";
  ASSERT_NE(text.find(id), std::string::npos);
  text.replace(text.find(id), id.size(), "\"id\":\"someone-else\"");
  write_file(original, text);
  expect_error(home, sandbox::ErrorCode::kCorrupt, {"session_meta", thread_},
               [&] { hooks::codex_cut_session(home, point("call_c"), kNewThread); });
}

TEST_F(CodexSessionCutTest, AThreadIdInUseIsAConflict) {
  fs::path home = home_at("call_c");
  hooks::codex_cut_session(home, point("call_c"), kNewThread);
  expect_error(home, sandbox::ErrorCode::kConflict, {kNewThread},
               [&] { hooks::codex_cut_session(home, point("call_b1"), kNewThread); });
}

}  // namespace
