// End to end with the real Claude Code CLI (pinned by scripts/setup.sh) and the mock
// Messages API, once per way of receiving hook events: "command" (shadowbox's hooks
// installed with `shadowbox hooks install --scope user` into a temporary HOME, one
// process per event) and "http" (the agent under `shadowbox run`, posting its events
// to the run's loopback server). Scripted tool calls, checked on the shadow repository
// (plain-git-equivalent reads) and on the ledger.
#include <fcntl.h>
#include <unistd.h>

#include <sstream>

#include <Poco/JSON/Array.h>
#include <Poco/JSON/Object.h>
#include <gtest/gtest.h>

#include "agent_harness.hpp"
#include "fsnap/shadow_repo.hpp"
#include "hooks/agent_session_state.hpp"
#include "hooks/run_slice_types.hpp"
#include "runs/run_lifecycle.hpp"
#include "sandbox/builtin_slices.hpp"
#include "sandbox/ledger.hpp"

namespace {

namespace fs = boost::filesystem;
using testing_support::CommandResult;
using testing_support::run_command;

class ClaudeCodeHooksTest : public ::testing::TestWithParam<std::string> {
 protected:
  ClaudeCodeHooksTest() {
    fs::create_directories(ws_);
    fs::create_directories(home_);
    hooks::register_agent_run_slice_types();
    ws_ = fs::canonical(ws_);
  }

  // Installs the hooks, runs claude -p on the scenario, returns its result.
  CommandResult run_agent(const std::string& scenario_json) {
    testing_support::write_file(temp_ / "scenario.json", scenario_json);
    server_ = std::make_unique<e2e::MockServer>(temp_ / "scenario.json", temp_ / "requests.log");
    std::vector<std::string> env = e2e::claude_env(*server_, home_);
    std::vector<std::string> agent = {e2e::claude_binary(), "-p",
                                      "do the task",        "--dangerously-skip-permissions",
                                      "--output-format",    output_format_};
    if (output_format_ == "stream-json") agent.push_back("--verbose");
    if (GetParam() == "command") {
      // Hooks for every project find each project's store: this one's is named by the
      // environment the agent runs in.
      env.push_back("SHADOWBOX_STORE=" + store_.string());
      CommandResult install = run_command(
          {SHADOWBOX_BIN, "--workspace", ws_.string(), "hooks", "install", "--scope", "user"}, ws_,
          env);
      EXPECT_EQ(install.exit_code, 0) << install.err;
    }
    if (project_hooks_) {
      // shadowbox's hooks in the project's settings as well (`shadowbox hooks install`).
      CommandResult install = run_command({SHADOWBOX_BIN, "--workspace", ws_.string(), "--store",
                                           store_.string(), "hooks", "install"},
                                          ws_, env);
      EXPECT_EQ(install.exit_code, 0) << install.err;
    }
    if (GetParam() != "command") {
      std::vector<std::string> run = {SHADOWBOX_BIN, "--workspace",   ws_.string(),
                                      "--store",     store_.string(), "run",
                                      "--run-id",    "default",       "--"};
      agent.insert(agent.begin(), run.begin(), run.end());
    }
    CommandResult r = run_command(agent, ws_, env, "", std::chrono::seconds(180));
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    return r;
  }

  // The run the calls are recorded in: `run`'s, or (hooks installed, naming no run) the
  // agent session's own.
  std::string run_name() const {
    std::vector<std::string> runs = fsnap::ShadowRepo::open(store_ / "repo.git", false).runs();
    return runs.size() == 1 ? runs.front() : "default";
  }
  std::vector<fsnap::Checkpoint> chain() const {
    std::vector<fsnap::Checkpoint> log =
        fsnap::ShadowRepo::open(store_ / "repo.git", false).log(run_name(), 0);
    return {log.rbegin(), log.rend()};
  }
  // The checkpoints of one tool call, by phase.
  std::vector<fsnap::Checkpoint> of_call(const std::string& id) const {
    std::vector<fsnap::Checkpoint> out;
    for (const fsnap::Checkpoint& c : chain()) {
      if (c.meta.tool_call_id == id) out.push_back(c);
    }
    return out;
  }
  std::vector<fsnap::TreeChange> diff(const fsnap::Checkpoint& a,
                                      const fsnap::Checkpoint& b) const {
    return fsnap::ShadowRepo::open(store_ / "repo.git", false).diff_trees(a.tree, b.tree);
  }
  sandbox::Ledger ledger() const {
    return sandbox::Ledger::of(fsnap::Store::open(store_, ws_, false));
  }
  std::string path(const std::string& rel) const { return (ws_ / rel).string(); }

