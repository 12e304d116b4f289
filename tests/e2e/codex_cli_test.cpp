// The pinned Codex CLI (0.169.0) against the scripted mock of the OpenAI Responses API
// (fixtures/mock-openai), with command hooks in $CODEX_HOME/hooks.json that record what
// they are given: the facts shadowbox's Codex adapter stands on, checked against the
// real CLI. Hooks nobody trusted are skipped without a word; trusted, PreToolUse and
// PostToolUse fire around every shell command with the thread id and the model's call
// id; a deny answer blocks the call and the model reads the reason; `codex exec resume`
// sends the earlier history — and of a session cut before a call, only the turns before
// it.
#include <cstdlib>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <Poco/JSON/Parser.h>

#include <gtest/gtest.h>

#include "agent_harness.hpp"
#include "hooks/agent_adapter.hpp"

namespace {

namespace fs = boost::filesystem;
using Poco::JSON::Object;
using testing_support::CommandResult;
using testing_support::write_file;

class CodexCliTest : public ::testing::Test {
 protected:
  CodexCliTest() {
    fs::create_directories(ws_);
    auto hook = [&](const std::string& event) {
      return "\"" + event +
             "\":[{\"matcher\":\"*\",\"hooks\":[{\"type\":\"command\",\"command\":\"" +
             hooks_.command(event) + "\",\"timeout\":30}]}]";
    };
    write_file(home_ / "hooks.json",
               "{\"hooks\":{" + hook("PreToolUse") + "," + hook("PostToolUse") + "}}");
  }

  // Runs `codex exec [args] PROMPT` (or `codex exec resume ...`) against a mock playing
  // steps; the mock's requests in requests_.
  CommandResult codex(const std::string& steps, std::vector<std::string> args) {
    write_file(temp_ / "scenario.json", "{\"steps\":[" + steps + "]}");
    fs::remove(temp_ / "mock.log");
    e2e::MockServer server(temp_ / "scenario.json", temp_ / "mock.log", e2e::MockApi::kOpenAi);
    write_file(home_ / "config.toml",
               "model = \"gpt-5.1-codex\"\n"
               "model_provider = \"mock\"\n"
               "[model_providers.mock]\n"
               "name = \"mock\"\n"
               "base_url = \"" +
                   server.base_url() +
                   "/v1\"\n"
                   "env_key = \"OPENAI_API_KEY\"\n"
                   "wire_api = \"responses\"\n"
                   "request_max_retries = 0\n"
                   "stream_max_retries = 0\n");
    std::vector<std::string> argv = {e2e::codex_binary(), "exec"};
    argv.insert(argv.end(), args.begin(), args.end());
    CommandResult r = testing_support::run_command(
        argv, ws_,
        {"HOME=" + (temp_ / "home").string(), "CODEX_HOME=" + home_.string(),
         "OPENAI_API_KEY=sk-mock-key", "OPENAI_BASE_URL="},
        "", std::chrono::seconds(120));
    requests_ = server.requests();
    return r;
  }

  static std::vector<std::string> flags(bool trust_hooks) {
    std::vector<std::string> f = {"--skip-git-repo-check",
                                  "--dangerously-bypass-approvals-and-sandbox", "--json"};
    if (trust_hooks) f.emplace_back("--dangerously-bypass-hook-trust");
    return f;
  }

  // The thread id in the CLI's --json output (its thread.started line).
  static std::string thread_id(const std::string& out) {
    std::istringstream in(out);
    for (std::string line; std::getline(in, line);) {
      if (line.find("\"thread.started\"") == std::string::npos) continue;
      Poco::JSON::Parser parser;
      return parser.parse(line).extract<Object::Ptr>()->optValue<std::string>("thread_id", "");
    }
    return "";
  }

  // A shell command step; with id, the model's call id for it.
  static std::string shell(const std::string& command, const std::string& id = "") {
    return "{\"tool\":\"shell\"," + (id.empty() ? "" : "\"id\":\"" + id + "\",") +
           "\"input\":{\"command\":\"" + command + "\"}}";
  }

