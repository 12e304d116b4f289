// The Claude Code hook path end to end: `shadowbox hook claude-code` fed hook events as
// Claude Code sends them (one process per event, in parallel too), and `shadowbox hooks
// install|uninstall` on Claude Code settings files.
#include <Poco/JSON/Parser.h>

#include <algorithm>
#include <map>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>
#include <boost/filesystem.hpp>

#include "fsnap/shadow_repo.hpp"
#include "fsnap/store.hpp"
#include "hook_events.hpp"
#include "hooks/agent_session_state.hpp"
#include "hooks/claude_code_settings.hpp"
#include "hooks/run_slice_types.hpp"
#include "runs/run_lifecycle.hpp"
#include "sandbox/builtin_slices.hpp"
#include "sandbox/ledger.hpp"
#include "test_support.hpp"

namespace {

namespace fs = boost::filesystem;
using hook_events::tool;
// The run hooks that name none record agent session sess-1 in.
const std::string kRun = "session-sess-1";
using testing_support::CommandResult;
using testing_support::run_command;
using testing_support::write_file;

class HookTest : public ::testing::Test {
 protected:
  HookTest() {
    fs::create_directories(ws_);
    write_file(ws_ / "a.txt", "a\n");
    hooks::register_agent_run_slice_types();
  }

  // Sends one event (built from fields) to the hook, as Claude Code would.
  CommandResult send(const std::string& event_name, const std::string& extra_json = "") {
    return raw(hook_events::event(event_name, ws_.string(), extra_json));
  }
  CommandResult raw(const std::string& stdin_data) {
    return run_command({SHADOWBOX_BIN, "--store", store_.string(), "hook", "claude-code"}, ws_,
                       {"SHADOWBOX_CONFIG=", "CLAUDE_PROJECT_DIR=" + ws_.string(),
                        "XDG_CONFIG_HOME=" + (temp_ / "config-home").string()},
                       stdin_data);
  }
  // Writes the workspace's .shadowbox.yaml and trusts it, as its owner would: settings
  // that loosen protection apply only then.
  void trusted_config(const std::string& yaml) {
    write_file(ws_ / ".shadowbox.yaml", yaml);
    CommandResult r = run_command(
        {SHADOWBOX_BIN, "--store", store_.string(), "--workspace", ws_.string(), "trust"}, ws_,
        {"SHADOWBOX_CONFIG=", "XDG_CONFIG_HOME=" + (temp_ / "config-home").string()});
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }

  fsnap::ShadowRepo repo() const { return fsnap::ShadowRepo::open(store_ / "repo.git", false); }
  sandbox::Ledger ledger() const {
    return sandbox::Ledger::of(fsnap::Store::open(store_, ws_, false));
  }
  std::vector<fsnap::Checkpoint> chain() const {
    std::vector<fsnap::Checkpoint> log = repo().log(kRun, 0);
    return {log.rbegin(), log.rend()};  // oldest first
  }
  std::vector<std::string> shape() const {
    std::vector<std::string> out;
    for (const fsnap::Checkpoint& c : chain()) {
      out.push_back(std::string(fsnap::to_string(c.meta.phase)) +
                    (c.meta.tool_call_id.empty() ? "" : " " + c.meta.tool_call_id));
    }
    return out;
  }

