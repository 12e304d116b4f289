// The Codex CLI adapter's parts: the trust Codex requires of a hook (its hash, checked
// against vectors computed outside shadowbox from the identity docs/agents/codex-cli.md
// describes), the hooks.json and trust tables, a failed command learned from the
// rollout (a command its sandbox stopped: only once the model's output is written, after
// its PostToolUse), the answers, and the resume command. (tests/e2e/codex_run_test.cpp runs the
// real CLI under shadowbox.)
#include <Poco/JSON/Object.h>
#include <Poco/JSON/Parser.h>

#include <fstream>

#include <gtest/gtest.h>
#include <boost/filesystem/operations.hpp>

#include "hooks/agent_adapter.hpp"
#include "hooks/codex_adapter.hpp"
#include "test_support.hpp"

namespace {

namespace fs = boost::filesystem;
using hooks::AgentKind;
using Poco::JSON::Object;

const hooks::AgentAdapter& codex() {
  return hooks::adapter_for(AgentKind::kCodex);
}

Object::Ptr parse(const std::string& text) {
  Poco::JSON::Parser parser;
  return parser.parse(text).extract<Object::Ptr>();
}

TEST(CodexAdapter, TheTrustedHashIsTheSha256OfTheHandlersIdentity) {
  // printf '%s' '{"event_name":"pre_tool_use","hooks":[{"async":false,"command":"sb hook
  // codex","timeout":600,"type":"command"}],"matcher":"*"}' | sha256sum
  EXPECT_EQ(hooks::codex_trusted_hash("pre_tool_use", "*", "sb hook codex", 600),
            "sha256:4056825c74496b4a0d6e760378f5c5b199ebce50f7038a8f5d2e125468286d3c");
  // No matcher; a quote, a non-ASCII letter and a tab, escaped as serde_json does.
  EXPECT_EQ(hooks::codex_trusted_hash("session_end", "", "say \"\xC3\xBC\"\tx", 3),
            "sha256:d802cfa4aace2eadf5661623c47d11baf4471b4cac150f15cc06984958da82bd");
}

TEST(CodexAdapter, EveryInstalledHandlerIsTrustedUnderItsOwnKey) {
  std::string command = "'/opt/sb' --store '/s' hook codex --run 'r'";
  Object::Ptr hooks = parse(hooks::codex_hooks_json(command))->getObject("hooks");
  std::string trust = hooks::codex_hook_trust_toml("/h/.codex/hooks.json", command);
  for (const char* event : {"PreToolUse", "PostToolUse", "SessionStart", "Stop", "SessionEnd"}) {
    Poco::JSON::Array::Ptr groups = hooks->getArray(event);
    ASSERT_TRUE(groups) << event;
    Object::Ptr handler = groups->getObject(0)->getArray("hooks")->getObject(0);
    EXPECT_EQ(handler->getValue<std::string>("command"), command);
  }
  EXPECT_EQ(hooks->getArray("SessionEnd")
                ->getObject(0)
                ->getArray("hooks")
                ->getObject(0)
                ->getValue<int>("timeout"),
            hooks::kCodexSessionEndTimeout)
      << "Codex clamps it to 3 s; the hash is of the effective timeout";
  EXPECT_NE(
      trust.find("[hooks.state.\"/h/.codex/hooks.json:pre_tool_use:0:0\"]\ntrusted_hash = \"" +
                 hooks::codex_trusted_hash("pre_tool_use", "*", command, 600) + "\"\n"),
      std::string::npos)
      << trust;
  EXPECT_NE(trust.find("[hooks.state.\"/h/.codex/hooks.json:session_end:0:0\"]\ntrusted_hash = \"" +
                       hooks::codex_trusted_hash("session_end", "", command, 3) + "\"\n"),
            std::string::npos)
      << trust;
}

// A rollout with one command that succeeded (call_ok) and one that failed (call_bad), in
// the lines Codex 0.169.0 writes as a command completes.
void write_rollout(const fs::path& file) {
  testing_support::write_file(
      file,
      R"({"timestamp":"t","type":"session_meta","payload":{"id":"thread"}})"
      "\n"
      R"({"timestamp":"t","type":"event_msg","payload":{"type":"item_completed","item":{"type":"CommandExecution","id":"call_ok","status":"completed","exit_code":0,"aggregated_output":"fine\n"}}})"
      "\n"
      R"({"timestamp":"t","type":"event_msg","payload":{"type":"item_completed","item":{"type":"CommandExecution","id":"call_bad","status":"failed","exit_code":3,"aggregated_output":"failing\n"}}})"
      "\n");
}

TEST(CodexAdapter, AFailedCommandIsLearnedFromTheRollout) {
  testing_support::TempDir temp;
  fs::path rollout = temp / "rollout.jsonl";
  write_rollout(rollout);
  EXPECT_EQ(hooks::codex_call_failure(rollout, "call_ok"), std::nullopt);
  EXPECT_EQ(hooks::codex_call_failure(rollout, "call_bad"), "exit code 3: failing\n");
  EXPECT_EQ(hooks::codex_call_failure(rollout, "call_unknown"), std::nullopt);
  EXPECT_EQ(hooks::codex_call_failure(temp / "missing.jsonl", "call_bad"), std::nullopt);

  auto post = [&](const std::string& id) {
    return "{\"hook_event_name\":\"PostToolUse\",\"session_id\":\"thread\",\"transcript_path\":\"" +
           rollout.string() + "\",\"cwd\":\"/w\",\"tool_name\":\"Bash\",\"tool_use_id\":\"" + id +
           "\",\"tool_input\":{\"command\":\"x\"},\"tool_response\":\"failing\\n\"}";
  };
  hooks::AgentEvent failed = codex().parse_event(post("call_bad"));
  EXPECT_EQ(failed.name, "PostToolUseFailure");
  EXPECT_EQ(failed.native_name, "PostToolUse");
  EXPECT_EQ(failed.error.toString(), "exit code 3: failing\n");
  EXPECT_EQ(codex().parse_event(post("call_ok")).name, "PostToolUse");
}

TEST(CodexAdapter, ACommandTheSandboxStoppedEndsWhenItsOutputIsWritten) {
  // `codex exec` (read-only sandbox): a command the sandbox stopped has no completion
  // line; what the model is given is written only after its PostToolUse is answered.
  testing_support::TempDir temp;
  fs::path rollout = temp / "rollout.jsonl";
  std::string start =
      R"({"timestamp":"t","type":"response_item","payload":{"type":"function_call","name":"exec_command","arguments":"{\"cmd\":\"touch x\"}","call_id":"call_ro"}})"
      "\n";
  testing_support::write_file(rollout, start);
  std::string post =
      R"({"hook_event_name":"PostToolUse","session_id":"thread","transcript_path":")" +
      rollout.string() +
      R"(","cwd":"/w","tool_name":"Bash","tool_use_id":"call_ro","tool_input":{"command":"touch x"},"tool_response":"touch: Read-only file system\n"})";
  hooks::AgentEvent pending = codex().parse_event(post);
  EXPECT_EQ(pending.name, "PostToolUse");
  EXPECT_TRUE(pending.outcome_pending) << "not taken for a success";
  EXPECT_TRUE(codex().late_outcomes());
  EXPECT_EQ(codex().reported_outcome(rollout, "call_ro"), std::nullopt);

  testing_support::write_file(
      rollout,
      start +
          R"({"timestamp":"t","type":"response_item","payload":{"type":"function_call_output","call_id":"call_ro","output":"Chunk ID: 1\nWall time: 0.0000 seconds\nProcess exited with code 1\nOriginal token count: 9\nOutput:\ntouch: Read-only file system\n"}})"
          "\n"
          R"({"timestamp":"t","type":"response_item","payload":{"type":"function_call_output","call_id":"call_long","output":"Chunk ID: 2\nWall time: 10.0 seconds\nProcess running with session ID 3\n"}})"
          "\n"
          R"({"timestamp":"t","type":"response_item","payload":{"type":"function_call_output","call_id":"call_fine","output":"Chunk ID: 3\nProcess exited with code 0\nOriginal token count: 1\nOutput:\nok\n"}})"
          "\n");
  std::optional<hooks::ReportedOutcome> ended = codex().reported_outcome(rollout, "call_ro");
  ASSERT_TRUE(ended);
  EXPECT_FALSE(ended->success);
  EXPECT_EQ(ended->exit_code, 1);
  EXPECT_EQ(ended->summary, "exit code 1: touch: Read-only file system\n");
  EXPECT_EQ(codex().reported_outcome(rollout, "call_long"), std::nullopt)
      << "still running: its PostToolUse comes when it exits";
  std::optional<hooks::ReportedOutcome> fine = codex().reported_outcome(rollout, "call_fine");
  ASSERT_TRUE(fine);
  EXPECT_TRUE(fine->success);
  EXPECT_EQ(fine->summary, "ok\n");
  // A tool that is not a shell command is not held open.
  std::string patch = post;
  patch.replace(patch.find("\"Bash\""), 6, "\"apply_patch\"");
  EXPECT_FALSE(codex().parse_event(patch).outcome_pending);
}

