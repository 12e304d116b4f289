// Hook events shadowbox could not read, and run names that would leave the store: an
// event with a lone surrogate or nested deeper than a JSON parser goes is recorded as
// any other, for every agent; one that is not JSON at all blocks the call (a tool call
// never runs unrecorded) and is a gap `runs` counts; a run name from --run or
// $SHADOWBOX_RUN is checked before any folder is made for it.
#include <Poco/JSON/Parser.h>

#include <gtest/gtest.h>
#include <boost/filesystem.hpp>

#include "fsnap/shadow_repo.hpp"
#include "fsnap/store.hpp"
#include "hook_events.hpp"
#include "hooks/agent_hook.hpp"
#include "hooks/agent_session_state.hpp"
#include "hooks/run_slice_types.hpp"
#include "sandbox/ledger.hpp"
#include "test_support.hpp"

namespace {

namespace fs = boost::filesystem;
using hook_events::event;
using testing_support::CommandResult;
using testing_support::run_command;
using testing_support::write_file;

class UnreadableEventTest : public ::testing::Test {
 protected:
  UnreadableEventTest() {
    fs::create_directories(ws_);
    write_file(ws_ / "a.txt", "a\n");
    hooks::register_agent_run_slice_types();
  }

  CommandResult hook(const std::string& agent, const std::string& stdin_data,
                     const std::vector<std::string>& env = {}) {
    std::vector<std::string> all = {"SHADOWBOX_CONFIG=", "CLAUDE_PROJECT_DIR=" + ws_.string()};
    all.insert(all.end(), env.begin(), env.end());
    return run_command({SHADOWBOX_BIN, "--store", store_.string(), "hook", agent}, ws_, all,
                       stdin_data);
  }
  std::vector<fsnap::Checkpoint> chain(const std::string& run = "session-sess-1") const {
    if (!fs::exists(store_ / "repo.git")) return {};
    std::vector<fsnap::Checkpoint> log =
        fsnap::ShadowRepo::open(store_ / "repo.git", false).log(run, 0);
    return {log.rbegin(), log.rend()};
  }
  Poco::JSON::Array::Ptr runs() {
    CommandResult r = run_command(
        {SHADOWBOX_BIN, "--store", store_.string(), "--workspace", ws_.string(), "--json", "runs"},
        ws_, {"SHADOWBOX_CONFIG="});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    Poco::JSON::Parser parser;
    return parser.parse(r.out).extract<Poco::JSON::Array::Ptr>();
  }
  std::size_t gaps(const std::string& run) {
    Poco::JSON::Array::Ptr all = runs();
    for (std::size_t i = 0; i < all->size(); ++i) {
      auto o = all->getObject(static_cast<unsigned>(i));
      if (o->getValue<std::string>("run") == run) return o->getValue<std::size_t>("gaps");
    }
    return 0;
  }

  testing_support::TempDir temp_;
  fs::path ws_ = temp_ / "ws";
  fs::path store_ = temp_ / "store";
};

// A Bash call whose command holds a lone surrogate, as Node's JSON.stringify writes it.
std::string surrogate_call(const std::string& id, const std::string& more = "") {
  return R"(,"tool_name":"Bash","tool_use_id":")" + id +
         R"(","tool_input":{"command":"rm a.txt # \ud800","description":"x"})" + more;
}

TEST_F(UnreadableEventTest, ALoneSurrogateInAToolInputIsRecordedAndRolledBack) {
  CommandResult pre = hook("claude-code", event("PreToolUse", ws_.string(), surrogate_call("t1")));
  ASSERT_EQ(pre.exit_code, 0) << pre.err;
  fs::remove(ws_ / "a.txt");
  CommandResult failed = hook("claude-code", event("PostToolUseFailure", ws_.string(),
                                                   surrogate_call("t1", R"(,"error":"exit 1")")));
  ASSERT_EQ(failed.exit_code, 0) << failed.err;
  EXPECT_EQ(testing_support::read_file(ws_ / "a.txt"), "a\n") << "the failed call rolled back";
  std::vector<fsnap::Checkpoint> c = chain();
  ASSERT_GE(c.size(), 2u);
  EXPECT_EQ(c.front().meta.tool_call_id, "t1");
  EXPECT_EQ(gaps("session-sess-1"), 0u);
}

TEST_F(UnreadableEventTest, AToolInputNestedDeeperThanAParserGoesIsRecorded) {
  std::string deep = std::string(300, '[') + "\"x\"" + std::string(300, ']');
  std::string call =
      R"(,"tool_name":"mcp__deep","tool_use_id":"t2","tool_input":{"tree":)" + deep + "}";
  CommandResult pre = hook("claude-code", event("PreToolUse", ws_.string(), call));
  ASSERT_EQ(pre.exit_code, 0) << pre.err;
  ASSERT_EQ(chain().size(), 1u);
  std::optional<sandbox::LedgerRecord> record =
      sandbox::Ledger::of(fsnap::Store::open(store_, ws_, false)).latest("session-sess-1");
  ASSERT_TRUE(record.has_value());
  EXPECT_NE(record->input_summary.find("nested deeper than 64 levels"), std::string::npos)
      << record->input_summary;
}

