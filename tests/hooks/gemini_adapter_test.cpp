// The Gemini CLI adapter's parts: failures read from AfterTool's text, call ids made up
// for BeforeTool and AfterTool paired with its call even when calls overlap, the user's
// settings with shadowbox's hooks merged in, the answers, and the resume command.
// (tests/e2e/gemini_run_test.cpp runs the real CLI under shadowbox.)
#include <set>

#include <Poco/JSON/Object.h>
#include <Poco/JSON/Parser.h>

#include <gtest/gtest.h>
#include <boost/filesystem/operations.hpp>

#include "hooks/agent_hook.hpp"
#include "hooks/agent_session_state.hpp"
#include "hooks/gemini_adapter.hpp"
#include "hooks/gemini_answers.hpp"
#include "hooks/run_slice_types.hpp"
#include "runs/ledger_run.hpp"
#include "runs/run_meta.hpp"
#include "sandbox/ledger.hpp"
#include "test_support.hpp"

namespace {

namespace fs = boost::filesystem;
using hooks::AgentKind;
using Poco::JSON::Object;

const hooks::AgentAdapter& gemini() {
  return hooks::adapter_for(AgentKind::kGemini);
}

Object::Ptr parse(const std::string& text) {
  Poco::JSON::Parser parser;
  return parser.parse(text).extract<Object::Ptr>();
}

// A shell command's llmContent as Gemini CLI 0.61.0 writes it.
std::string shell_result(const std::string& lines) {
  return "{\"llmContent\":\"<untrusted_context>\\nOutput: " + lines +
         "\\nProcess Group PGID: 27434\\n</untrusted_context>\",\"returnDisplay\":\"out\"}";
}

TEST(GeminiAdapter, AShellCommandFailsByItsExitCodeOrSignalInTheText) {
  EXPECT_EQ(hooks::gemini_call_failure("run_shell_command", shell_result("wrote")), std::nullopt);
  EXPECT_EQ(hooks::gemini_call_failure("run_shell_command", shell_result("failing\\nExit Code: 3")),
            "exit code 3: out");
  EXPECT_EQ(hooks::gemini_call_failure("run_shell_command", shell_result("(empty)\\nSignal: 9")),
            "killed by signal 9: out");
  // What the command printed is not its end.
  EXPECT_EQ(
      hooks::gemini_call_failure("run_shell_command", shell_result("Exit Code: 5\\nall is well")),
      std::nullopt);
  // Another tool's text says nothing of exit codes; its own error does.
  EXPECT_EQ(hooks::gemini_call_failure("read_file", shell_result("x\\nExit Code: 3")),
            std::nullopt);
  EXPECT_EQ(
      hooks::gemini_call_failure(
          "read_file",
          R"({"llmContent":"Could not read file","returnDisplay":"File not found.","error":{"message":"File not found: /w/x.txt","type":"file_not_found"}})"),
      "File not found: /w/x.txt");
}

std::string event(const std::string& name, const std::string& more) {
  return "{\"hook_event_name\":\"" + name +
         "\",\"session_id\":\"18c99f68-47ef-4741-abbc-588127da7d9b\",\"transcript_path\":\"/t\","
         "\"cwd\":\"/w\"" +
         more + "}";
}

std::string shell_call(const std::string& command, const std::string& response = "") {
  return ",\"tool_name\":\"run_shell_command\",\"tool_input\":{\"command\":\"" + command + "\"}" +
         (response.empty() ? "" : ",\"tool_response\":" + response);
}

TEST(GeminiAdapter, EventsAreTranslatedAndEachCallGetsAnIdOfItsOwn) {
  std::set<std::string> ids;
  for (int i = 0; i < 3; ++i) {
    hooks::AgentEvent before = gemini().parse_event(event("BeforeTool", shell_call("ls")));
    EXPECT_EQ(before.name, "PreToolUse");
    EXPECT_EQ(before.native_name, "BeforeTool");
    EXPECT_TRUE(before.unidentified_calls);
    EXPECT_EQ(before.tool_use_id.rfind("sbx_", 0), 0u) << before.tool_use_id;
    ids.insert(before.tool_use_id);
  }
  EXPECT_EQ(ids.size(), 3u);
  hooks::AgentEvent after =
      gemini().parse_event(event("AfterTool", shell_call("ls", shell_result("x\\nExit Code: 2"))));
  EXPECT_EQ(after.name, "PostToolUseFailure");
  EXPECT_EQ(after.tool_use_id, "") << "paired with its call when it is recorded";
  EXPECT_EQ(after.error.toString(), "exit code 2: out");
  EXPECT_EQ(gemini().parse_event(event("SessionStart", ",\"source\":\"startup\"")).name,
            "SessionStart");
  EXPECT_THROW(gemini().parse_event(event("BeforeTool", "")), sandbox::Error);
}

class GeminiPairing : public ::testing::Test {
 protected:
  GeminiPairing() {
    fs::create_directories(ws_);
    hooks::register_agent_run_slice_types();
    runs::LedgerRunOptions options;
    options.run = "r";
    run_ =
        std::make_unique<runs::LedgerRun>(fsnap::Store::open(temp_ / "store", ws_, true), options);
  }
  hooks::HookAnswer send(const std::string& json) {
    return hooks::handle_hook_event(gemini(), json, *run_, {});
  }
  // The outcome recorded for the call whose command is command.
  std::optional<bool> outcome_of(const std::string& command) {
    std::optional<bool> found;
    for (const sandbox::LedgerRecord& record : run_->ledger().records("r")) {
      if (record.phase == fsnap::Phase::kPreTool &&
          record.input_summary.find(command) != std::string::npos) {
        found = record.success;
      }
    }
    return found;
  }