  testing_support::TempDir temp_{"shadowbox-codex"};
  fs::path ws_ = temp_ / "ws";
  fs::path home_ = temp_ / "codex-home";
  e2e::HookRecorder hooks_{temp_ / "hooks"};
  std::vector<Object::Ptr> requests_;
};

TEST_F(CodexCliTest, HooksNobodyTrustedAreSkippedSilently) {
  ASSERT_TRUE(fs::exists(e2e::codex_binary())) << "run scripts/setup.sh";
  std::vector<std::string> args = flags(false);
  args.emplace_back("go");
  CommandResult r = codex(shell("echo hello > created.txt") + ",{\"text\":\"done\"}", args);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_TRUE(fs::exists(ws_ / "created.txt"));
  EXPECT_TRUE(hooks_.events().empty())
      << "shadowbox must install its hooks trusted, or refuse to start";
}

TEST_F(CodexCliTest, TrustedHooksSeeEveryShellCommandWithTheThreadAndTheCallId) {
  ASSERT_TRUE(fs::exists(e2e::codex_binary())) << "run scripts/setup.sh";
  std::vector<std::string> args = flags(true);
  args.emplace_back("do the thing");
  CommandResult r = codex(shell("echo hello > created.txt && echo wrote", "call_a") + "," +
                              shell("echo failing >&2; exit 3", "call_b") + ",{\"text\":\"done\"}",
                          args);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_TRUE(fs::exists(ws_ / "created.txt"));
  std::string thread = thread_id(r.out);
  ASSERT_FALSE(thread.empty()) << r.out;
  auto seen = hooks_.events();
  ASSERT_EQ(hooks_.names(),
            (std::vector<std::string>{"PreToolUse", "PostToolUse", "PreToolUse", "PostToolUse"}));
  std::vector<std::string> calls;
  for (const auto& [name, input] : seen) {
    EXPECT_EQ(input->getValue<std::string>("hook_event_name"), name);
    EXPECT_EQ(input->getValue<std::string>("tool_name"), "Bash");
    EXPECT_EQ(input->getValue<std::string>("session_id"), thread);
    EXPECT_EQ(fs::path(input->getValue<std::string>("cwd")).filename(), "ws");
    // The rollout file, under CODEX_HOME/sessions/, is what a resume needs.
    std::string transcript = input->getValue<std::string>("transcript_path");
    EXPECT_EQ(transcript.rfind((home_ / "sessions").string(), 0), 0u) << transcript;
    EXPECT_TRUE(fs::exists(transcript)) << transcript;
    calls.push_back(input->getValue<std::string>("tool_use_id"));
  }
  // The model's call ids, the same in each call's two events.
  EXPECT_EQ(calls, (std::vector<std::string>{"call_a", "call_a", "call_b", "call_b"}));
  EXPECT_EQ(seen[0].second->getObject("tool_input")->getValue<std::string>("command"),
            "echo hello > created.txt && echo wrote");
  // PostToolUse carries the command's output only, not its exit status (the adapter
  // has to learn a failure from the rollout file).
  EXPECT_EQ(seen[3].second->getValue<std::string>("tool_response"), "failing\n");
}

TEST_F(CodexCliTest, ADenyAnswerBlocksTheCallAndTheModelReadsTheReason) {
  ASSERT_TRUE(fs::exists(e2e::codex_binary())) << "run scripts/setup.sh";
  hooks_.answer("PreToolUse",
                "{\"hookSpecificOutput\":{\"hookEventName\":\"PreToolUse\",\"permissionDecision\":"
                "\"deny\",\"permissionDecisionReason\":\"limit reached\"}}");
  std::vector<std::string> args = flags(true);
  args.emplace_back("go");
  CommandResult r = codex(shell("echo x > denied.txt") + ",{\"text\":\"done\"}", args);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_FALSE(fs::exists(ws_ / "denied.txt")) << "the call ran";
  std::vector<Object::Ptr> main = e2e::main_requests(requests_);
  ASSERT_EQ(main.size(), 2u);
  std::string said = e2e::to_json(main[1]->getArray("function_call_outputs"));
  EXPECT_NE(said.find("blocked by PreToolUse hook: limit reached"), std::string::npos) << said;
  for (const auto& [name, input] : hooks_.events()) EXPECT_NE(name, "PostToolUse");
}

TEST_F(CodexCliTest, ResumeSendsTheEarlierHistory) {
  ASSERT_TRUE(fs::exists(e2e::codex_binary())) << "run scripts/setup.sh";
  std::vector<std::string> args = flags(true);
  args.emplace_back("first prompt");
  CommandResult first = codex(shell("echo one > one.txt") + ",{\"text\":\"done\"}", args);
  ASSERT_EQ(first.exit_code, 0) << first.out << first.err;
  std::string thread = thread_id(first.out);
  ASSERT_FALSE(thread.empty());
  std::vector<std::string> resume = {"resume", thread};
  std::vector<std::string> more = flags(true);
  resume.insert(resume.end(), more.begin(), more.end());
  resume.emplace_back("second prompt");
  CommandResult second = codex("{\"text\":\"again\"}", resume);
  ASSERT_EQ(second.exit_code, 0) << second.out << second.err;
  EXPECT_EQ(thread_id(second.out), thread);
  std::vector<Object::Ptr> main = e2e::main_requests(requests_);
  ASSERT_FALSE(main.empty());
  std::string history = e2e::to_json(main[0]->getArray("user_texts"));
  EXPECT_NE(history.find("first prompt"), std::string::npos) << history;
  EXPECT_EQ(main[0]->getArray("function_call_ids")->size(), 1u);
  EXPECT_EQ(main[0]->getValue<std::string>("last_user_text"), "second prompt");
}

TEST_F(CodexCliTest, AResumedSessionCutBeforeTheSecondCallSendsTheFirstCallOnly) {
  ASSERT_TRUE(fs::exists(e2e::codex_binary())) << "run scripts/setup.sh";
  // The sessions copied at every PreToolUse, as shadowbox preserves the HOME.
  e2e::SessionSnapshots snapshots(temp_ / "snapshots", {{home_ / "sessions", ".codex/sessions"}});
  write_file(home_ / "hooks.json",
             "{\"hooks\":{\"PreToolUse\":[{\"matcher\":\"*\",\"hooks\":[{\"type\":"
             "\"command\",\"command\":\"" +
                 snapshots.command() + "\",\"timeout\":30}]}]}}");
  std::vector<std::string> args = flags(true);
  args.emplace_back("do three things");
  // Each call's reply says something first: what the resumed model must (not) read.
  auto said = [](const std::string& step, const std::string& text) {
    return "{\"say\":\"" + text + "\"," + step.substr(1);
  };
  CommandResult first =
      codex(said(shell("echo one > one.txt", "call_a"), "First one.") + "," +
                said(shell("echo two > two.txt", "call_b"), "Now two.") + "," +
                shell("echo three > three.txt", "call_c") + ",{\"text\":\"done\"}",
            args);
  ASSERT_EQ(first.exit_code, 0) << first.out << first.err;
  std::string thread = thread_id(first.out);
  fs::path at_b = snapshots.home_where("\"call_b\"");
  ASSERT_FALSE(at_b.empty());

  // A fresh HOME holding the sessions as at pre:call_b (no sqlite state), cut there.
  fs::path rewound = temp_ / "rewound";
  ASSERT_EQ(testing_support::run_command({"cp", "-R", at_b.string(), rewound.string()}).exit_code,
            0);
  hooks::SessionCut cut = hooks::adapter_for(hooks::AgentKind::kCodex)
                              .cut_session(rewound, {thread, "call_b", "Bash", ""});
  ASSERT_NE(cut.session_id, thread);

  home_ = rewound / ".codex";
  std::vector<std::string> resume = {"resume", cut.session_id};
  std::vector<std::string> more = flags(false);
  resume.insert(resume.end(), more.begin(), more.end());
  resume.emplace_back("try it another way");
  CommandResult second = codex("{\"text\":\"again\"}", resume);
  ASSERT_EQ(second.exit_code, 0) << second.out << second.err;
  EXPECT_EQ(thread_id(second.out), cut.session_id);
  std::vector<Object::Ptr> main = e2e::main_requests(requests_);
  ASSERT_FALSE(main.empty());
  // The first call and its output, the prompts; nothing of call_b or after.
  EXPECT_EQ(e2e::to_json(main[0]->getArray("function_call_ids")), "[\"call_a\"]");
  EXPECT_EQ(e2e::to_json(main[0]->getArray("function_call_output_ids")), "[\"call_a\"]");
  std::string history = e2e::to_json(main[0]->getArray("user_texts"));
  EXPECT_NE(history.find("do three things"), std::string::npos) << history;
  EXPECT_EQ(main[0]->getValue<std::string>("last_user_text"), "try it another way");
  // What the model said: in the first call's reply, and nothing of the second's.
  EXPECT_EQ(e2e::to_json(main[0]->getArray("assistant_texts")), "[\"First one.\"]");
}

// `shadowbox rewind` of a Codex run: a three-call run under `shadowbox run`, rewound to
// the second call's pre_tool checkpoint, starts a new run whose model is sent the
// conversation up to the first call only, in the checkpoint's workspace and session.
TEST_F(CodexCliTest, RewindsAThreeCallRunToTheSecondCall) {
  ASSERT_TRUE(fs::exists(e2e::codex_binary())) << "run scripts/setup.sh";
  fs::path user_home = temp_ / "user-home";
  fs::path store = temp_ / "store";
  std::string tools = std::string(SHADOWBOX_SOURCE_DIR) + "/.tools/node_modules/.bin";
  const char* path = std::getenv("PATH");
  auto shadowbox = [&](std::vector<std::string> args) {
    std::vector<std::string> argv = {SHADOWBOX_BIN, "--workspace", ws_.string(), "--store",
                                     store.string()};
    argv.insert(argv.end(), args.begin(), args.end());
    return testing_support::run_command(argv, ws_,
                                        {"HOME=" + user_home.string(), "OPENAI_API_KEY=sk-mock-key",
                                         "SHADOWBOX_CONFIG=", "SHADOWBOX_NO_PROGRESS=1",
                                         "PATH=" + tools + ":" + (path ? path : "/usr/bin:/bin")},
                                        "", std::chrono::seconds(180));
  };
  // A mock playing steps, named in the user's own Codex configuration (carried into runs).
  auto start_mock = [&](const std::string& name, const std::string& steps) {
    write_file(temp_ / (name + ".json"), "{\"steps\":[" + steps + "]}");
    auto server = std::make_unique<e2e::MockServer>(temp_ / (name + ".json"),
                                                    temp_ / (name + ".log"), e2e::MockApi::kOpenAi);
    write_file(user_home / ".codex" / "config.toml",
               "model = \"gpt-5.1-codex\"\nmodel_provider = \"mock\"\n[model_providers.mock]\n"
               "name = \"mock\"\nbase_url = \"" +
                   server->base_url() +
                   "/v1\"\nenv_key = \"OPENAI_API_KEY\"\nwire_api = \"responses\"\n"
                   "request_max_retries = 0\nstream_max_retries = 0\n");
    return server;
  };
  auto said = [](const std::string& step, const std::string& text) {
    return "{\"say\":\"" + text + "\"," + step.substr(1);
  };

  auto first =
      start_mock("first", said(shell("echo one > one.txt", "call_a"), "First one.") + "," +
                              said(shell("echo two > two.txt", "call_b"), "Now two.") + "," +
                              shell("echo three > three.txt", "call_c") + ",{\"text\":\"done\"}");
  CommandResult run =
      shadowbox({"run", "--run-id", "r1", "--", "codex", "exec", "--skip-git-repo-check",
                 "--dangerously-bypass-approvals-and-sandbox", "--json", "do three things"});
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  ASSERT_TRUE(fs::exists(ws_ / "three.txt"));
  std::string thread = thread_id(run.out);
  first.reset();

  auto second = start_mock("second", "{\"text\":\"again\"}");
  CommandResult rewound = shadowbox(
      {"rewind", "r1", "--to", "pre:call_b", "--run-id", "fork", "--", "try it another way"});
  ASSERT_EQ(rewound.exit_code, 0) << rewound.out << rewound.err;
  // A new thread, forked from the run's.
  std::string fork_thread = thread_id(rewound.out);
  EXPECT_FALSE(fork_thread.empty()) << rewound.out;
  EXPECT_NE(fork_thread, thread);

  // The model's next request: the prompt, the first call and its output, what the model
  // said with it; nothing of the second call's reply or after; then the new prompt.
  std::vector<Object::Ptr> main = e2e::main_requests(second->requests());
  ASSERT_FALSE(main.empty());
  EXPECT_EQ(e2e::to_json(main[0]->getArray("function_call_ids")), "[\"call_a\"]");
  EXPECT_EQ(e2e::to_json(main[0]->getArray("function_call_output_ids")), "[\"call_a\"]");
  EXPECT_EQ(e2e::to_json(main[0]->getArray("assistant_texts")), "[\"First one.\"]");
  EXPECT_NE(e2e::to_json(main[0]->getArray("user_texts")).find("do three things"),
            std::string::npos);
  EXPECT_EQ(main[0]->getValue<std::string>("last_user_text"), "try it another way");

  // The workspace is the checkpoint's, and so is the fork's session.
  CommandResult diff = shadowbox({"diff", "pre:call_b"});
  EXPECT_EQ(diff.exit_code, 0) << diff.err;
  EXPECT_EQ(diff.out, "") << "the workspace differs from pre:call_b";
  EXPECT_TRUE(fs::exists(ws_ / "one.txt"));
  EXPECT_FALSE(fs::exists(ws_ / "two.txt"));
  std::string restored =
      e2e::checkpoint_with(shadowbox({"log", "--run", "fork", "--checkpoints"}).out,
                           "rewound from run r1 at pre:call_b");
  ASSERT_FALSE(restored.empty()) << "no checkpoint of the fork says where it was rewound from";
  CommandResult session = shadowbox({"diff", "--session", "pre:call_b", restored});
  EXPECT_EQ(session.exit_code, 0) << session.err;
  EXPECT_EQ(session.out, "") << "the fork's session differs from the checkpoint's";
}

}  // namespace