TEST_F(UnreadableEventTest, EveryAgentReadsTheEventsItsCliEmits) {
  // Gemini CLI (Node) writes lone surrogates as Claude Code does; Codex's events share
  // Claude Code's shape.
  std::string gemini_call =
      R"(,"tool_name":"run_shell_command","tool_input":{"command":"echo \udfff"})";
  CommandResult before = hook("gemini", event("BeforeTool", ws_.string(), gemini_call));
  EXPECT_EQ(before.exit_code, 0) << before.err;
  CommandResult codex = hook("codex", event("PreToolUse", ws_.string(), surrogate_call("c1")));
  EXPECT_EQ(codex.exit_code, 0) << codex.err;
  EXPECT_EQ(chain().size(), 2u);
}

TEST_F(UnreadableEventTest, AnEventThatIsNotJsonBlocksTheCallAndIsAGap) {
  // (Gaps are written to a store that exists: hooks install makes it.)
  ASSERT_EQ(
      run_command({SHADOWBOX_BIN, "--store", store_.string(), "--workspace", ws_.string(), "init"},
                  ws_, {"SHADOWBOX_CONFIG="})
          .exit_code,
      0);
  for (const char* agent : {"claude-code", "codex"}) {
    SCOPED_TRACE(agent);
    CommandResult r = hook(agent, R"({"hook_event_name":"PreToolUse","tool_input":{"a":)");
    EXPECT_EQ(r.exit_code, 2) << "a blocking error: the call does not run";
    EXPECT_NE(r.err.find("the tool call is blocked"), std::string::npos) << r.err;
  }
  CommandResult gemini = hook("gemini", R"({"hook_event_name":"BeforeTool", oops)");
  EXPECT_EQ(gemini.exit_code, 2) << gemini.err;
  // No name to be found: it may be a call's, so it blocks too.
  EXPECT_EQ(hook("claude-code", "not json").exit_code, 2);
  // A Stop that cannot be read warns: blocking it would keep the agent from stopping.
  EXPECT_EQ(hook("claude-code", R"({"hook_event_name":"Stop", )").exit_code, 1);
  EXPECT_EQ(gaps("default"), 5u);
}

TEST_F(UnreadableEventTest, OverHttpAnUnreadableCallIsDenied) {
  hooks::HttpHookReply reply = hooks::to_http_reply(
      hooks::unreadable_event_answer(R"({"hook_event_name":"PreToolUse", x)", "not JSON"));
  EXPECT_EQ(reply.status, 200) << "a non-2xx answer is a non-blocking error to Claude Code";
  Poco::JSON::Parser parser;
  auto o = parser.parse(reply.body).extract<Poco::JSON::Object::Ptr>();
  EXPECT_EQ(o->getObject("hookSpecificOutput")->getValue<std::string>("permissionDecision"),
            "deny");
}