  testing_support::TempDir temp_;
  fs::path ws_ = temp_ / "ws";
  std::unique_ptr<runs::LedgerRun> run_;
};

TEST_F(GeminiPairing, OverlappingCallsArePairedByToolAndInput) {
  ASSERT_EQ(send(event("BeforeTool", shell_call("make a"))).exit_code, 0);
  ASSERT_EQ(send(event("BeforeTool", shell_call("make b"))).exit_code, 0);
  EXPECT_EQ(run_->log().open_calls().size(), 2u);
  // b ends first, and fails; a succeeds.
  hooks::HookAnswer b =
      send(event("AfterTool", shell_call("make b", shell_result("no\\nExit Code: 1"))));
  ASSERT_EQ(b.exit_code, 0) << b.stderr_text;
  // It changed no file: its failure is recorded, and there is nothing to tell.
  EXPECT_EQ(b.stdout_json.find("rolled back"), std::string::npos) << b.stdout_json;
  ASSERT_EQ(send(event("AfterTool", shell_call("make a", shell_result("ok")))).exit_code, 0);
  EXPECT_TRUE(run_->log().open_calls().empty());
  EXPECT_EQ(outcome_of("make a"), true);
  EXPECT_EQ(outcome_of("make b"), false);
}

TEST_F(GeminiPairing, AnAfterToolWithoutAnOpenCallIsRecordedAsItsOwnCallAndAGap) {
  // Its BeforeTool was lost (the hook killed): the call ran, and is recorded as it ends.
  hooks::HookAnswer answer = send(event("AfterTool", shell_call("make c", shell_result("ok"))));
  EXPECT_EQ(answer.exit_code, 0) << answer.stderr_text;
  std::vector<fsnap::Checkpoint> log = run_->repo()->log("r", 1);
  ASSERT_EQ(log.size(), 1u);
  EXPECT_EQ(log[0].meta.phase, fsnap::Phase::kPostTool);
  EXPECT_EQ(log[0].meta.tool_name, "run_shell_command");
  EXPECT_EQ(log[0].meta.tool_call_id.rfind("sbx_unpaired_", 0), 0u) << log[0].meta.tool_call_id;
  std::optional<sandbox::LedgerRecord> record = run_->ledger().read(log[0]);
  ASSERT_TRUE(record.has_value());
  EXPECT_TRUE(record->success.value_or(false));
  EXPECT_NE(record->input_summary.find("make c"), std::string::npos) << record->input_summary;
  EXPECT_EQ(runs::count_gaps(run_->store(), "r"), 1u);
}

TEST(GeminiAdapter, AnswersAreInGeminisProtocol) {
  hooks::AgentEvent before;
  before.name = "PreToolUse";
  before.native_name = "BeforeTool";
  hooks::HookVerdict deny;
  deny.deny = "max_steps reached";
  Object::Ptr out = parse(gemini().answer(before, deny).stdout_json);
  EXPECT_EQ(out->getValue<std::string>("decision"), "deny");
  EXPECT_EQ(out->getValue<std::string>("reason"), "max_steps reached");
  EXPECT_FALSE(out->has("continue"));
  deny.stop = "shadowbox stopped the run";
  out = parse(gemini().answer(before, deny).stdout_json);
  EXPECT_EQ(out->getValue<bool>("continue"), false);
  EXPECT_EQ(out->getValue<std::string>("stopReason"), "shadowbox stopped the run");
  EXPECT_EQ(gemini().answer(before, hooks::HookVerdict{}).stdout_json, "");
  // After a failed call: the model's context and, for the person, Gemini's systemMessage.
  hooks::AgentEvent after;
  after.name = "PostToolUseFailure";
  after.native_name = "AfterTool";
  hooks::HookVerdict told;
  told.context = "shadowbox rolled back";
  told.notice = "files were put back";
  out = parse(gemini().answer(after, told).stdout_json);
  EXPECT_EQ(out->getValue<std::string>("systemMessage"), "files were put back");
  EXPECT_EQ(out->getObject("hookSpecificOutput")->getValue<std::string>("additionalContext"),
            "shadowbox rolled back");
}

TEST(GeminiAdapter, TheUsersSettingsAreKeptAndShadowboxsHooksAddedToTheirs) {
  std::string user =
      R"({"model":{"name":"gemini-2.5-pro"},"security":{"auth":{"selectedType":"oauth-personal"}},)"
      R"("hooks":{"BeforeTool":[{"matcher":"shell","hooks":[{"name":"mine","type":"command","command":"audit"}]}]}})";
  std::string run = hooks::gemini_run_settings(user);
  Object::Ptr settings = parse(hooks::with_shadowbox_hooks(run, "sb hook gemini", "/runs/h"));
  EXPECT_EQ(settings->getObject("model")->getValue<std::string>("name"), "gemini-2.5-pro");
  EXPECT_EQ(
      settings->getObject("security")->getObject("auth")->getValue<std::string>("selectedType"),
      "oauth-personal");
  EXPECT_EQ(
      settings->getObject("general")->getObject("sessionRetention")->getValue<bool>("enabled"),
      false);
  Poco::JSON::Array::Ptr before = settings->getObject("hooks")->getArray("BeforeTool");
  ASSERT_EQ(before->size(), 2u);
  EXPECT_EQ(before->getObject(0)->getArray("hooks")->getObject(0)->getValue<std::string>("name"),
            "mine");
  Object::Ptr ours = before->getObject(1)->getArray("hooks")->getObject(0);
  EXPECT_EQ(ours->getValue<std::string>("command"), "sb hook gemini");
  EXPECT_EQ(ours->getValue<int>("timeout"), hooks::kGeminiHookTimeoutMs);
  EXPECT_EQ(ours->getObject("env")->getValue<std::string>("SHADOWBOX_RUN_HOME"), "/runs/h");
  for (const char* e : {"AfterTool", "SessionStart", "SessionEnd"}) {
    EXPECT_EQ(settings->getObject("hooks")->getArray(e)->size(), 1u) << e;
  }
  // Taken out again, only the user's remain.
  Object::Ptr without = parse(hooks::without_shadowbox_hooks(
      hooks::with_shadowbox_hooks(run, "sb hook gemini", "/runs/h")));
  EXPECT_EQ(without->getObject("hooks")->getArray("BeforeTool")->size(), 1u);
  // No settings of the user's: the API key is the authentication.
  EXPECT_EQ(parse(hooks::gemini_run_settings(""))
                ->getObject("security")
                ->getObject("auth")
                ->getValue<std::string>("selectedType"),
            "gemini-api-key");
  EXPECT_THROW(hooks::gemini_run_settings("[1]"), sandbox::Error);
}

TEST(GeminiAdapter, TheRunsHomeCarriesTheSettingsButNeverTheLogin) {
  testing_support::TempDir temp;
  fs::path user = temp / "user-gemini";
  testing_support::write_file(user / "settings.json",
                              R"({"security":{"auth":{"selectedType":"oauth-personal"}}})");
  testing_support::write_file(user / "oauth_creds.json", R"({"access_token":"ya29.secret"})");
  testing_support::write_file(user / "trustedFolders.json", R"({"/w":"TRUST_FOLDER"})");
  fs::path home = temp / "run-home";
  fs::create_directories(home);
  hooks::HomeRequest request;
  request.home = home;
  request.workspace = temp / "ws";
  request.user.gemini_dir = user;
  std::vector<std::string> warnings;
  request.warn = [&](const std::string& w) { warnings.push_back(w); };
  ::unsetenv("GEMINI_API_KEY");
  ::unsetenv("GOOGLE_API_KEY");
  std::unique_ptr<hooks::PreparedHome> prepared = gemini().prepare_home(request);
  gemini().install_hooks(home, {"sb hook gemini", ""});
  EXPECT_FALSE(fs::exists(home / ".gemini/oauth_creds.json"));
  EXPECT_EQ(testing_support::read_file(home / ".gemini/trustedFolders.json"),
            R"({"/w":"TRUST_FOLDER"})");
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("signs in with oauth-personal"), std::string::npos) << warnings[0];
  EXPECT_EQ(gemini().environment(home),
            (std::vector<std::string>{"GEMINI_CLI_HOME=" + fs::absolute(home).string(),
                                      "GEMINI_CLI_NO_RELAUNCH=true"}));
  prepared->finish();
  EXPECT_FALSE(fs::exists(home / ".gemini/settings.json"));
  EXPECT_FALSE(fs::exists(home / ".gemini/trustedFolders.json"));
  EXPECT_EQ(testing_support::read_file(user / "settings.json"),
            R"({"security":{"auth":{"selectedType":"oauth-personal"}}})")
      << "the user's file is never changed";
}