  testing_support::TempDir temp_;
  fs::path ws_ = temp_ / "ws";
  fs::path home_ = temp_ / "home";
  fs::path store_ = temp_ / "store";
  std::unique_ptr<e2e::MockServer> server_;
  bool project_hooks_ = false;
  std::string output_format_ = "json";  // claude's --output-format
};

TEST_P(ClaudeCodeHooksTest, WriteEditBashEachGetOnePreAndOnePostCheckpoint) {
  ASSERT_TRUE(fs::exists(e2e::claude_binary())) << "run scripts/setup.sh to install Claude Code";
  run_agent(R"({"steps":[
    {"tool":"Write","id":"toolu_w","input":{"file_path":")" +
            path("notes.txt") +
            R"(","content":"first line\n"}},
    {"tool":"Edit","id":"toolu_e","input":{"file_path":")" +
            path("notes.txt") +
            R"(","old_string":"first line","new_string":"edited line"}},
    {"tool":"Bash","id":"toolu_b","input":{"command":"echo made by bash > bash.txt","description":"write"}},
    {"text":"finished"}]})");
  EXPECT_EQ(testing_support::read_file(ws_ / "notes.txt"), "edited line\n");
  EXPECT_EQ(testing_support::read_file(ws_ / "bash.txt"), "made by bash\n");

  const std::vector<std::pair<std::string, std::string>> calls = {
      {"toolu_w", "Write"}, {"toolu_e", "Edit"}, {"toolu_b", "Bash"}};
  const std::vector<std::pair<std::string, char>> expected_change = {
      {"notes.txt", 'A'}, {"notes.txt", 'M'}, {"bash.txt", 'A'}};
  for (std::size_t i = 0; i < calls.size(); ++i) {
    SCOPED_TRACE(calls[i].second);
    std::vector<fsnap::Checkpoint> c = of_call(calls[i].first);
    ASSERT_EQ(c.size(), 2u);
    EXPECT_EQ(c[0].meta.phase, fsnap::Phase::kPreTool);
    EXPECT_EQ(c[1].meta.phase, fsnap::Phase::kPostTool);
    EXPECT_EQ(c[1].meta.tool_name, calls[i].second);
    std::vector<fsnap::TreeChange> changes = diff(c[0], c[1]);
    ASSERT_EQ(changes.size(), 1u);
    EXPECT_EQ(changes[0].path, expected_change[i].first);
    EXPECT_EQ(fsnap::status_letter(changes[0].kind), expected_change[i].second);
    std::optional<sandbox::LedgerRecord> post = ledger().read(c[1]);
    ASSERT_TRUE(post.has_value());
    EXPECT_TRUE(post->success.value_or(false));
  }
  // The agent's session was captured, and the run is complete.
  sandbox::SessionSnapshot session = ledger().session(*ledger().latest(run_name()));
  ASSERT_GE(session.slice<hooks::AgentSession>().size(), 1u);
  EXPECT_FALSE(session.slice<hooks::AgentSession>()[0].session_id.empty());
  EXPECT_EQ(session.slice<runs::RunStatus>().latest()->status, "complete");
  EXPECT_EQ(session.slice<sandbox::ToolInvoked>().size(), 3u);
}

TEST_P(ClaudeCodeHooksTest, ShadowboxHooksInTheProjectTooRecordEachEventOnce) {
  ASSERT_TRUE(fs::exists(e2e::claude_binary())) << "run scripts/setup.sh to install Claude Code";
  project_hooks_ = true;
  run_agent(R"({"steps":[
    {"tool":"Bash","id":"toolu_1","input":{"command":"echo one > one.txt","description":"one"}},
    {"tool":"Bash","id":"toolu_2","input":{"command":"echo two > two.txt","description":"two"}},
    {"text":"finished"}]})");
  for (const char* call : {"toolu_1", "toolu_2"}) {
    std::vector<fsnap::Checkpoint> c = of_call(call);
    ASSERT_EQ(c.size(), 2u) << call;
    EXPECT_EQ(c[0].meta.phase, fsnap::Phase::kPreTool);
    EXPECT_EQ(c[1].meta.phase, fsnap::Phase::kPostTool);
  }
  std::size_t ends = 0;
  for (const fsnap::Checkpoint& c : chain()) {
    std::optional<sandbox::LedgerRecord> r = ledger().read(c);
    if (r && r->result_summary.rfind("agent session ended", 0) == 0) ++ends;
  }
  EXPECT_EQ(ends, 1u) << "one SessionEnd record";
}