TEST_F(UnreadableEventTest, ABadRunNameFromTheEnvironmentMakesNoFolderAndBlocks) {
  CommandResult r = hook("claude-code", event("PreToolUse", ws_.string(), surrogate_call("t3")),
                         {"SHADOWBOX_RUN=bad name"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("invalid run name"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(store_ / "runs" / "bad name"));
  CommandResult escape =
      hook("claude-code", event("PreToolUse", ws_.string(), surrogate_call("t4")),
           {"SHADOWBOX_RUN=../../escaped"});
  EXPECT_EQ(escape.exit_code, 2) << escape.err;
  EXPECT_FALSE(fs::exists(temp_ / "escaped"));
  EXPECT_FALSE(fs::exists(store_.parent_path().parent_path() / "escaped"));
  // The store goes on: runs lists what is there.
  ASSERT_EQ(hook("claude-code", event("PreToolUse", ws_.string(), surrogate_call("t5"))).exit_code,
            0);
  EXPECT_EQ(runs()->size(), 1u);
}

TEST_F(UnreadableEventTest, ABadRunNameOnTheCommandLineIsAUsageErrorBeforeAnythingIsWritten) {
  for (const char* command : {"snapshot", "log"}) {
    SCOPED_TRACE(command);
    CommandResult r = run_command({SHADOWBOX_BIN, "--store", store_.string(), "--workspace",
                                   ws_.string(), command, "--run", "../../escaped"},
                                  ws_, {"SHADOWBOX_CONFIG="});
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_NE(r.err.find("invalid run name"), std::string::npos) << r.err;
  }
  CommandResult run = run_command({SHADOWBOX_BIN, "--store", store_.string(), "--workspace",
                                   ws_.string(), "run", "--run-id", "../x", "--", "claude"},
                                  ws_, {"SHADOWBOX_CONFIG="});
  EXPECT_EQ(run.exit_code, 2) << run.err;
  EXPECT_FALSE(fs::exists(store_)) << "nothing was created";
  EXPECT_FALSE(fs::exists(temp_ / "escaped"));
  EXPECT_FALSE(fs::exists(temp_ / "x"));
}

TEST_F(UnreadableEventTest, AFolderABadNameLeftInTheStoreDoesNotBreakRuns) {
  ASSERT_EQ(hook("claude-code", event("PreToolUse", ws_.string(), surrogate_call("t6"))).exit_code,
            0);
  // As an older version left it.
  write_file(store_ / "runs" / "bad name" / "log", "2026-01-01T00:00:00Z gap: lost\n");
  Poco::JSON::Array::Ptr all = runs();
  ASSERT_EQ(all->size(), 1u);
  EXPECT_EQ(all->getObject(0)->getValue<std::string>("run"), "session-sess-1");
}

}  // namespace

namespace {

using hook_events::tool;

class LostEventTest : public UnreadableEventTest {
 protected:
  std::vector<std::string> shape() const {
    std::vector<std::string> out;
    for (const fsnap::Checkpoint& c : chain()) {
      out.push_back(std::string(fsnap::to_string(c.meta.phase)) +
                    (c.meta.tool_call_id.empty() ? "" : " " + c.meta.tool_call_id));
    }
    return out;
  }
  sandbox::Ledger ledger() const {
    return sandbox::Ledger::of(fsnap::Store::open(store_, ws_, false));
  }
};

TEST_F(LostEventTest, ACallWhosePreToolEventWasLostIsRecordedAsItsOwn) {
  ASSERT_EQ(hook("claude-code", event("PreToolUse", ws_.string(), tool("Write", "t0"))).exit_code,
            0);
  ASSERT_EQ(hook("claude-code", event("PostToolUse", ws_.string(), tool("Write", "t0"))).exit_code,
            0);
  // t1's PreToolUse hook was killed: only its PostToolUse arrives.
  write_file(ws_ / "b.txt", "by t1\n");
  CommandResult post = hook("claude-code", event("PostToolUse", ws_.string(),
                                                 tool("Write", "t1", R"(,"tool_response":{})")));
  EXPECT_EQ(post.exit_code, 0) << post.err;
  EXPECT_EQ(shape(), (std::vector<std::string>{"pre_tool t0", "post_tool t0", "post_tool t1"}));
  std::vector<fsnap::Checkpoint> c = chain();
  fsnap::ShadowRepo repo = fsnap::ShadowRepo::open(store_ / "repo.git", false);
  std::vector<fsnap::TreeChange> diff = repo.diff_trees(c[1].tree, c[2].tree);
  ASSERT_EQ(diff.size(), 1u);
  EXPECT_EQ(diff[0].path, "b.txt") << "t1's change is t1's";
  EXPECT_EQ(gaps("session-sess-1"), 1u);
  // A failed one is not rolled back, and the agent is told why.
  write_file(ws_ / "c.txt", "by t2\n");
  CommandResult failed = hook("claude-code", event("PostToolUseFailure", ws_.string(),
                                                   tool("Bash", "t2", R"(,"error":"exit 1")")));
  ASSERT_EQ(failed.exit_code, 0) << failed.err;
  EXPECT_TRUE(fs::exists(ws_ / "c.txt"));
  EXPECT_NE(failed.out.find("did not roll back"), std::string::npos) << failed.out;
  std::optional<sandbox::LedgerRecord> last = ledger().latest("session-sess-1");
  ASSERT_TRUE(last.has_value());
  EXPECT_EQ(last->tool_call_id, "t2");
  EXPECT_FALSE(last->success.value_or(true));
  EXPECT_EQ(gaps("session-sess-1"), 2u);
}

TEST_F(LostEventTest, APreToolEventSentTwiceLeavesNoRecordOpen) {
  ASSERT_EQ(hook("claude-code", event("PreToolUse", ws_.string(), tool("Bash", "t3"))).exit_code,
            0);
  ASSERT_EQ(hook("claude-code", event("PreToolUse", ws_.string(), tool("Bash", "t3"))).exit_code,
            0);
  ASSERT_EQ(hook("claude-code",
                 event("PostToolUse", ws_.string(), tool("Bash", "t3", R"(,"tool_response":{})")))
                .exit_code,
            0);
  // Every pre-tool record has its outcome.
  for (const fsnap::Checkpoint& c : chain()) {
    if (c.meta.phase != fsnap::Phase::kPreTool) continue;
    std::optional<sandbox::LedgerRecord> r = ledger().read(c);
    ASSERT_TRUE(r.has_value());
    EXPECT_TRUE(r->success.has_value()) << "pre-tool record " << c.id << " is open forever";
  }
  // The first begin stands; the repeat recorded nothing.
  EXPECT_EQ(shape(), (std::vector<std::string>{"pre_tool t3", "post_tool t3"}));
}

}  // namespace