TEST(GeminiAdapter, TheFoldersTrustAnsweredInARunIsNotAskedAgainInTheNext) {
  testing_support::TempDir temp;
  fs::path user = temp / "user-gemini";
  testing_support::write_file(user / "trustedFolders.json", R"({"/elsewhere":"TRUST_FOLDER"})");
  fs::create_directories(temp / "ws");
  std::string ws = (temp / "ws").string();
  fs::path answers = temp / "store/agent-answers/gemini";
  auto request_for = [&](const fs::path& home) {
    fs::create_directories(home);
    hooks::HomeRequest request;
    request.home = home;
    request.workspace = ws;
    request.user.gemini_dir = user;
    request.answers = answers;
    return request;
  };
  {
    std::unique_ptr<hooks::PreparedHome> first = gemini().prepare_home(request_for(temp / "h1"));
    // The person answers "Trust folder": Gemini rewrites the run's trustedFolders.json.
    testing_support::write_file(temp / "h1/.gemini/trustedFolders.json",
                                "{\"/elsewhere\":\"TRUST_FOLDER\",\"" + ws +
                                    "\":\"TRUST_FOLDER\",\"/other\":\"TRUST_FOLDER\"}");
    first->finish();
  }
  std::string kept = testing_support::read_file(answers);
  EXPECT_NE(kept.find("\"" + ws + "\": \"TRUST_FOLDER\""), std::string::npos) << kept;
  EXPECT_EQ(kept.find("/other"), std::string::npos) << "only this workspace's and those above";
  EXPECT_EQ(kept.find("/elsewhere"), std::string::npos) << "the user's own stay theirs";
  std::unique_ptr<hooks::PreparedHome> second = gemini().prepare_home(request_for(temp / "h2"));
  std::string trusted = testing_support::read_file(temp / "h2/.gemini/trustedFolders.json");
  EXPECT_NE(trusted.find("\"" + ws + "\": \"TRUST_FOLDER\""), std::string::npos) << trusted;
  EXPECT_NE(trusted.find("/elsewhere"), std::string::npos) << trusted;
  EXPECT_EQ(testing_support::read_file(user / "trustedFolders.json"),
            R"({"/elsewhere":"TRUST_FOLDER"})")
      << "the user's file is never changed";
  second->finish();
  // The user's own word on the folder wins.
  testing_support::write_file(user / "trustedFolders.json", "{\"" + ws + "\":\"DO_NOT_TRUST\"}");
  std::unique_ptr<hooks::PreparedHome> third = gemini().prepare_home(request_for(temp / "h3"));
  EXPECT_EQ(testing_support::read_file(temp / "h3/.gemini/trustedFolders.json"),
            "{\"" + ws + "\":\"DO_NOT_TRUST\"}");
}