TEST(CodexAdapter, TheCompletionIsFoundAnywhereInALongRollout) {
  testing_support::TempDir temp;
  fs::path rollout = temp / "rollout.jsonl";
  // A long session: the completion far from the end, and one longer than the first window.
  std::string filler;
  for (int i = 0; i < 3000; ++i) {
    filler +=
        R"({"timestamp":"t","type":"response_item","payload":{"type":"message","text":"line )" +
        std::to_string(i) + "\"}}\n";
  }
  std::string long_output(200 * 1024, 'x');
  testing_support::write_file(
      rollout,
      R"({"type":"event_msg","payload":{"type":"item_completed","item":{"id":"call_early","status":"failed","exit_code":2,"aggregated_output":"early"}}})"
      "\n" +
          filler +
          R"({"type":"event_msg","payload":{"type":"item_completed","item":{"id":"call_long","status":"failed","exit_code":1,"aggregated_output":")" +
          long_output + "\"}}}\n" + filler);
  EXPECT_EQ(hooks::codex_call_failure(rollout, "call_early"), "exit code 2: early");
  EXPECT_EQ(hooks::codex_call_failure(rollout, "call_long"), "exit code 1: " + long_output);
  EXPECT_EQ(hooks::codex_call_failure(rollout, "call_absent"), std::nullopt);
}