TEST_P(ClaudeCodeHooksTest, AFailingBashCallIsRolledBackAndTheAgentIsTold) {
  ASSERT_TRUE(fs::exists(e2e::claude_binary())) << "run scripts/setup.sh to install Claude Code";
  testing_support::write_file(ws_ / "keep.txt", "original\n");
  run_agent(R"({"steps":[
    {"tool":"Bash","id":"toolu_fail","input":{"command":"echo junk > junk.txt; echo more >> keep.txt; exit 3","description":"fails"}},
    {"text":"finished"}]})");
  EXPECT_EQ(testing_support::read_file(ws_ / "keep.txt"), "original\n");
  EXPECT_FALSE(fs::exists(ws_ / "junk.txt"));
  std::vector<fsnap::Checkpoint> c = of_call("toolu_fail");
  ASSERT_EQ(c.size(), 3u);
  EXPECT_EQ(c[1].meta.phase, fsnap::Phase::kSafety) << "the state the call left";
  EXPECT_EQ(c[2].meta.phase, fsnap::Phase::kCheckpoint) << "the state after the rollback";
  EXPECT_EQ(c[2].tree, c[0].tree);
  std::optional<sandbox::LedgerRecord> rec = ledger().read(c[0]);
  ASSERT_TRUE(rec.has_value());
  EXPECT_FALSE(rec->success.value_or(true));
  // The next request to the model carried shadowbox's explanation.
  bool told = false;
  for (const Poco::JSON::Object::Ptr& req : server_->requests()) {
    std::ostringstream s;
    req->stringify(s);
    if (s.str().find("shadowbox rolled back") != std::string::npos) told = true;
  }
  EXPECT_TRUE(told) << "the agent never saw the rollback";
}

TEST_P(ClaudeCodeHooksTest, APersonsFilesWrittenDuringAFailedWriteAreKept) {
  ASSERT_TRUE(fs::exists(e2e::claude_binary())) << "run scripts/setup.sh to install Claude Code";
  // While the Write runs, a person saves two files: the project's own PreToolUse hook
  // waits until shadowbox has recorded the call's pre-tool checkpoint, then writes
  // person.txt and a file named blocker — where the Write, past its checks, finds a
  // file instead of the directory it writes into, and fails.
  std::string wait_then_write =
      "for i in $(seq 200); do '" + std::string(SHADOWBOX_BIN) + "' --workspace '" + ws_.string() +
      "' --store '" + store_.string() +
      "' log 2>/dev/null | grep -q 'pre_tool Write toolu_w' && break; sleep 0.05; done; "
      "echo typed by a person > '" +
      path("person.txt") + "'; echo saved > '" + path("blocker") + "'";
  Poco::JSON::Object::Ptr hook = new Poco::JSON::Object;
  hook->set("type", "command");
  hook->set("command", wait_then_write);
  Poco::JSON::Array::Ptr hook_list = new Poco::JSON::Array;
  hook_list->add(hook);
  Poco::JSON::Object::Ptr matcher = new Poco::JSON::Object;
  matcher->set("matcher", "Write");
  matcher->set("hooks", hook_list);
  Poco::JSON::Array::Ptr pre = new Poco::JSON::Array;
  pre->add(matcher);
  Poco::JSON::Object::Ptr hooks = new Poco::JSON::Object;
  hooks->set("PreToolUse", pre);
  Poco::JSON::Object::Ptr settings = new Poco::JSON::Object;
  settings->set("hooks", hooks);
  std::ostringstream text;
  settings->stringify(text);
  testing_support::write_file(ws_ / ".claude" / "settings.json", text.str());

  run_agent(R"({"steps":[
    {"tool":"Write","id":"toolu_w","input":{"file_path":")" +
            path("blocker/new.txt") + R"(","content":"never written\n"}},
    {"text":"finished"}]})");
  std::string log =
      run_command({SHADOWBOX_BIN, "--workspace", ws_.string(), "--store", store_.string(), "log"},
                  ws_)
          .out;
  std::string requests;
  for (const Poco::JSON::Object::Ptr& req : server_->requests()) {
    std::ostringstream t;
    req->stringify(t);
    std::size_t at = t.str().find("tool_result");
    if (at != std::string::npos) requests += t.str().substr(at, 600) + "\n";
  }
  ASSERT_TRUE(fs::exists(ws_ / "person.txt")) << "the rollback took the person's file\n"
                                              << log << requests;
  EXPECT_EQ(testing_support::read_file(ws_ / "person.txt"), "typed by a person\n");
  std::vector<fsnap::Checkpoint> c = of_call("toolu_w");
  ASSERT_EQ(c.size(), 2u);
  std::optional<sandbox::LedgerRecord> pre_record = ledger().read(c[0]);
  ASSERT_TRUE(pre_record && pre_record->paths);
  EXPECT_EQ(*pre_record->paths, std::vector<std::string>{"blocker/new.txt"});
  std::optional<sandbox::LedgerRecord> end = ledger().read(c[1]);
  ASSERT_TRUE(end);
  EXPECT_EQ(end->rollback, "refused") << end->rollback_reason;
  ASSERT_EQ(end->rollback_kept.size(), 2u);
  EXPECT_EQ(end->rollback_kept[0].first, "blocker");
  EXPECT_EQ(end->rollback_kept[1].first, "person.txt");
  EXPECT_EQ(end->rollback_kept[1].second, "changed outside any tool call");
  EXPECT_EQ(testing_support::read_file(ws_ / "blocker"), "saved\n");
}