TEST(GeminiAnswersTest, OnlyTheWorkspaceAndTheFoldersAboveItWithGeminisLevels) {
  std::string run = R"({"/a/b/ws":"TRUST_FOLDER","/a/b":"TRUST_PARENT","/a/bws":"TRUST_FOLDER",)"
                    R"("/a/b/ws/sub":"TRUST_FOLDER","rel":"TRUST_FOLDER","/a":"ANYTHING"})";
  std::string kept = hooks::gemini_answers(run, "", "/a/b/ws");
  EXPECT_NE(kept.find("\"/a/b/ws\""), std::string::npos) << kept;
  EXPECT_NE(kept.find("\"/a/b\""), std::string::npos) << kept;
  for (const char* not_kept : {"/a/bws", "/a/b/ws/sub", "rel", "ANYTHING"}) {
    EXPECT_EQ(kept.find(not_kept), std::string::npos) << not_kept << " in " << kept;
  }
  EXPECT_EQ(hooks::gemini_answers("not json", "", "/a/b/ws"), "");
  EXPECT_EQ(hooks::with_gemini_answers("not json", kept, "/a/b/ws"), "not json")
      << "a user's file Gemini cannot read is left for Gemini to say so";
  EXPECT_EQ(hooks::with_gemini_answers("", "", "/a/b/ws"), "");
}