TEST(CodexAdapter, ADenyNeverCarriesContinueFalseWhichCodexIgnoresBeforeATool) {
  hooks::AgentEvent pre;
  pre.name = pre.native_name = "PreToolUse";
  hooks::HookVerdict stop;
  stop.deny = "max_steps reached";
  stop.stop = "shadowbox stopped the run";
  hooks::HookAnswer answer = codex().answer(pre, stop);
  EXPECT_EQ(answer.exit_code, 0);
  Object::Ptr out = parse(answer.stdout_json);
  EXPECT_FALSE(out->has("continue")) << answer.stdout_json;
  Object::Ptr specific = out->getObject("hookSpecificOutput");
  EXPECT_EQ(specific->getValue<std::string>("permissionDecision"), "deny");
  EXPECT_EQ(specific->getValue<std::string>("permissionDecisionReason"), "max_steps reached");

  // What the model is told after a failed call goes on PostToolUse, Codex's own event.
  hooks::AgentEvent failure;
  failure.name = "PostToolUseFailure";
  failure.native_name = "PostToolUse";
  hooks::HookVerdict told;
  told.context = "shadowbox rolled back";
  specific = parse(codex().answer(failure, told).stdout_json)->getObject("hookSpecificOutput");
  EXPECT_EQ(specific->getValue<std::string>("hookEventName"), "PostToolUse");
  EXPECT_EQ(specific->getValue<std::string>("additionalContext"), "shadowbox rolled back");
  // What the person is told is Codex's systemMessage, beside it.
  told.notice = "files were put back";
  Object::Ptr both = parse(codex().answer(failure, told).stdout_json);
  EXPECT_EQ(both->getValue<std::string>("systemMessage"), "files were put back");
  EXPECT_TRUE(both->has("hookSpecificOutput"));
  told.context.clear();
  EXPECT_EQ(codex().answer(failure, told).stdout_json,
            R"({"systemMessage":"files were put back"})");

  hooks::HookVerdict broken{2, "", "", "", "checkpointing failed"};
  hooks::HookAnswer blocked = codex().answer(pre, broken);
  EXPECT_EQ(blocked.exit_code, 2) << "Codex blocks the call on exit 2, with stderr as the reason";
  EXPECT_EQ(blocked.stderr_text, "checkpointing failed");
}

