// The pinned Gemini CLI (0.61.0) against the scripted mock of the Gemini API
// (fixtures/mock-gemini), with command hooks that record what they are given: the facts
// shadowbox's Gemini adapter stands on, checked against the real CLI. BeforeTool and
// AfterTool fire around every shell command with the session id and no tool-call id; a
// failed command's exit status is only in AfterTool's text; a deny answer blocks the
// call and the model reads the reason; `--resume` sends the earlier history — and of a
// session cut before a call, only the turns before it.
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

constexpr const char* kModel = "gemini-2.5-flash";  // named: no routing call first

class GeminiCliTest : public ::testing::Test {
 protected:
  GeminiCliTest() {
    fs::create_directories(ws_);
    auto hook = [&](const std::string& event) {
      return "[{\"matcher\":\".*\",\"hooks\":[{\"name\":\"record\",\"type\":\"command\","
             "\"command\":\"" +
             hooks_.command(event) + "\",\"timeout\":30000}]}]";
    };
    // The API-key auth type, and session retention off (on, a later run deletes a
    // resumed session's files in this version).
    write_file(home_ / ".gemini" / "settings.json",
               "{\"security\":{\"auth\":{\"selectedType\":\"gemini-api-key\"}},"
               "\"general\":{\"sessionRetention\":{\"enabled\":false}},"
               "\"hooks\":{\"BeforeTool\":" +
                   hook("BeforeTool") + ",\"AfterTool\":" + hook("AfterTool") + "}}");
  }

  // Runs gemini with args against a mock playing steps; the mock's requests in requests_.
  CommandResult gemini(const std::string& steps, std::vector<std::string> args) {
    write_file(temp_ / "scenario.json", "{\"steps\":[" + steps + "]}");
    fs::remove(temp_ / "mock.log");
    e2e::MockServer server(temp_ / "scenario.json", temp_ / "mock.log", e2e::MockApi::kGemini);
    std::vector<std::string> argv = {e2e::gemini_binary()};
    argv.insert(argv.end(), args.begin(), args.end());
    for (const char* a : {"-y", "-o", "stream-json", "-m", kModel}) argv.push_back(a);
    CommandResult r = testing_support::run_command(
        argv, ws_,
        {"HOME=" + home_.string(), "GEMINI_API_KEY=test-key",
         "GOOGLE_API_KEY=", "GOOGLE_GEMINI_BASE_URL=" + server.base_url(),
         "GEMINI_CLI_TRUST_WORKSPACE=true", "GEMINI_CLI_NO_RELAUNCH=true"},
        "", std::chrono::seconds(120));
    requests_ = server.requests();
    return r;
  }

  // The session id in the CLI's stream-json output (its "init" line).
  static std::string session_id(const std::string& out) {
    Poco::JSON::Parser parser;
    Object::Ptr init = parser.parse(out.substr(0, out.find('\n'))).extract<Object::Ptr>();
    return init->optValue<std::string>("session_id", "");
  }

  static std::string shell(const std::string& command) {
    return "{\"tool\":\"run_shell_command\",\"input\":{\"command\":\"" + command +
           "\",\"description\":\"step\"}}";
  }

  testing_support::TempDir temp_{"shadowbox-gemini"};
  fs::path ws_ = temp_ / "ws";
  fs::path home_ = temp_ / "home";
  e2e::HookRecorder hooks_{temp_ / "hooks"};
  std::vector<Object::Ptr> requests_;
};