TEST(GeminiAdapter, ResumeGivesTheSessionAndKeepsTheRunsOptions) {
  using V = std::vector<std::string>;
  V command = {"gemini", "-y", "-m", "gemini-2.5-flash", "-p", "first", "-o", "stream-json"};
  EXPECT_EQ(hooks::gemini_resume_argv(command, "S", {"-p", "second"}, false),
            (V{"gemini", "-y", "-m", "gemini-2.5-flash", "-o", "stream-json", "--resume", "S", "-p",
               "second"}));
  EXPECT_EQ(hooks::gemini_resume_argv(command, "S", {}, false),
            (V{"gemini", "-y", "-m", "gemini-2.5-flash", "-o", "stream-json", "-p", "first",
               "--resume", "S"}));
  EXPECT_EQ(hooks::gemini_resume_argv({"gemini", "--resume", "old", "fix it"}, "S", {}, false),
            (V{"gemini", "fix it", "--resume", "S"}));
  EXPECT_EQ(hooks::gemini_resume_argv(command, "S", {"-p", "x"}, true),
            (V{"gemini", "--resume", "S", "-p", "x"}));
}

TEST(GeminiAdapter, ItsSessionDataIsTheChatFileAndTheProjectRegistry) {
  std::string id = "18c99f68-47ef-4741-abbc-588127da7d9b";
  EXPECT_TRUE(
      gemini().is_session_path(".gemini/tmp/ws/chats/session-2026-11-25T10-16-18c99f68.jsonl", id));
  EXPECT_FALSE(
      gemini().is_session_path(".gemini/tmp/ws/chats/session-2026-11-25T10-16-aaaaaaaa.jsonl", id));
  EXPECT_FALSE(gemini().is_session_path(".gemini/tmp/ws/logs/x-18c99f68.jsonl", id));
  EXPECT_EQ(gemini().preserved_parts(),
            (std::vector<std::string>{".gemini/tmp", ".gemini/projects.json"}));
}

}  // namespace