TEST(CodexAdapter, ResumeKeepsTheRunsOptionsWhereTheyWere) {
  using V = std::vector<std::string>;
  V exec = {"codex", "-c", "model=x", "exec", "--json", "-m", "gpt", "do it"};
  EXPECT_EQ(hooks::codex_resume_argv(exec, "T", {"go on"}, false),
            (V{"codex", "-c", "model=x", "exec", "--json", "-m", "gpt", "resume", "T", "go on"}));
  // Without a new prompt the run's own is given again.
  EXPECT_EQ(hooks::codex_resume_argv(exec, "T", {}, false),
            (V{"codex", "-c", "model=x", "exec", "--json", "-m", "gpt", "resume", "T", "do it"}));
  EXPECT_EQ(hooks::codex_resume_argv(exec, "T", {"go on"}, true),
            (V{"codex", "exec", "resume", "T", "go on"}));
  // The interactive CLI.
  EXPECT_EQ(hooks::codex_resume_argv({"codex", "--model=gpt", "fix it"}, "T", {}, false),
            (V{"codex", "--model=gpt", "resume", "T", "fix it"}));
  hooks::ResumeCommand request{exec, "T", {"more"}, false, true};
  EXPECT_EQ(codex().resume_argv(request).back(), "more");
}

TEST(CodexAdapter, TheInteractiveCliRunsWithoutItsBackgroundServer) {
  using V = std::vector<std::string>;
  EXPECT_EQ(codex().run_argv({"codex"}), (V{"codex", "--no-daemon"}));
  EXPECT_EQ(codex().run_argv({"codex", "-m", "gpt", "fix it"}),
            (V{"codex", "--no-daemon", "-m", "gpt", "fix it"}));
  EXPECT_EQ(codex().run_argv({"codex", "resume", "T"}), (V{"codex", "--no-daemon", "resume", "T"}));
  // codex exec runs in its own process; other subcommands and a given flag stay as they are.
  EXPECT_EQ(codex().run_argv({"codex", "exec", "go"}), (V{"codex", "exec", "go"}));
  EXPECT_EQ(codex().run_argv({"codex", "--json", "e", "go"}), (V{"codex", "--json", "e", "go"}));
  EXPECT_EQ(codex().run_argv({"codex", "login"}), (V{"codex", "login"}));
  EXPECT_EQ(codex().run_argv({"codex", "--no-daemon", "go"}), (V{"codex", "--no-daemon", "go"}));
  // Other agents are started as given.
  EXPECT_EQ(hooks::adapter_for(AgentKind::kGemini).run_argv({"gemini", "-p", "x"}),
            (V{"gemini", "-p", "x"}));
}

TEST(CodexAdapter, ItsSessionDataIsTheRolloutOfTheThread) {
  EXPECT_EQ(codex().preserved_parts(), std::vector<std::string>{".codex/sessions"});
  std::string id = "01a21253-4d4d-7f53-8a31-8329118f6569";
  EXPECT_TRUE(codex().is_session_path(
      ".codex/sessions/2026/11/25/rollout-2026-11-25T10-49-38-" + id + ".jsonl", id));
  EXPECT_FALSE(codex().is_session_path(".codex/sessions/2026/11/25/rollout-x-other.jsonl", id));
  EXPECT_FALSE(codex().is_session_path(".claude/projects/p/" + id + ".jsonl", id));
}

