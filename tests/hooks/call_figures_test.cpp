// The figures the hook path counts (docs/figures.md), through `shadowbox hook AGENT`
// as the agents run it: a call Claude Code's own permissions refused (no PostToolUse,
// then PostToolBatch or PermissionDenied) is no step and is counted as denied by the
// agent; a Codex command its sandbox stopped, whose outcome is written only after its
// PostToolUse, is ended as failed (and rolled back) by the next event; the spend is
// brought up to date at every boundary, an after-tool one included; and hooks that name
// no run record each agent session as a run of its own.
#include <Poco/JSON/Array.h>
#include <Poco/JSON/Object.h>
#include <Poco/JSON/Parser.h>

#include <gtest/gtest.h>
#include <boost/filesystem.hpp>

#include "fsnap/shadow_repo.hpp"
#include "fsnap/store.hpp"
#include "hooks/agent_session_state.hpp"
#include "hooks/run_slice_types.hpp"
#include "runs/run_stats.hpp"
#include "sandbox/ledger.hpp"
#include "test_support.hpp"

namespace {

namespace fs = boost::filesystem;
using Poco::JSON::Object;
using testing_support::CommandResult;
using testing_support::run_command;
using testing_support::write_file;

class CallFiguresTest : public ::testing::Test {
 protected:
  CallFiguresTest() {
    fs::create_directories(ws_);
    write_file(ws_ / "a.txt", "a\n");
    hooks::register_agent_run_slice_types();
  }

  // Sends one event of agent (claude-code, codex) to the hook, with --run run unless it
  // is "".
  CommandResult send(const std::string& agent, const std::string& json,
                     const std::string& run = "r1") {
    std::vector<std::string> argv = {SHADOWBOX_BIN, "--store", store_.string(), "hook", agent};
    if (!run.empty()) argv.insert(argv.end(), {"--run", run});
    return run_command(argv, ws_,
                       {"SHADOWBOX_CONFIG=", "CLAUDE_PROJECT_DIR=" + ws_.string(),
                        "XDG_CONFIG_HOME=" + (temp_ / "config-home").string()},
                       json);
  }
  // An event of session in the workspace, with more fields (",\"k\":v...").
  std::string event(const std::string& name, const std::string& more,
                    const std::string& session = "sess-1",
                    const std::string& transcript = "/nowhere/t.jsonl") const {
    return "{\"hook_event_name\":\"" + name + "\",\"session_id\":\"" + session +
           "\",\"transcript_path\":\"" + transcript + "\",\"cwd\":\"" + ws_.string() + "\"" + more +
           "}";
  }
  static std::string bash(const std::string& id, const std::string& more = "") {
    return ",\"tool_name\":\"Bash\",\"tool_use_id\":\"" + id +
           // Each call its own command: the same one again and again is a loop
           // (policy.repeat).
           "\",\"tool_input\":{\"command\":\"echo " + id + "\"}" + more;
  }
  sandbox::Ledger ledger() const {
    return sandbox::Ledger::of(fsnap::Store::open(store_, ws_, false));
  }
  runs::RunStats figures(const std::string& run = "r1") const {
    sandbox::Ledger l = ledger();
    return runs::run_stats(l.session(*l.latest(run)));
  }
  // run's entry in `runs --json`.
  Object::Ptr run_info(const std::string& run) const {
    CommandResult r = run_command({SHADOWBOX_BIN, "--store", store_.string(), "--json", "runs"},
                                  ws_, {"SHADOWBOX_CONFIG="});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    Poco::JSON::Parser parser;
    auto runs = parser.parse(r.out).extract<Poco::JSON::Array::Ptr>();
    for (std::size_t i = 0; i < runs->size(); ++i) {
      if (runs->getObject(static_cast<unsigned>(i))->getValue<std::string>("run") == run) {
        return runs->getObject(static_cast<unsigned>(i));
      }
    }
    ADD_FAILURE() << "no run " << run << " in " << r.out;
    return new Object;
  }