TEST_F(GeminiCliTest, HooksSeeEveryShellCommandWithTheSessionAndNoCallId) {
  ASSERT_TRUE(fs::exists(e2e::gemini_binary())) << "run scripts/setup.sh";
  CommandResult r = gemini(shell("echo hello > created.txt && echo wrote") + "," +
                               shell("echo failing >&2; exit 3") + ",{\"text\":\"done\"}",
                           {"-p", "do the thing"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_TRUE(fs::exists(ws_ / "created.txt"));
  std::string session = session_id(r.out);
  ASSERT_FALSE(session.empty()) << r.out;
  auto seen = hooks_.events();
  ASSERT_EQ(hooks_.names(),
            (std::vector<std::string>{"BeforeTool", "AfterTool", "BeforeTool", "AfterTool"}));
  for (const auto& [name, input] : seen) {
    EXPECT_EQ(input->getValue<std::string>("hook_event_name"), name);
    EXPECT_EQ(input->getValue<std::string>("tool_name"), "run_shell_command");
    EXPECT_EQ(input->getValue<std::string>("session_id"), session);
    EXPECT_EQ(fs::path(input->getValue<std::string>("cwd")).filename(), "ws");
    EXPECT_FALSE(input->has("tool_use_id")) << "shadowbox pairs the events itself";
    EXPECT_FALSE(input->getObject("tool_input").isNull());
  }
  EXPECT_EQ(seen[0].second->getObject("tool_input")->getValue<std::string>("command"),
            "echo hello > created.txt && echo wrote");
  // A failed command is not an error to the CLI: the exit status is in the text.
  std::string failed =
      seen[3].second->getObject("tool_response")->getValue<std::string>("llmContent");
  EXPECT_NE(failed.find("Exit Code: 3"), std::string::npos) << failed;
  EXPECT_EQ(seen[1]
                .second->getObject("tool_response")
                ->getValue<std::string>("llmContent")
                .find("Exit Code"),
            std::string::npos);
}

TEST_F(GeminiCliTest, ADenyAnswerBlocksTheCallAndTheModelReadsTheReason) {
  ASSERT_TRUE(fs::exists(e2e::gemini_binary())) << "run scripts/setup.sh";
  hooks_.answer("BeforeTool", "{\"decision\":\"deny\",\"reason\":\"limit reached\"}");
  CommandResult r =
      gemini(shell("echo hello > created.txt") + ",{\"text\":\"done\"}", {"-p", "go"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_FALSE(fs::exists(ws_ / "created.txt")) << "the call ran";
  std::vector<Object::Ptr> main = e2e::main_requests(requests_);
  ASSERT_EQ(main.size(), 2u);
  Poco::JSON::Array::Ptr responses = main[1]->getArray("function_responses");
  ASSERT_EQ(responses->size(), 1u);
  std::string said = e2e::to_json(responses->get(0));
  EXPECT_NE(said.find("limit reached"), std::string::npos) << said;
  for (const auto& [name, input] : hooks_.events()) EXPECT_NE(name, "AfterTool");
}

TEST_F(GeminiCliTest, ResumeSendsTheEarlierHistory) {
  ASSERT_TRUE(fs::exists(e2e::gemini_binary())) << "run scripts/setup.sh";
  CommandResult first =
      gemini(shell("echo one > one.txt") + ",{\"text\":\"done\"}", {"-p", "first prompt"});
  ASSERT_EQ(first.exit_code, 0) << first.out << first.err;
  std::string session = session_id(first.out);
  ASSERT_FALSE(session.empty());
  // Sessions are kept under the HOME, by project.
  EXPECT_TRUE(fs::exists(home_ / ".gemini" / "projects.json"));
  CommandResult second = gemini("{\"text\":\"again\"}", {"--resume", session, "-p", "second"});
  ASSERT_EQ(second.exit_code, 0) << second.out << second.err;
  EXPECT_EQ(session_id(second.out), session);
  std::vector<Object::Ptr> main = e2e::main_requests(requests_);
  ASSERT_FALSE(main.empty());
  std::string history = e2e::to_json(main[0]->getArray("user_texts"));
  EXPECT_NE(history.find("first prompt"), std::string::npos) << history;
  EXPECT_EQ(main[0]->getArray("function_call_names")->size(), 1u);
}

TEST_F(GeminiCliTest, AResumedSessionCutBeforeTheSecondCallSendsTheFirstCallOnly) {
  ASSERT_TRUE(fs::exists(e2e::gemini_binary())) << "run scripts/setup.sh";
  // The chats copied at every BeforeTool, as shadowbox preserves the HOME.
  e2e::SessionSnapshots snapshots(temp_ / "snapshots",
                                  {{home_ / ".gemini" / "tmp", ".gemini/tmp"},
                                   {home_ / ".gemini" / "projects.json", ".gemini/projects.json"}});
  std::string settings =
      "{\"security\":{\"auth\":{\"selectedType\":\"gemini-api-key\"}},"
      "\"general\":{\"sessionRetention\":{\"enabled\":false}}";
  write_file(home_ / ".gemini" / "settings.json",
             settings +
                 ",\"hooks\":{\"BeforeTool\":[{\"matcher\":\".*\",\"hooks\":[{\"name\":"
                 "\"snapshot\",\"type\":\"command\",\"command\":\"" +
                 snapshots.command() + "\",\"timeout\":30000}]}]}}");
  // Each call's turn says something first: what the resumed model must (not) read.
  auto said = [](const std::string& step, const std::string& text) {
    return "{\"say\":\"" + text + "\"," + step.substr(1);
  };
  CommandResult first = gemini(said(shell("echo one > one.txt"), "First one.") + "," +
                                   said(shell("echo two > two.txt"), "Now two.") + "," +
                                   shell("echo three > three.txt") + ",{\"text\":\"done\"}",
                               {"-p", "do three things"});
  ASSERT_EQ(first.exit_code, 0) << first.out << first.err;
  std::string session = session_id(first.out);
  fs::path at_two = snapshots.home_where("echo two");
  ASSERT_FALSE(at_two.empty());

  // A fresh HOME holding the chats as at pre:<echo two>, cut there; its settings without
  // hooks.
  fs::path rewound = temp_ / "rewound";
  ASSERT_EQ(testing_support::run_command({"cp", "-R", at_two.string(), rewound.string()}).exit_code,
            0);
  write_file(rewound / ".gemini" / "settings.json", settings + "}");
  hooks::SessionCut cut = hooks::adapter_for(hooks::AgentKind::kGemini)
                              .cut_session(rewound, {session, "sbx_1", "run_shell_command", ""});
  ASSERT_NE(cut.session_id, session);

  home_ = rewound;
  CommandResult second =
      gemini("{\"text\":\"again\"}", {"--resume", cut.session_id, "-p", "try it another way"});
  ASSERT_EQ(second.exit_code, 0) << second.out << second.err;
  EXPECT_EQ(session_id(second.out), cut.session_id);
  std::vector<Object::Ptr> main = e2e::main_requests(requests_);
  ASSERT_FALSE(main.empty());
  // The first call and its response (Gemini's resume sends each response twice), the
  // prompts; nothing of the second call or after.
  Poco::JSON::Array::Ptr calls = main[0]->getArray("function_calls");
  ASSERT_EQ(calls->size(), 1u) << e2e::to_json(calls);
  EXPECT_EQ(calls->getObject(0)->getObject("args")->getValue<std::string>("command"),
            "echo one > one.txt");
  Poco::JSON::Array::Ptr responses = main[0]->getArray("function_responses");
  ASSERT_FALSE(responses->size() == 0);
  for (std::size_t i = 0; i < responses->size(); ++i) {
    EXPECT_EQ(responses->getObject(static_cast<unsigned>(i))->getValue<std::string>("id"),
              calls->getObject(0)->getValue<std::string>("id"));
  }
  std::string history = e2e::to_json(main[0]->getArray("user_texts"));
  EXPECT_NE(history.find("do three things"), std::string::npos) << history;
  EXPECT_EQ(history.find("echo two"), std::string::npos) << history;
  // What the model said: in the first call's turn, and nothing of the second's — the CLI
  // closes the history that ends with a call's response with a placeholder turn of its
  // own ("[The previous response was interrupted ...]") before the new prompt.
  std::string said_texts = e2e::to_json(main[0]->getArray("model_texts"));
  EXPECT_NE(said_texts.find("First one."), std::string::npos) << said_texts;
  EXPECT_EQ(said_texts.find("Now two."), std::string::npos) << said_texts;
  EXPECT_EQ(main[0]->getValue<std::string>("last_user_text"), "try it another way");
}

// The tool call ids of a run's pre_tool checkpoints, oldest first, from `log --json`.
std::vector<std::string> pre_tool_call_ids(const std::string& log_json) {
  Poco::JSON::Parser parser;
  Poco::JSON::Array::Ptr checkpoints = parser.parse(log_json).extract<Poco::JSON::Array::Ptr>();
  std::vector<std::string> calls;
  for (std::size_t i = checkpoints->size(); i-- > 0;) {
    Object::Ptr c = checkpoints->getObject(static_cast<unsigned>(i));
    if (c->getValue<std::string>("phase") == "pre_tool") {
      calls.push_back(c->getValue<std::string>("tool_call_id"));
    }
  }
  return calls;
}

// A rewound run's first request: the first call and what the model said with it, nothing
// of the second call's turn, the original prompt, then the new one.
void expect_history_up_to_the_first_call(const Object::Ptr& request) {
  Poco::JSON::Array::Ptr made = request->getArray("function_calls");
  ASSERT_EQ(made->size(), 1u) << e2e::to_json(made);
  EXPECT_EQ(made->getObject(0)->getObject("args")->getValue<std::string>("command"),
            "echo one > one.txt");
  std::string said_texts = e2e::to_json(request->getArray("model_texts"));
  EXPECT_NE(said_texts.find("First one."), std::string::npos) << said_texts;
  EXPECT_EQ(said_texts.find("Now two."), std::string::npos) << said_texts;
  EXPECT_NE(e2e::to_json(request->getArray("user_texts")).find("do three things"),
            std::string::npos);
  EXPECT_EQ(request->getValue<std::string>("last_user_text"), "try it another way");
}

// `shadowbox rewind` of a Gemini run: a three-call run under `shadowbox run`, rewound to
// the second call's pre_tool checkpoint, starts a new run whose model is sent the
// conversation up to the first call only, in the checkpoint's workspace and session.
TEST_F(GeminiCliTest, RewindsAThreeCallRunToTheSecondCall) {
  ASSERT_TRUE(fs::exists(e2e::gemini_binary())) << "run scripts/setup.sh";
  fs::path user_home = temp_ / "user-home";
  fs::path store = temp_ / "store";
  write_file(user_home / ".gemini" / "settings.json", "{\"ui\":{\"hideTips\":true}}\n");
  std::string tools = std::string(SHADOWBOX_SOURCE_DIR) + "/.tools/node_modules/.bin";
  const char* path = std::getenv("PATH");
  std::unique_ptr<e2e::MockServer> server;
  auto shadowbox = [&](std::vector<std::string> args) {
    std::vector<std::string> argv = {SHADOWBOX_BIN, "--workspace", ws_.string(), "--store",
                                     store.string()};
    argv.insert(argv.end(), args.begin(), args.end());
    return testing_support::run_command(
        argv, ws_,
        {"HOME=" + user_home.string(), "GEMINI_API_KEY=test-key",
         "GOOGLE_API_KEY=", "GOOGLE_GEMINI_BASE_URL=" + (server ? server->base_url() : ""),
         "GEMINI_CLI_TRUST_WORKSPACE=true", "SHADOWBOX_CONFIG=", "SHADOWBOX_NO_PROGRESS=1",
         "PATH=" + tools + ":" + (path ? path : "/usr/bin:/bin")},
        "", std::chrono::seconds(180));
  };
  auto start_mock = [&](const std::string& name, const std::string& steps) {
    server.reset();
    write_file(temp_ / (name + ".json"), "{\"steps\":[" + steps + "]}");
    server = std::make_unique<e2e::MockServer>(temp_ / (name + ".json"), temp_ / (name + ".log"),
                                               e2e::MockApi::kGemini);
  };
  auto said = [](const std::string& step, const std::string& text) {
    return "{\"say\":\"" + text + "\"," + step.substr(1);
  };

  start_mock("first", said(shell("echo one > one.txt"), "First one.") + "," +
                          said(shell("echo two > two.txt"), "Now two.") + "," +
                          shell("echo three > three.txt") + ",{\"text\":\"done\"}");
  CommandResult run = shadowbox({"run", "--run-id", "r1", "--", "gemini", "-y", "-o", "stream-json",
                                 "-m", kModel, "-p", "do three things"});
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  ASSERT_TRUE(fs::exists(ws_ / "three.txt"));
  std::string session = session_id(run.out);
  // Gemini's calls have the ids shadowbox gave them: the second call's, from the log.
  CommandResult log = shadowbox({"--json", "log", "--run", "r1"});
  ASSERT_EQ(log.exit_code, 0) << log.err;
  std::vector<std::string> calls = pre_tool_call_ids(log.out);
  ASSERT_EQ(calls.size(), 3u) << log.out;
  std::string second_call = "pre:" + calls[1];

  start_mock("second", "{\"text\":\"again\"}");
  CommandResult rewound = shadowbox(
      {"rewind", "r1", "--to", second_call, "--run-id", "fork", "--", "-p", "try it another way"});
  ASSERT_EQ(rewound.exit_code, 0) << rewound.out << rewound.err;
  // A new session, forked from the run's.
  EXPECT_NE(session_id(rewound.out), session);

  // The model's next request: the prompt, the first call and its response, what the model
  // said with it; nothing of the second call's turn or after (the CLI closes a history
  // that ends with a call's response with a placeholder turn); then the new prompt.
  std::vector<Object::Ptr> main = e2e::main_requests(server->requests());
  ASSERT_FALSE(main.empty());
  expect_history_up_to_the_first_call(main[0]);

  // The workspace is the checkpoint's, and so is the fork's session.
  CommandResult diff = shadowbox({"diff", second_call});
  EXPECT_EQ(diff.exit_code, 0) << diff.err;
  EXPECT_EQ(diff.out, "") << "the workspace differs from " << second_call;
  EXPECT_TRUE(fs::exists(ws_ / "one.txt"));
  EXPECT_FALSE(fs::exists(ws_ / "two.txt"));
  std::string restored =
      e2e::checkpoint_with(shadowbox({"log", "--run", "fork", "--checkpoints"}).out,
                           "rewound from run r1 at " + second_call);
  ASSERT_FALSE(restored.empty()) << "no checkpoint of the fork says where it was rewound from";
  CommandResult state = shadowbox({"diff", "--session", second_call, restored});
  EXPECT_EQ(state.exit_code, 0) << state.err;
  EXPECT_EQ(state.out, "") << "the fork's session differs from the checkpoint's";
}

}  // namespace