TEST(CodexAdapter, TheRunsHomeCarriesTheUsersConfigButNeverTheirLogin) {
  testing_support::TempDir temp;
  fs::path user = temp / "user-codex";
  testing_support::write_file(user / "config.toml", "model = \"gpt-5.5\"");
  testing_support::write_file(user / "auth.json", "{\"OPENAI_API_KEY\":\"sk-secret\"}");
  testing_support::write_file(user / "hooks.json", "{\"hooks\":{}}");
  fs::path home = temp / "run-home";
  fs::create_directories(home);
  hooks::HomeRequest request;
  request.home = home;
  request.workspace = temp / "ws";
  request.user.codex_home = user;
  std::vector<std::string> warnings;
  request.warn = [&](const std::string& w) { warnings.push_back(w); };
  // The login is not carried, and without a key in the environment that is said.
  ::unsetenv("OPENAI_API_KEY");
  ::unsetenv("CODEX_API_KEY");
  codex().prepare_home(request)->finish();
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("your Codex login"), std::string::npos) << warnings[0];
  EXPECT_NE(warnings[0].find("OPENAI_API_KEY"), std::string::npos) << warnings[0];
  ::setenv("OPENAI_API_KEY", "sk-from-the-environment", 1);
  std::unique_ptr<hooks::PreparedHome> prepared = codex().prepare_home(request);
  ::unsetenv("OPENAI_API_KEY");
  EXPECT_EQ(warnings.size(), 1u) << "a key in the environment is what the run uses";
  codex().install_hooks(home, {"sb hook codex", ""});
  std::string config = testing_support::read_file(home / ".codex" / "config.toml");
  EXPECT_EQ(config.rfind("model = \"gpt-5.5\"\n", 0), 0u) << config;
  EXPECT_NE(config.find("[hooks.state.\"" + fs::absolute(home).string() +
                        "/.codex/hooks.json:pre_tool_use:0:0\"]"),
            std::string::npos)
      << config;
  EXPECT_FALSE(fs::exists(home / ".codex" / "auth.json"));
  EXPECT_EQ(testing_support::read_file(user / "config.toml"), "model = \"gpt-5.5\"")
      << "the user's file is never changed";
  EXPECT_EQ(codex().environment(home),
            std::vector<std::string>{"CODEX_HOME=" + fs::absolute(home / ".codex").string()});
  prepared->finish();
  codex().uninstall_hooks(home);
  EXPECT_FALSE(fs::exists(home / ".codex" / "config.toml"));
  EXPECT_FALSE(fs::exists(home / ".codex" / "hooks.json"));
}

TEST(CodexAdapter, TheFoldersTrustAnsweredInARunIsNotAskedAgainInTheNext) {
  testing_support::TempDir temp;
  fs::path user = temp / "user-codex";
  testing_support::write_file(user / "config.toml", "model = \"gpt-5.5\"\n");
  fs::create_directories(temp / "ws");
  fs::path answers = temp / "store/agent-answers/codex";
  auto request_for = [&](const fs::path& home) {
    fs::create_directories(home);
    hooks::HomeRequest request;
    request.home = home;
    request.workspace = temp / "ws";
    request.user.codex_home = user;
    request.answers = answers;
    return request;
  };
  std::string trust = "[projects.\"" + (temp / "ws").string() + "\"]\ntrust_level = \"trusted\"\n";
  {
    std::unique_ptr<hooks::PreparedHome> first = codex().prepare_home(request_for(temp / "h1"));
    // The person answers "Trust and continue": Codex saves it in the run's config.toml.
    std::ofstream(temp / "h1/.codex/config.toml", std::ios::app) << "\n" << trust;
    first->finish();
  }
  EXPECT_FALSE(fs::exists(temp / "h1/.codex/config.toml"));
  EXPECT_EQ(testing_support::read_file(answers), trust);
  EXPECT_EQ(fs::status(answers).permissions() & 0777, 0600);
  std::unique_ptr<hooks::PreparedHome> second = codex().prepare_home(request_for(temp / "h2"));
  EXPECT_EQ(testing_support::read_file(temp / "h2/.codex/config.toml"),
            "model = \"gpt-5.5\"\n" + trust);
  EXPECT_EQ(testing_support::read_file(user / "config.toml"), "model = \"gpt-5.5\"\n")
      << "the user's file is never changed";
  second->finish();
  // An isolated run starts from nothing: no answers in, none kept.
  hooks::HomeRequest isolated = request_for(temp / "h3");
  isolated.settings.isolate = true;
  std::unique_ptr<hooks::PreparedHome> third = codex().prepare_home(isolated);
  EXPECT_EQ(testing_support::read_file(temp / "h3/.codex/config.toml"), "");
}

}  // namespace