TEST_P(ClaudeCodeHooksTest, ARollbackIsShownToThePersonAndKeptInTheHistory) {
  ASSERT_TRUE(fs::exists(e2e::claude_binary())) << "run scripts/setup.sh to install Claude Code";
  testing_support::write_file(ws_ / "keep.txt", "original\n");
  output_format_ = "stream-json";
  CommandResult r = run_agent(R"({"steps":[
    {"tool":"Bash","id":"toolu_fail","input":{"command":"echo junk > junk.txt; echo more >> keep.txt; exit 3","description":"fails"}},
    {"text":"finished"}]})");
  EXPECT_FALSE(fs::exists(ws_ / "junk.txt"));
  // The hook's systemMessage: Claude Code shows it to the person (in print mode, a
  // `system` message of subtype `informational`, prefixed with the hook's name).
  std::vector<std::string> shown;
  std::istringstream lines(r.out);
  for (std::string line; std::getline(lines, line);) {
    if (line.empty() || line[0] != '{') continue;
    Poco::JSON::Parser parser;
    auto m = parser.parse(line).extract<Poco::JSON::Object::Ptr>();
    if (m->optValue<std::string>("type", "") == "system" &&
        m->optValue<std::string>("subtype", "") == "informational") {
      shown.push_back(m->optValue<std::string>("content", ""));
    }
  }
  ASSERT_EQ(shown.size(), 1u) << r.out;
  EXPECT_NE(shown[0].find("shadowbox rolled back the failed Bash call toolu_fail: "),
            std::string::npos)
      << shown[0];
  EXPECT_NE(shown[0].find("reverted keep.txt"), std::string::npos) << shown[0];
  EXPECT_NE(shown[0].find("removed junk.txt"), std::string::npos) << shown[0];
  EXPECT_NE(shown[0].find("shadowbox diff pre:toolu_fail failed:toolu_fail"), std::string::npos)
      << shown[0];
  // Not the model's: no request to it carried the message.
  for (const Poco::JSON::Object::Ptr& req : server_->requests()) {
    EXPECT_EQ(e2e::to_json(req).find("failed:toolu_fail"), std::string::npos);
  }

  // What the person is pointed to: the workspace as the call left it, and the log.
  std::vector<std::string> cli = {SHADOWBOX_BIN, "--workspace", ws_.string(), "--store",
                                  store_.string()};
  auto shadowbox = [&](std::vector<std::string> args) {
    std::vector<std::string> argv = cli;
    argv.insert(argv.end(), args.begin(), args.end());
    CommandResult out = run_command(argv, ws_, {"SHADOWBOX_CONFIG=", "SHADOWBOX_NO_PROGRESS=1"});
    EXPECT_EQ(out.exit_code, 0) << out.err;
    return out.out;
  };
  EXPECT_EQ(shadowbox({"diff", "--name-status", "pre:toolu_fail", "failed:toolu_fail"}),
            "A  junk.txt\nM  keep.txt\n");
  std::string log = shadowbox({"log", "--checkpoints"});
  EXPECT_NE(log.find("checkpoint Bash toolu_fail failed"), std::string::npos) << log;
  EXPECT_NE(log.find(", rolled back: "), std::string::npos) << log;
}