  testing_support::TempDir temp_;
  fs::path ws_ = temp_ / "ws";
  fs::path store_ = temp_ / "store";
};

TEST_F(HookTest, PreAndPostToolCheckpointsWithTheToolsDiff) {
  ASSERT_EQ(send("PreToolUse", tool("Write", "toolu_1")).exit_code, 0);
  write_file(ws_ / "new.txt", "written by the tool\n");
  CommandResult post =
      send("PostToolUse", tool("Write", "toolu_1", ",\"tool_response\":{\"ok\":1}"));
  ASSERT_EQ(post.exit_code, 0) << post.err;
  EXPECT_EQ(shape(), (std::vector<std::string>{"pre_tool toolu_1", "post_tool toolu_1"}));
  std::vector<fsnap::Checkpoint> c = chain();
  std::vector<fsnap::TreeChange> diff = repo().diff_trees(c[0].tree, c[1].tree);
  ASSERT_EQ(diff.size(), 1u);
  EXPECT_EQ(diff[0].path, "new.txt");
  EXPECT_EQ(c[1].meta.tool_name, "Write");
  std::optional<sandbox::LedgerRecord> post_record = ledger().read(c[1]);
  ASSERT_TRUE(post_record.has_value());
  EXPECT_TRUE(post_record->success.value_or(false));
  EXPECT_EQ(post_record->input_summary, "{\"command\":\"x\"}");
}

TEST_F(HookTest, AWarningRaisedByAnEventIsShownWhereTheAgentShowsItsHooksMessages) {
  // The end of a call whose start never arrived: recorded after the fact, with a
  // warning. An interactive agent owns the terminal, so the person reads the warning in
  // the agent's own place for hook messages (systemMessage), never the model.
  CommandResult post = send("PostToolUse", tool("Bash", "toolu_lost", ",\"tool_response\":{}"));
  ASSERT_EQ(post.exit_code, 0) << post.err;
  Poco::JSON::Parser parser;
  Poco::JSON::Object::Ptr answer = parser.parse(post.out).extract<Poco::JSON::Object::Ptr>();
  std::string notice = answer->optValue<std::string>("systemMessage", "");
  EXPECT_EQ(notice.rfind("shadowbox: warning: ", 0), 0u) << post.out;
  EXPECT_NE(notice.find("toolu_lost never arrived"), std::string::npos) << post.out;
  EXPECT_FALSE(answer->has("hookSpecificOutput")) << "nothing for the model: " << post.out;
  EXPECT_NE(post.err.find("never arrived"), std::string::npos) << "and on stderr as before";
  EXPECT_EQ(post.err.find("shadowbox: warning: shadowbox:"), std::string::npos)
      << "one prefix: " << post.err;
  EXPECT_EQ(notice.find("shadowbox: warning: shadowbox:"), std::string::npos) << notice;
}

TEST_F(HookTest, AFailedCallIsRolledBackAndTheAgentIsTold) {
  send("PreToolUse", tool("Bash", "toolu_f"));
  fs::remove(ws_ / "a.txt");
  write_file(ws_ / "junk.txt", "junk");
  CommandResult r = send("PostToolUseFailure", tool("Bash", "toolu_f", ",\"error\":\"exit 1\""));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(testing_support::read_file(ws_ / "a.txt"), "a\n");
  EXPECT_FALSE(fs::exists(ws_ / "junk.txt"));
  Poco::JSON::Parser parser;
  auto out = parser.parse(r.out).extract<Poco::JSON::Object::Ptr>();
  auto specific = out->getObject("hookSpecificOutput");
  EXPECT_EQ(specific->getValue<std::string>("hookEventName"), "PostToolUseFailure");
  std::string context = specific->getValue<std::string>("additionalContext");
  EXPECT_NE(context.find("rolled back"), std::string::npos) << context;
  EXPECT_NE(context.find("restored a.txt"), std::string::npos) << context;
  EXPECT_NE(context.find("removed junk.txt"), std::string::npos) << context;
  // The person is told too, in Claude Code's place for it (not the model's context).
  std::string notice = out->getValue<std::string>("systemMessage");
  EXPECT_EQ(notice.find("shadowbox rolled back the failed Bash call toolu_f: restored a.txt, "
                        "removed junk.txt."),
            0u)
      << notice;
  EXPECT_NE(notice.find("shadowbox diff pre:toolu_f failed:toolu_f"), std::string::npos) << notice;
  // Recorded: the pre-tool record carries the failure, and the session logs it.
  std::optional<sandbox::LedgerRecord> latest = ledger().latest(kRun);
  ASSERT_TRUE(latest.has_value());
  EXPECT_EQ(latest->tool_call_id, "toolu_f");
  EXPECT_FALSE(latest->success.value_or(true));
  EXPECT_EQ(latest->result_summary, "exit 1");
  EXPECT_EQ(ledger().session(*latest).slice<sandbox::ToolInvoked>().size(), 1u);
}

TEST_F(HookTest, ToolsConfiguredToKeepFailuresAreNotRolledBack) {
  trusted_config("hooks:\n  keep_failed_tools: [Bash]\n");
  send("PreToolUse", tool("Bash", "toolu_k"));
  write_file(ws_ / "partial.txt", "kept");
  CommandResult r = send("PostToolUseFailure", tool("Bash", "toolu_k", ",\"error\":\"exit 2\""));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(fs::exists(ws_ / "partial.txt"));
  std::optional<sandbox::LedgerRecord> latest = ledger().latest(kRun);
  ASSERT_TRUE(latest.has_value());
  EXPECT_NE(latest->result_summary.find("not rolled back by configuration"), std::string::npos);
  EXPECT_FALSE(latest->success.value_or(true)) << "recorded as a failure";
  EXPECT_FALSE(ledger().session(*latest).slice<sandbox::ToolInvoked>()[0].success);
  EXPECT_EQ(latest->rollback, "kept");
  EXPECT_EQ(r.out, "") << "the person asked for it: nothing to tell";
}

TEST_F(HookTest, EditsBetweenToolCallsAreTheirOwnCheckpoint) {
  send("PreToolUse", tool("Write", "toolu_1"));
  write_file(ws_ / "tool.txt", "tool");
  send("PostToolUse", tool("Write", "toolu_1"));
  write_file(ws_ / "human.txt", "a person typed this");  // between calls
  send("PreToolUse", tool("Bash", "toolu_2"));
  EXPECT_EQ(shape(), (std::vector<std::string>{"pre_tool toolu_1", "post_tool toolu_1",
                                               "checkpoint", "pre_tool toolu_2"}));
  std::vector<fsnap::Checkpoint> c = chain();
  EXPECT_TRUE(c[2].meta.tool_name.empty()) << "attributed to no tool";
  std::vector<fsnap::TreeChange> human = repo().diff_trees(c[1].tree, c[2].tree);
  ASSERT_EQ(human.size(), 1u);
  EXPECT_EQ(human[0].path, "human.txt");
  EXPECT_EQ(c[3].tree, c[2].tree) << "the next tool's pre-tool checkpoint starts clean";
  // With nothing changed in between, no extra checkpoint.
  send("PostToolUse", tool("Bash", "toolu_2"));
  send("PreToolUse", tool("Bash", "toolu_3"));
  EXPECT_EQ(shape().back(), "pre_tool toolu_3");
  EXPECT_EQ(shape().size(), 6u);
}

TEST_F(HookTest, ParallelCallsAreNotUndoneByAnotherCallsRollback) {
  // Two shell commands side by side: what changed while both ran may be either's.
  send("PreToolUse", tool("Bash", "toolu_a"));
  send("PreToolUse", tool("Bash", "toolu_b"));
  write_file(ws_ / "b.txt", "from b");
  send("PostToolUse", tool("Bash", "toolu_b"));
  CommandResult r = send("PostToolUseFailure", tool("Bash", "toolu_a", ",\"error\":\"boom\""));
  ASSERT_EQ(r.exit_code, 0);
  EXPECT_TRUE(fs::exists(ws_ / "b.txt")) << "another call's committed change was undone";
  EXPECT_NE(r.out.find("did NOT roll back"), std::string::npos) << r.out;
  Poco::JSON::Parser parser;
  std::string notice =
      parser.parse(r.out).extract<Poco::JSON::Object::Ptr>()->getValue<std::string>(
          "systemMessage");
  EXPECT_EQ(notice.find("shadowbox did not roll back the failed Bash call toolu_a: rollback "
                        "refused: nothing changed since this call started is its alone: b.txt "
                        "(changed while Bash toolu_b ran too)"),
            0u)
      << notice;
  std::optional<sandbox::LedgerRecord> latest = ledger().latest(kRun);
  ASSERT_TRUE(latest.has_value());
  EXPECT_NE(latest->result_summary.find("rollback refused"), std::string::npos);
  EXPECT_FALSE(latest->success.value_or(true));
}

TEST_F(HookTest, AFailedCallBesideAnEditPutsBackWhatOnlyItCanHaveChanged) {
  // The Write names b.txt: it can have changed that and nothing else.
  send("PreToolUse", tool("Bash", "toolu_a"));
  send("PreToolUse",
       ",\"tool_name\":\"Write\",\"tool_use_id\":\"toolu_b\",\"tool_input\":"
       "{\"file_path\":\"b.txt\",\"content\":\"from b\"}");
  write_file(ws_ / "b.txt", "from b");
  write_file(ws_ / "a-partial.txt", "from a");
  send("PostToolUse",
       ",\"tool_name\":\"Write\",\"tool_use_id\":\"toolu_b\",\"tool_input\":"
       "{\"file_path\":\"b.txt\",\"content\":\"from b\"}");
  CommandResult r = send("PostToolUseFailure", tool("Bash", "toolu_a", ",\"error\":\"boom\""));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(fs::exists(ws_ / "b.txt")) << "the Write's change was undone";
  EXPECT_FALSE(fs::exists(ws_ / "a-partial.txt")) << "the failed call's own change stayed";
  EXPECT_NE(r.out.find("kept what this call may not have changed alone: b.txt (changed while "
                       "Write toolu_b ran too)"),
            std::string::npos)
      << r.out;
  std::optional<sandbox::LedgerRecord> latest = ledger().latest(kRun);
  ASSERT_TRUE(latest.has_value());
  EXPECT_EQ(latest->rollback, "rolled_back");
  ASSERT_EQ(latest->rollback_kept.size(), 1u);
  EXPECT_EQ(latest->rollback_kept[0].first, "b.txt");
}

TEST_F(HookTest, ConcurrentHookProcessesSerialiseAndLoseNothing) {
  // Claude Code runs the hooks of parallel calls at the same time.
  constexpr int kCalls = 8;
  auto in_parallel = [&](const std::string& event) {
    std::vector<std::thread> threads;
    threads.reserve(kCalls);
    std::vector<int> codes(kCalls, -1);
    for (int i = 0; i < kCalls; ++i) {
      threads.emplace_back([&, i] {
        codes[i] = send(event, tool("Read", "toolu_p" + std::to_string(i))).exit_code;
      });
    }
    for (std::thread& t : threads) t.join();
    for (int code : codes) EXPECT_EQ(code, 0) << event;
  };
  in_parallel("PreToolUse");
  EXPECT_EQ(chain().size(), static_cast<std::size_t>(kCalls));
  in_parallel("PostToolUse");
  EXPECT_EQ(chain().size(), static_cast<std::size_t>(2 * kCalls));
  std::optional<sandbox::LedgerRecord> latest = ledger().latest(kRun);
  ASSERT_TRUE(latest.has_value());
  EXPECT_EQ(ledger().session(*latest).slice<sandbox::ToolInvoked>().size(),
            static_cast<std::size_t>(kCalls))
      << "every call is in the newest record";
  CommandResult fsck = run_command(
      {"git", "--git-dir", (store_ / "repo.git").string(), "fsck", "--strict", "--no-dangling"});
  EXPECT_EQ(fsck.exit_code, 0) << fsck.err;
}

TEST_F(HookTest, SessionStartIsRecordedAndOnlySessionEndCompletesTheRun) {
  ASSERT_EQ(send("SessionStart", ",\"source\":\"startup\"").exit_code, 0);
  std::optional<sandbox::LedgerRecord> start = ledger().latest(kRun);
  ASSERT_TRUE(start.has_value());
  sandbox::SessionSnapshot session = ledger().session(*start);
  ASSERT_EQ(session.slice<hooks::AgentSession>().size(), 1u);
  EXPECT_EQ(session.slice<hooks::AgentSession>()[0].session_id, "sess-1");
  EXPECT_EQ(session.slice<hooks::AgentSession>()[0].transcript_path, "/nowhere/t.jsonl");
  EXPECT_EQ(session.slice<hooks::AgentSession>()[0].agent, "claude-code")
      << "each session records its agent";
  EXPECT_EQ(session.policies.at(typeid(hooks::AgentSession)), sandbox::SlicePolicy::kLog);
  EXPECT_EQ(session.slice<runs::RunStatus>().latest()->status, "running");
  EXPECT_EQ(session.policies.at(typeid(runs::RunStatus)), sandbox::SlicePolicy::kLog)
      << "a tool's rollback never changes where the run stands";
  auto status = [&] {
    return ledger().session(*ledger().latest(kRun)).slice<runs::RunStatus>().latest()->status;
  };
  // Stop ends a turn; an interactive session has many.
  ASSERT_EQ(send("Stop", ",\"stop_hook_active\":false").exit_code, 0);
  EXPECT_EQ(status(), "running");
  // /clear ends one agent session and starts the next: the run goes on.
  ASSERT_EQ(send("SessionEnd", ",\"reason\":\"clear\"").exit_code, 0);
  EXPECT_EQ(status(), "running");
  ASSERT_EQ(send("SessionEnd", ",\"reason\":\"prompt_input_exit\"").exit_code, 0);
  EXPECT_EQ(status(), "complete");
}

// Whether the repository at git_dir has a loose object.
bool has_loose_objects(const fs::path& git_dir) {
  boost::system::error_code ec;
  for (fs::directory_iterator dir(git_dir / "objects", ec), end; !ec && dir != end;
       dir.increment(ec)) {
    if (dir->path().filename().string().size() != 2) continue;
    // A fan-out directory the maintenance removes (emptied) holds none.
    boost::system::error_code inner;
    if (!fs::is_empty(dir->path(), inner) && !inner) return true;
  }
  return false;
}

TEST_F(HookTest, TheEndOfTheAgentsSessionPacksWhatIsLeftLoose) {
  // Too few objects for maintenance to be due after a call...
  ASSERT_EQ(send("PreToolUse", tool("Write", "toolu_1")).exit_code, 0);
  write_file(ws_ / "new.txt", "written by the tool\n");
  ASSERT_EQ(send("PostToolUse", tool("Write", "toolu_1", ",\"tool_response\":{}")).exit_code, 0);
  ASSERT_TRUE(has_loose_objects(store_ / "repo.git"));
  // ...but once the session has ended, a detached maintenance packs them.
  ASSERT_EQ(send("SessionEnd", ",\"reason\":\"other\"").exit_code, 0);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (has_loose_objects(store_ / "repo.git") && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_FALSE(has_loose_objects(store_ / "repo.git"));
  EXPECT_EQ(shape(),
            (std::vector<std::string>{"pre_tool toolu_1", "post_tool toolu_1", "checkpoint"}));
  // Everything reads back from the pack.
  std::vector<fsnap::Checkpoint> c = chain();
  std::vector<fsnap::TreeChange> diff = repo().diff_trees(c[0].tree, c[1].tree);
  ASSERT_EQ(diff.size(), 1u);
  ASSERT_TRUE(diff[0].after.has_value());
  EXPECT_EQ(repo().read_blob(diff[0].after->oid), "written by the tool\n");
  CommandResult fsck = run_command(
      {"git", "--git-dir", (store_ / "repo.git").string(), "fsck", "--strict", "--no-dangling"});
  EXPECT_EQ(fsck.exit_code, 0) << fsck.out << fsck.err;
}

TEST_F(HookTest, TheEndOfTheAgentsSessionAppliesTheRetentionLimits) {
  trusted_config("retention:\n  keep_last: 2\n");
  for (const std::string id : {"toolu_1", "toolu_2", "toolu_3"}) {
    ASSERT_EQ(send("PreToolUse", tool("Write", id)).exit_code, 0);
    write_file(ws_ / (id + ".txt"), id);
    ASSERT_EQ(send("PostToolUse", tool("Write", id, ",\"tool_response\":{}")).exit_code, 0);
  }
  ASSERT_EQ(chain().size(), 6u) << "nothing applies the limits while the session goes on";
  ASSERT_EQ(send("SessionEnd", ",\"reason\":\"logout\"").exit_code, 0);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (chain().size() > 2 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  // The chain is cut before the records move to the rewritten checkpoints: read them
  // once the maintenance has let go of the store.
  { fsnap::StoreLock settled = fsnap::Store::open(store_, ws_, false).lock(); }
  EXPECT_EQ(shape(), (std::vector<std::string>{"post_tool toolu_3", "checkpoint"}));
  // The kept checkpoints keep their records.
  EXPECT_TRUE(ledger().read(repo().resolve("post:toolu_3"))->success.value_or(false));
}

TEST_F(HookTest, MalformedInputChangesNothing) {
  for (const std::string& bad :
       {std::string("not json"), std::string("[1,2]"), std::string("{\"no\":\"name\"}"),
        std::string("{\"hook_event_name\":\"PreToolUse\",\"tool_name\":\"Bash\"}"),
        std::string("{\"hook_event_name\":5}")}) {
    CommandResult r = raw(bad);
    // Unreadable, it may be a call about to run: blocked, never run unrecorded.
    EXPECT_EQ(r.exit_code, 2) << bad;
    EXPECT_NE(r.err.find("cannot read the hook event"), std::string::npos) << r.err;
  }
  EXPECT_FALSE(fs::exists(store_)) << "nothing was created";
  // Events shadowbox does not act on pass through.
  EXPECT_EQ(send("Notification", ",\"message\":\"hi\"").exit_code, 0);
}

TEST_F(HookTest, AFailureToCheckpointIsLoud) {
  send("PreToolUse", tool("Write", "toolu_1"));
  // Break the store: the run's ref becomes a directory, so no checkpoint can be recorded.
  fs::path ref = store_ / "repo.git/refs/shadowbox/runs/session-sess-1";
  fs::remove(ref);
  write_file(ref / "blocker", "not a ref");
  write_file(ws_ / "x", "x");
  CommandResult r = send("PreToolUse", tool("Bash", "toolu_2"));
  EXPECT_EQ(r.exit_code, 2) << "the agent must see it";
  EXPECT_NE(r.err.find("checkpointing failed"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("blocked"), std::string::npos) << r.err;
  std::string log = testing_support::read_file(store_ / "runs/session-sess-1/log");
  EXPECT_NE(log.find("checkpointing failed on PreToolUse"), std::string::npos) << log;
}

TEST_F(HookTest, InstallAndUninstallKeepEverythingElse) {
  fs::path settings = ws_ / ".claude/settings.local.json";
  write_file(settings,
             "{\"model\":\"opus\",\"hooks\":{\"PreToolUse\":[{\"matcher\":\"Bash\",\"hooks\":"
             "[{\"type\":\"command\",\"command\":\"my-linter\"}]}]}}");
  auto shadowbox = [&](std::vector<std::string> args) {
    std::vector<std::string> argv = {SHADOWBOX_BIN, "--workspace", ws_.string(), "--store",
                                     store_.string()};
    argv.insert(argv.end(), args.begin(), args.end());
    return run_command(argv, ws_, {"SHADOWBOX_CONFIG="});
  };
  ASSERT_EQ(shadowbox({"hooks", "install"}).exit_code, 0);
  ASSERT_EQ(shadowbox({"hooks", "install"}).exit_code, 0);  // idempotent
  Poco::JSON::Parser parser;
  auto root = parser.parse(testing_support::read_file(settings)).extract<Poco::JSON::Object::Ptr>();
  EXPECT_EQ(root->getValue<std::string>("model"), "opus");
  auto hooks_object = root->getObject("hooks");
  for (const char* event :
       {"PreToolUse", "PostToolUse", "PostToolUseFailure", "SessionStart", "Stop", "SessionEnd"}) {
    ASSERT_TRUE(hooks_object->has(event)) << event;
    std::string text;
    std::ostringstream s;
    hooks_object->getArray(event)->stringify(s);
    text = s.str();
    std::size_t ours = 0;
    for (std::size_t p = text.find("hook claude-code"); p != std::string::npos;
         p = text.find("hook claude-code", p + 1)) {
      ++ours;
    }
    EXPECT_EQ(ours, 1u) << event << ": " << text;
  }
  EXPECT_NE(testing_support::read_file(settings).find("my-linter"), std::string::npos);

  ASSERT_EQ(shadowbox({"hooks", "uninstall"}).exit_code, 0);
  std::string after = testing_support::read_file(settings);
  EXPECT_EQ(after.find("hook claude-code"), std::string::npos) << after;
  EXPECT_NE(after.find("my-linter"), std::string::npos) << after;
  EXPECT_NE(after.find("opus"), std::string::npos);

  write_file(settings, "{broken");
  CommandResult bad = shadowbox({"hooks", "install"});
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.err.find("settings.local.json"), std::string::npos) << bad.err;
  EXPECT_EQ(testing_support::read_file(settings), "{broken") << "left unchanged";
  EXPECT_EQ(shadowbox({"hooks", "install", "--scope", "galaxy"}).exit_code, 2);
}

// The command shadowbox installed for event in a settings file.
std::string installed_command(const fs::path& settings, const std::string& event) {
  Poco::JSON::Parser parser;
  auto root = parser.parse(testing_support::read_file(settings)).extract<Poco::JSON::Object::Ptr>();
  auto groups = root->getObject("hooks")->getArray(event);
  for (std::size_t i = 0; i < groups->size(); ++i) {
    auto list = groups->getObject(static_cast<unsigned>(i))->getArray("hooks");
    for (std::size_t k = 0; k < list->size(); ++k) {
      std::string command =
          list->getObject(static_cast<unsigned>(k))->getValue<std::string>("command");
      if (command.find("hook claude-code") != std::string::npos) return command;
    }
  }
  return "";
}

// Hooks as the person installs them, fired the way Claude Code fires them: the settings'
// command through the shell, the event on stdin, in the project's directory.
class InstalledHooksTest : public ::testing::Test {
 protected:
  InstalledHooksTest() {
    for (const fs::path& p : {home_, data_, project("p1"), project("p2")})
      fs::create_directories(p);
    write_file(project("p1") / "a.txt", "one\n");
    write_file(project("p2") / "b.txt", "two\n");
    hooks::register_agent_run_slice_types();
  }

  // The run the hooks record agent session s in (they name none).
  static constexpr const char* kSessionRun = "session-s";

  fs::path project(const std::string& name) const { return temp_ / name; }
  std::vector<std::string> env(const fs::path& project, std::vector<std::string> more = {}) const {
    std::vector<std::string> out = {
        "HOME=" + home_.string(), "XDG_DATA_HOME=" + data_.string(),
        "SHADOWBOX_STORE=", "SHADOWBOX_CONFIG=", "CLAUDE_PROJECT_DIR=" + project.string()};
    out.insert(out.end(), more.begin(), more.end());
    return out;
  }
  CommandResult shadowbox(const fs::path& project, std::vector<std::string> args) const {
    args.insert(args.begin(), SHADOWBOX_BIN);
    return run_command(args, project, env(project));
  }
  // Fires the hook command of settings for one tool event of project.
  CommandResult fire(const fs::path& settings, const fs::path& project, const std::string& event,
                     const std::string& call, std::vector<std::string> more_env = {}) const {
    std::string json = "{\"hook_event_name\":\"" + event +
                       "\",\"session_id\":\"s\",\"transcript_path\":\"/nowhere/t.jsonl\","
                       "\"cwd\":\"" +
                       project.string() + "\",\"tool_name\":\"Bash\",\"tool_use_id\":\"" + call +
                       // Each call its own command: the same one again and again is a loop
                       // (policy.repeat).
                       "\",\"tool_input\":{\"command\":\"echo " + call +
                       "\"},\"tool_response\":{}}";
    return run_command({"/bin/sh", "-c", installed_command(settings, event)}, project,
                       env(project, std::move(more_env)), json);
  }
  // The stores under the data directory, by the name of their workspace.
  std::map<std::string, fs::path> stores() const {
    std::map<std::string, fs::path> out;
    if (!fs::is_directory(data_ / "shadowbox")) return out;
    for (const fs::directory_entry& e : fs::directory_iterator(data_ / "shadowbox")) {
      std::string name = e.path().filename().string();
      out[name.substr(0, name.rfind('-'))] = e.path();
    }
    return out;
  }
  std::vector<std::string> phases(const fs::path& store) const {
    std::vector<std::string> out;
    for (const fsnap::Checkpoint& c :
         fsnap::ShadowRepo::open(store / "repo.git", false).log(kSessionRun, 0)) {
      out.insert(out.begin(),
                 std::string(fsnap::to_string(c.meta.phase)) + " " + c.meta.tool_call_id);
    }
    return out;
  }

  // Writes project's .claude/<file> with hook (a JSON object) for event, or for every
  // event shadowbox listens to, in a group for every tool.
  static void project_settings(const fs::path& project, const std::string& file,
                               const std::string& hook, const std::string& event = "") {
    std::vector<std::string> events(std::begin(hooks::kHookEvents), std::end(hooks::kHookEvents));
    if (!event.empty()) events = {event};
    std::string text = "{\"hooks\":{";
    for (std::size_t i = 0; i < events.size(); ++i) {
      text += (i ? ",\"" : "\"") + events[i] + "\":[{\"matcher\":\"*\",\"hooks\":[" + hook + "]}]";
    }
    write_file(project / ".claude" / file, text + "}}");
  }
  // A command hook entry as `hooks install` writes one.
  static std::string command_entry(const std::string& command) {
    std::string escaped;
    for (char c : command)
      escaped += c == '"' || c == '\\' ? std::string("\\") + c : std::string(1, c);
    return "{\"type\":\"command\",\"command\":\"" + escaped + "\",\"timeout\":600}";
  }
  // How many lines of the store's log of the session's run hold text.
  static std::size_t log_lines_with(const fs::path& store, const std::string& text) {
    fs::path log = store / "runs" / kSessionRun / "log";
    if (!fs::exists(log)) return 0;
    std::istringstream in(testing_support::read_file(log));
    std::size_t n = 0;
    for (std::string line; std::getline(in, line);) n += line.find(text) != std::string::npos;
    return n;
  }

  testing_support::TempDir temp_;
  fs::path home_ = temp_ / "home";
  fs::path data_ = temp_ / "data";
  fs::path user_settings_ = home_ / ".claude" / "settings.json";
};

TEST_F(InstalledHooksTest, UserScopeHooksRecordEachProjectIntoItsOwnStore) {
  CommandResult install = shadowbox(project("p1"), {"hooks", "install", "--scope", "user"});
  ASSERT_EQ(install.exit_code, 0) << install.err;
  EXPECT_EQ(installed_command(user_settings_, "PreToolUse").find("--store"), std::string::npos);
  for (const char* name : {"p1", "p2"}) {
    SCOPED_TRACE(name);
    std::string call = std::string("toolu_") + name;
    CommandResult pre = fire(user_settings_, project(name), "PreToolUse", call);
    ASSERT_EQ(pre.exit_code, 0) << pre.err;
    write_file(project(name) / "new.txt", "by the tool\n");
    ASSERT_EQ(fire(user_settings_, project(name), "PostToolUse", call).exit_code, 0);
  }
  std::map<std::string, fs::path> found = stores();
  ASSERT_EQ(found.size(), 2u);
  EXPECT_EQ(phases(found.at("p1")),
            (std::vector<std::string>{"pre_tool toolu_p1", "post_tool toolu_p1"}));
  EXPECT_EQ(phases(found.at("p2")),
            (std::vector<std::string>{"pre_tool toolu_p2", "post_tool toolu_p2"}));
  // Without $CLAUDE_PROJECT_DIR, the event's cwd names the project.
  CommandResult by_cwd =
      fire(user_settings_, project("p2"), "PreToolUse", "toolu_cwd", {"CLAUDE_PROJECT_DIR="});
  ASSERT_EQ(by_cwd.exit_code, 0) << by_cwd.err;
  EXPECT_EQ(phases(found.at("p2")).back(), "pre_tool toolu_cwd");
  // A store named for every project would be one project's only.
  CommandResult fixed = run_command(
      {SHADOWBOX_BIN, "--store", (temp_ / "s").string(), "hooks", "install", "--scope", "user"},
      project("p1"), env(project("p1")));
  EXPECT_EQ(fixed.exit_code, 2);
  EXPECT_NE(fixed.err.find("each project's own store"), std::string::npos) << fixed.err;
}

TEST_F(InstalledHooksTest, AHookThatCannotRecordBlocksTheCallAndRunsShowTheGap) {
  ASSERT_EQ(shadowbox(project("p1"), {"hooks", "install", "--scope", "user"}).exit_code, 0);
  ASSERT_EQ(shadowbox(project("p1"), {"init"}).exit_code, 0);
  write_file(project("p1") / ".shadowbox.yaml", "capture: [not, a, map]\n");
  CommandResult pre = fire(user_settings_, project("p1"), "PreToolUse", "toolu_gap");
  EXPECT_EQ(pre.exit_code, 2) << "blocks the call, telling the agent why";
  EXPECT_NE(pre.err.find("cannot record PreToolUse"), std::string::npos) << pre.err;
  EXPECT_NE(pre.err.find("blocked"), std::string::npos) << pre.err;
  CommandResult stop = fire(user_settings_, project("p1"), "Stop", "");
  EXPECT_EQ(stop.exit_code, 1) << "a Stop is never blocked";
  fs::remove(project("p1") / ".shadowbox.yaml");
  CommandResult runs = shadowbox(project("p1"), {"runs", "--json"});
  ASSERT_EQ(runs.exit_code, 0) << runs.err;
  Poco::JSON::Parser parser;
  auto list = parser.parse(runs.out).extract<Poco::JSON::Array::Ptr>();
  ASSERT_EQ(list->size(), 1u) << runs.out;
  EXPECT_EQ(list->getObject(0)->getValue<std::string>("run"), kSessionRun);
  EXPECT_EQ(list->getObject(0)->getValue<int>("gaps"), 2);
  CommandResult text = shadowbox(project("p1"), {"runs"});
  EXPECT_NE(text.err.find("2 hook events that could not be recorded"), std::string::npos)
      << text.err;
}

TEST_F(InstalledHooksTest, HooksFromTheSettingsRecordEachEventOnce) {
  // Project hooks and hooks for every project: the project's record, the others stand aside.
  ASSERT_EQ(shadowbox(project("p1"), {"hooks", "install", "--scope", "user"}).exit_code, 0);
  ASSERT_EQ(shadowbox(project("p1"), {"hooks", "install"}).exit_code, 0);
  fs::path project_settings = project("p1") / ".claude" / "settings.local.json";
  ASSERT_EQ(fire(user_settings_, project("p1"), "PreToolUse", "toolu_1").exit_code, 0);
  ASSERT_EQ(fire(project_settings, project("p1"), "PreToolUse", "toolu_1").exit_code, 0);
  std::map<std::string, fs::path> found = stores();
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(phases(found.at("p1")), (std::vector<std::string>{"pre_tool toolu_1"}));
  // Under `shadowbox run`, whose own hooks name their run, both stand aside.
  for (const fs::path& settings : {user_settings_, project_settings}) {
    CommandResult r = fire(settings, project("p1"), "PreToolUse", "toolu_2",
                           {"SHADOWBOX_RUN=r1", "SHADOWBOX_RUN_HOME=" + (temp_ / "rh").string()});
    EXPECT_EQ(r.exit_code, 0) << r.err;
  }
  EXPECT_EQ(phases(found.at("p1")), (std::vector<std::string>{"pre_tool toolu_1"}));
  EXPECT_FALSE(fsnap::ShadowRepo::open(found.at("p1") / "repo.git", false).has_run("r1"));
}

TEST_F(InstalledHooksTest, UserScopeHooksRecordDespiteProjectHooksThatOnlyLookLikeShadowboxs) {
  // A cloned repository's .claude settings with hooks that look like shadowbox's: none
  // records anything, so the hook for every project must not stand aside for them.
  ASSERT_EQ(shadowbox(project("p1"), {"hooks", "install", "--scope", "user"}).exit_code, 0);
  ASSERT_EQ(shadowbox(project("p1"), {"init"}).exit_code, 0);
  ASSERT_EQ(shadowbox(project("p2"), {"init"}).exit_code, 0);
  std::map<std::string, fs::path> found = stores();
  ASSERT_EQ(found.size(), 2u);
  const fs::path p1_store = found.at("p1");
  const std::string genuine_program = std::string("'") + SHADOWBOX_BIN + "'";
  struct Lookalike {
    std::string name, file, hook, event;
  };
  const std::vector<Lookalike> lookalikes = {
      {"the marker in a comment", "settings.json",
       command_entry("true # shadowbox hook claude-code"), "Notification"},
      {"the marker in an echo", "settings.local.json",
       command_entry("echo shadowbox hook claude-code"), ""},
      {"another program with the right arguments", "settings.json",
       command_entry("/bin/true --store '" + p1_store.string() + "' hook claude-code"), ""},
      {"another workspace's store", "settings.json",
       command_entry(genuine_program + " --store '" + found.at("p2").string() +
                     "' hook claude-code"),
       ""},
      {"an HTTP hook", "settings.json",
       "{\"type\":\"http\",\"url\":\"http://127.0.0.1:9/hook/x\",\"timeout\":600}", ""},
  };
  int n = 0;
  for (const Lookalike& l : lookalikes) {
    SCOPED_TRACE(l.name);
    fs::remove_all(project("p1") / ".claude");
    project_settings(project("p1"), l.file, l.hook, l.event);
    std::string call = "toolu_" + std::to_string(++n);
    EXPECT_EQ(fire(user_settings_, project("p1"), "PreToolUse", call).exit_code, 0);
    write_file(project("p1") / "new.txt", "by call " + call + "\n");
    EXPECT_EQ(fire(user_settings_, project("p1"), "PostToolUse", call).exit_code, 0);
    std::vector<std::string> chain = phases(p1_store);
    for (const std::string& checkpoint : {"pre_tool " + call, "post_tool " + call}) {
      EXPECT_NE(std::find(chain.begin(), chain.end(), checkpoint), chain.end()) << checkpoint;
    }
    // A failing call is rolled back.
    EXPECT_EQ(fire(user_settings_, project("p1"), "PreToolUse", call + "f").exit_code, 0);
    fs::remove(project("p1") / "a.txt");
    write_file(project("p1") / "junk.txt", "junk\n");
    CommandResult failure = fire(user_settings_, project("p1"), "PostToolUseFailure", call + "f");
    EXPECT_EQ(failure.exit_code, 0) << failure.err;
    EXPECT_TRUE(fs::exists(project("p1") / "a.txt")) << "not rolled back";
    EXPECT_FALSE(fs::exists(project("p1") / "junk.txt")) << "not rolled back";
    // As it was, for the next.
    write_file(project("p1") / "a.txt", "one\n");
    fs::remove(project("p1") / "junk.txt");
  }
  // The run's log says why, once.
  EXPECT_EQ(log_lines_with(p1_store, "look like shadowbox's"), 1u);
}

TEST_F(InstalledHooksTest, UserScopeHooksStandAsideForGenuineProjectHooksOnly) {
  ASSERT_EQ(shadowbox(project("p1"), {"hooks", "install", "--scope", "user"}).exit_code, 0);
  // As `hooks install` writes them (the thin client, this workspace's store)...
  ASSERT_EQ(shadowbox(project("p1"), {"hooks", "install"}).exit_code, 0);
  // ... or by hand, running shadowbox itself into another store of this workspace.
  fs::path custom = temp_ / "custom store";
  ASSERT_EQ(shadowbox(project("p2"), {"--store", custom.string(), "init"}).exit_code, 0);
  project_settings(project("p2"), "settings.local.json",
                   command_entry(std::string(SHADOWBOX_BIN) + " --store \"" + custom.string() +
                                 "\" hook claude-code"));
  for (const char* name : {"p1", "p2"}) {
    SCOPED_TRACE(name);
    fs::path p = project(name);
    std::string call = std::string("toolu_") + name;
    for (const char* event : {"PreToolUse", "PostToolUse", "PostToolUseFailure", "Stop"}) {
      CommandResult r = fire(user_settings_, p, event, call);
      EXPECT_EQ(r.exit_code, 0) << event << ": " << r.err;
    }
  }
  // The project's hooks (not fired here) record the events: the others recorded none.
  std::map<std::string, fs::path> found = stores();
  ASSERT_EQ(found.count("p1"), 1u);
  EXPECT_EQ(phases(found.at("p1")), std::vector<std::string>{});
  EXPECT_EQ(found.count("p2"), 0u) << "nothing was written for p2 but its own store";
  EXPECT_EQ(phases(custom), std::vector<std::string>{});
  EXPECT_EQ(log_lines_with(found.at("p1"), "look like shadowbox's"), 0u);
}

}  // namespace