  testing_support::TempDir temp_;
  fs::path ws_ = temp_ / "ws";
  fs::path store_ = temp_ / "store";
};

TEST_F(CallFiguresTest, ACallTheAgentsPermissionsRefusedIsNoStepAndIsCountedAsDenied) {
  // What Claude Code 2.1.330 sends for `claude -p` without permissions: PreToolUse, then
  // (its permission check refusing) no PostToolUse, and the batch's end.
  ASSERT_EQ(send("claude-code", event("PreToolUse", bash("toolu_1"))).exit_code, 0);
  CommandResult batch =
      send("claude-code",
           event("PostToolBatch",
                 ",\"tool_calls\":[{\"tool_name\":\"Bash\",\"tool_input\":{\"command\":\"x\"},"
                 "\"tool_use_id\":\"toolu_1\",\"tool_response\":\"Output redirection needs "
                 "approval\"}]"));
  ASSERT_EQ(batch.exit_code, 0) << batch.err;
  EXPECT_NE(batch.out.find("the agent's own permissions refused"), std::string::npos)
      << "the person is told: " << batch.out;
  std::optional<sandbox::LedgerRecord> end = ledger().latest("r1");
  ASSERT_TRUE(end);
  EXPECT_TRUE(end->agent_denied);
  EXPECT_EQ(end->result_summary, "denied by the agent: Output redirection needs approval");
  // A call that ran and ended is left as it was by the batch's end.
  ASSERT_EQ(send("claude-code", event("PreToolUse", bash("toolu_2"))).exit_code, 0);
  ASSERT_EQ(
      send("claude-code", event("PostToolUse", bash("toolu_2", ",\"tool_response\":{}"))).exit_code,
      0);
  ASSERT_EQ(send("claude-code",
                 event("PostToolBatch",
                       ",\"tool_calls\":[{\"tool_name\":\"Bash\",\"tool_use_id\":\"toolu_2\","
                       "\"tool_response\":\"ok\"}]"))
                .exit_code,
            0);
  // PermissionDenied (sent by the agent's classifier modes) says the same of one call.
  ASSERT_EQ(send("claude-code", event("PreToolUse", bash("toolu_3"))).exit_code, 0);
  ASSERT_EQ(send("claude-code",
                 event("PermissionDenied", bash("toolu_3", ",\"reason\":\"denied by rule\"")))
                .exit_code,
            0);
  // The session ends with nothing left open.
  ASSERT_EQ(send("claude-code", event("SessionEnd", ",\"reason\":\"other\"")).exit_code, 0);
  runs::RunStats f = figures();
  EXPECT_EQ(f.agent_denied, 2u);
  EXPECT_EQ(f.steps, 1u) << "only toolu_2 ran";
  EXPECT_EQ(f.calls, 3u);
  EXPECT_EQ(f.failed, 0u);
  Object::Ptr info = run_info("r1");
  EXPECT_EQ(info->getValue<std::size_t>("agent_denied_calls"), 2u);
  EXPECT_EQ(info->getValue<std::size_t>("calls"), 3u);
}

TEST_F(CallFiguresTest, ACodexCommandTheSandboxStoppedIsFailedAndRolledBackByTheNextEvent) {
  fs::path rollout = temp_ / "rollout.jsonl";
  std::string call =
      R"({"timestamp":"t","type":"response_item","payload":{"type":"function_call","name":"exec_command","arguments":"{}","call_id":"call_ro"}})"
      "\n";
  write_file(rollout, call);
  auto codex = [&](const std::string& name, const std::string& more) {
    return send("codex", event(name, more, "thread-1", rollout.string()));
  };
  ASSERT_EQ(codex("PreToolUse", bash("call_ro")).exit_code, 0);
  write_file(ws_ / "half.txt", "written before it failed\n");
  // Its PostToolUse comes before Codex writes how it ended: the call stays open.
  CommandResult post = codex("PostToolUse", bash("call_ro", ",\"tool_response\":\"denied\\n\""));
  ASSERT_EQ(post.exit_code, 0) << post.err;
  EXPECT_FALSE(ledger().latest("r1")->success.has_value()) << "no outcome taken for success";
  EXPECT_TRUE(fs::exists(ws_ / "half.txt"));
  // Then Codex writes what the model is given, and the turn ends.
  write_file(
      rollout,
      call +
          R"({"timestamp":"t","type":"response_item","payload":{"type":"function_call_output","call_id":"call_ro","output":"Chunk ID: 1\nProcess exited with code 1\nOriginal token count: 1\nOutput:\ndenied\n"}})"
          "\n");
  CommandResult stop = codex("Stop", "");
  ASSERT_EQ(stop.exit_code, 0) << stop.err;
  EXPECT_FALSE(fs::exists(ws_ / "half.txt")) << "rolled back as any failed call";
  std::optional<sandbox::LedgerRecord> end = ledger().latest("r1");
  ASSERT_TRUE(end);
  EXPECT_EQ(end->success, false);
  EXPECT_EQ(end->rollback, "rolled_back");
  EXPECT_NE(end->result_summary.find("exit code 1"), std::string::npos) << end->result_summary;
  runs::RunStats f = figures();
  EXPECT_EQ(f.failed, 1u);
  EXPECT_EQ(f.rolled_back, 1u);
  // The model is told at the next call's end (Codex's model reads no before-tool answer).
  ASSERT_EQ(codex("PreToolUse", bash("call_2")).exit_code, 0);
  CommandResult next = codex("PostToolUse", bash("call_2", ",\"tool_response\":\"ok\""));
  EXPECT_NE(next.out.find("rolled back"), std::string::npos) << next.out;
}

TEST_F(CallFiguresTest, TheSpendIsCountedAtEveryBoundary) {
  // A request the transcript holds only after the call's start was answered.
  fs::path transcript = temp_ / "home/.claude/projects/-ws/sess-1.jsonl";
  auto claude = [&](const std::string& name, const std::string& more) {
    return send("claude-code", event(name, more, "sess-1", transcript.string()));
  };
  ASSERT_EQ(claude("PreToolUse", bash("toolu_1")).exit_code, 0);
  EXPECT_EQ(figures().cost_usd, 0);
  write_file(transcript,
             "{\"type\":\"assistant\",\"requestId\":\"req_1\",\"message\":{\"id\":\"msg_1\","
             "\"model\":\"claude-sonnet-4-6\",\"content\":[],\"usage\":{\"input_tokens\":0,"
             "\"output_tokens\":66667}}}\n");
  ASSERT_EQ(claude("PostToolUse", bash("toolu_1", ",\"tool_response\":{}")).exit_code, 0);
  EXPECT_NEAR(figures().cost_usd, 1.000005, 1e-9) << "counted at the call's end";
  EXPECT_TRUE(run_info("r1")->getValue<bool>("cost_exact"));

  // A model the price table does not know: the cost is an estimate, and says so.
  write_file(transcript,
             testing_support::read_file(transcript) +
                 "{\"type\":\"assistant\",\"requestId\":\"req_2\",\"message\":{\"id\":\"msg_2\","
                 "\"model\":\"gpt-unknown\",\"content\":[],\"usage\":{\"input_tokens\":10,"
                 "\"output_tokens\":10}}}\n");
  ASSERT_EQ(claude("Stop", "").exit_code, 0);
  ASSERT_EQ(claude("SessionEnd", ",\"reason\":\"other\"").exit_code, 0);
  Object::Ptr info = run_info("r1");
  EXPECT_FALSE(info->getValue<bool>("cost_exact"));
  EXPECT_EQ(info->getArray("unpriced_models")->getElement<std::string>(0), "gpt-unknown");
  CommandResult text =
      run_command({SHADOWBOX_BIN, "--store", store_.string(), "runs"}, ws_, {"SHADOWBOX_CONFIG="});
  EXPECT_NE(text.out.find(" ~1.00"), std::string::npos) << text.out;
}

TEST_F(CallFiguresTest, HooksThatNameNoRunRecordEachAgentSessionAsARunOfItsOwn) {
  for (const std::string session : {"aaa", "bbb"}) {
    ASSERT_EQ(send("claude-code", event("SessionStart", ",\"source\":\"startup\"", session), "")
                  .exit_code,
              0);
    ASSERT_EQ(send("claude-code", event("PreToolUse", bash("t-" + session), session), "").exit_code,
              0);
    ASSERT_EQ(send("claude-code",
                   event("PostToolUse", bash("t-" + session, ",\"tool_response\":{}"), session), "")
                  .exit_code,
              0);
  }
  // A resumed session keeps its id, and its run.
  ASSERT_EQ(
      send("claude-code", event("SessionStart", ",\"source\":\"resume\"", "aaa"), "").exit_code, 0);
  ASSERT_EQ(send("claude-code", event("PreToolUse", bash("t-again"), "aaa"), "").exit_code, 0);
  fsnap::ShadowRepo repo = fsnap::ShadowRepo::open(store_ / "repo.git", false);
  EXPECT_EQ(repo.runs(), (std::vector<std::string>{"session-aaa", "session-bbb"}));
  EXPECT_EQ(figures("session-aaa").steps, 2u);
  EXPECT_EQ(figures("session-bbb").steps, 1u);
  // A name from the hook's command line or $SHADOWBOX_RUN still wins.
  ASSERT_EQ(send("claude-code", event("PreToolUse", bash("t-named"), "ccc"), "named").exit_code, 0);
  EXPECT_EQ(figures("named").steps, 1u);
}

}  // namespace