// Files over capture.max_file_size (100 MiB by default) are in no checkpoint's tree:
// the store keeps a copy of each (a reflink or hard link: free), and a rollback puts one
// back from it — or, when it cannot (a hard link written in place), tells the model its
// path. Sparse files, so that the test writes next to nothing.
TEST_P(ClaudeCodeHooksTest, ALargeFileDeletedByAFailingBashCallComesBack) {
  ASSERT_TRUE(fs::exists(e2e::claude_binary())) << "run scripts/setup.sh to install Claude Code";
  constexpr off_t kSize = off_t{200} << 20;
  auto make_large = [&](const std::string& rel, const std::string& head) {
    fs::create_directories((ws_ / rel).parent_path());
    int fd = ::open(path(rel).c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::pwrite(fd, head.data(), head.size(), 0), static_cast<ssize_t>(head.size()));
    ASSERT_EQ(::ftruncate(fd, kSize), 0);
    ::close(fd);
  };
  make_large("node_modules/.cache/model.bin", "model weights");
  make_large("data.bin", "original data");
  testing_support::write_file(ws_ / "node_modules/pkg/index.js", "module.exports = 1;\n");
  run_agent(R"({"steps":[
    {"tool":"Bash","id":"toolu_rm","input":{"command":"printf CHANGED | dd of=data.bin conv=notrunc status=none; rm -rf node_modules; exit 1","description":"clean"}},
    {"text":"finished"}]})");

  // The deleted one is back, whole.
  ASSERT_TRUE(fs::exists(ws_ / "node_modules/.cache/model.bin"));
  EXPECT_EQ(fs::file_size(ws_ / "node_modules/.cache/model.bin"),
            static_cast<std::uintmax_t>(kSize));
  std::string head(13, '\0');
  int fd = ::open(path("node_modules/.cache/model.bin").c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  EXPECT_EQ(::pread(fd, head.data(), head.size(), 0), 13);
  ::close(fd);
  EXPECT_EQ(head, "model weights");
  EXPECT_EQ(testing_support::read_file(ws_ / "node_modules/pkg/index.js"), "module.exports = 1;\n");

  // The one written in place: back where its copy is a file of its own (a reflink), or
  // else named to the model and in the record of the rollback — never said restored.
  // pre_tool, the safety checkpoint of the rollback (failed:toolu_rm), the end.
  std::vector<fsnap::Checkpoint> c = of_call("toolu_rm");
  ASSERT_EQ(c.size(), 3u);
  std::optional<sandbox::LedgerRecord> end = ledger().read(c.back());
  ASSERT_TRUE(end);
  EXPECT_EQ(end->rollback, "rolled_back") << end->rollback_reason;
  std::string told;
  for (const Poco::JSON::Object::Ptr& req : server_->requests()) {
    std::ostringstream s;
    req->stringify(s);
    if (s.str().find("shadowbox") != std::string::npos) told += s.str();
  }
  // JSON may escape a slash.
  for (std::size_t at; (at = told.find("\\/")) != std::string::npos;) told.erase(at, 1);
  std::string data_head = testing_support::read_file(ws_ / "data.bin").substr(0, 13);
  if (data_head == "original data") {
    EXPECT_TRUE(end->rollback_unrestored.empty());
    EXPECT_NE(told.find("rolled back the workspace"), std::string::npos) << told;
  } else {
    EXPECT_EQ(data_head, "CHANGEDl data");
    ASSERT_EQ(end->rollback_unrestored.size(), 1u);
    EXPECT_EQ(end->rollback_unrestored[0].first, "data.bin");
    EXPECT_NE(told.find("could NOT roll back all of this failed Bash call"), std::string::npos)
        << told;
    EXPECT_NE(told.find("data.bin (it was written in place"), std::string::npos) << told;
    CommandResult log = run_command({SHADOWBOX_BIN, "--workspace", ws_.string(), "--store",
                                     store_.string(), "log", "--checkpoints"},
                                    ws_, {"SHADOWBOX_CONFIG=", "SHADOWBOX_NO_PROGRESS=1"});
    EXPECT_NE(log.out.find("\n    NOT restored: data.bin (it was written in place"),
              std::string::npos)
        << log.out << log.err;
  }
  EXPECT_NE(told.find("restored node_modules/.cache/model.bin"), std::string::npos) << told;
}

TEST_P(ClaudeCodeHooksTest, AnEditBetweenToolCallsIsAttributedToNoTool) {
  ASSERT_TRUE(fs::exists(e2e::claude_binary())) << "run scripts/setup.sh to install Claude Code";
  run_agent(R"({"steps":[
    {"tool":"Bash","id":"toolu_1","input":{"command":"echo one > one.txt","description":"one"}},
    {"tool":"Bash","id":"toolu_2","input":{"command":"echo two > two.txt","description":"two"},
     "before":{"write":{"path":")" +
            path("human.txt") + R"(","content":"typed by a person\n"}}},
    {"text":"finished"}]})");
  std::vector<fsnap::Checkpoint> all = chain();
  std::size_t post1 = 0, pre2 = 0;
  for (std::size_t i = 0; i < all.size(); ++i) {
    if (all[i].meta.tool_call_id == "toolu_1" && all[i].meta.phase == fsnap::Phase::kPostTool)
      post1 = i;
    if (all[i].meta.tool_call_id == "toolu_2" && all[i].meta.phase == fsnap::Phase::kPreTool)
      pre2 = i;
  }
  ASSERT_EQ(pre2, post1 + 2) << "one checkpoint between the calls";
  const fsnap::Checkpoint& between = all[post1 + 1];
  EXPECT_TRUE(between.meta.tool_call_id.empty());
  EXPECT_TRUE(between.meta.tool_name.empty());
  std::vector<fsnap::TreeChange> human = diff(all[post1], between);
  ASSERT_EQ(human.size(), 1u);
  EXPECT_EQ(human[0].path, "human.txt");
  std::vector<fsnap::Checkpoint> second = of_call("toolu_2");
  std::vector<fsnap::TreeChange> tool2 = diff(second[0], second[1]);
  ASSERT_EQ(tool2.size(), 1u) << "the person's edit is not in the tool's diff";
  EXPECT_EQ(tool2[0].path, "two.txt");
}

TEST_P(ClaudeCodeHooksTest, AProjectsLookalikeOfShadowboxsHooksDoesNotSwitchTheRecordingOff) {
  ASSERT_TRUE(fs::exists(e2e::claude_binary())) << "run scripts/setup.sh to install Claude Code";
  // As a cloned repository may ship it: a hook that only looks like shadowbox's.
  testing_support::write_file(
      ws_ / ".claude" / "settings.json",
      R"({"hooks":{"Notification":[{"hooks":[{"type":"command","command":"true # shadowbox hook claude-code"}]}],
          "PreToolUse":[{"matcher":"*","hooks":[{"type":"command","command":"echo shadowbox hook claude-code","timeout":600}]}]}})");
  testing_support::write_file(ws_ / "keep.txt", "original\n");
  run_agent(R"({"steps":[
    {"tool":"Bash","id":"toolu_ok","input":{"command":"echo one > one.txt","description":"one"}},
    {"tool":"Bash","id":"toolu_fail","input":{"command":"echo more >> keep.txt; exit 3","description":"fails"}},
    {"text":"finished"}]})");
  EXPECT_EQ(testing_support::read_file(ws_ / "keep.txt"), "original\n") << "not rolled back";
  ASSERT_TRUE(fs::exists(store_ / "repo.git")) << "nothing was recorded";
  std::vector<fsnap::Checkpoint> ok = of_call("toolu_ok");
  ASSERT_EQ(ok.size(), 2u);
  EXPECT_EQ(ok[0].meta.phase, fsnap::Phase::kPreTool);
  EXPECT_EQ(ok[1].meta.phase, fsnap::Phase::kPostTool);
  EXPECT_EQ(of_call("toolu_fail").size(), 3u) << "pre_tool, the state it left, the rollback";
}

INSTANTIATE_TEST_SUITE_P(Transports, ClaudeCodeHooksTest, ::testing::Values("command", "http"),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return info.param;
                         });

}  // namespace
