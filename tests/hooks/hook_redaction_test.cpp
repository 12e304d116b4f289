// What a hook event records never holds a secret — a configured one (run.secrets) or a
// credential by its shape — in any object of the store: not where a summary's cut falls
// inside it, not where JSON escapes it. Each test sends events through `shadowbox hook`
// and then reads every object of the shadow repository, reachable or not.
#include <gtest/gtest.h>
#include <boost/filesystem.hpp>

#include "git_objects.hpp"
#include "hook_events.hpp"
#include "hooks/agent_event.hpp"
#include "test_support.hpp"

namespace {

namespace fs = boost::filesystem;
using testing_support::CommandResult;
using testing_support::objects_containing;
using testing_support::run_command;
using testing_support::write_file;

// The variable run.secrets names in these tests.
constexpr const char* kVariable = "SHADOWBOX_REDACTION_TEST_SECRET";

// s as a JSON string's content.
std::string json_escaped(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

class HookRedactionTest : public ::testing::Test {
 protected:
  HookRedactionTest() {
    fs::create_directories(ws_);
    write_file(ws_ / "a.txt", "a\n");
    write_file(config_, std::string("run:\n  secrets: [") + kVariable + "]\n");
  }

  // Sends one event to `shadowbox hook <agent>` with the secret in the hook's environment.
  CommandResult send(const std::string& event_json, const std::string& secret,
                     const std::string& agent = "claude-code") {
    CommandResult r =
        run_command({SHADOWBOX_BIN, "--store", store_.string(), "hook", agent}, ws_,
                    {"SHADOWBOX_CONFIG=" + config_.string(), "CLAUDE_PROJECT_DIR=" + ws_.string(),
                     std::string(kVariable) + "=" + secret},
                    event_json);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r;
  }
  std::string event(const std::string& name, const std::string& fields) const {
    return hook_events::event(name, ws_.string(), fields);
  }

  // The objects of the store that hold any of needles.
  std::vector<std::string> holding(const std::vector<std::string>& needles) const {
    fs::path git_dir = store_ / "repo.git";
    EXPECT_GT(testing_support::object_count(git_dir), 10u) << "nothing recorded?";
    return objects_containing(git_dir, needles);
  }

  testing_support::TempDir temp_;
  fs::path ws_ = temp_ / "ws";
  fs::path store_ = temp_ / "store";
  fs::path config_ = temp_ / "config.yaml";
};

TEST_F(HookRedactionTest, ASecretAcrossASummarysCutLeavesNoPrefixOfItInAnyObject) {
  const std::string secret = "Cfg-Secret-0123456789-abcdefghijklmnop";  // run.secrets
  const std::string key = "sk-ant-api03-" + std::string(40, 'K');       // by its shape
  // The input's summary ({"command":"<pad><secret>"}) is cut 15 bytes into the secret;
  // the result's (a string) and the error's 15 bytes into the key.
  std::string input_pad(hooks::kInputSummaryLimit - 15 - std::string("{\"command\":\"").size(),
                        'i');
  std::string input = ",\"tool_input\":{\"command\":\"" + input_pad + secret + " end\"}";
  std::string result_pad(hooks::kResultSummaryLimit - 15 - 1, 'r');
  result_pad += ' ';  // a key starts a word
  send(event("PreToolUse", ",\"tool_name\":\"Bash\",\"tool_use_id\":\"t1\"" + input), secret);
  send(event("PostToolUse", ",\"tool_name\":\"Bash\",\"tool_use_id\":\"t1\"" + input +
                                ",\"tool_response\":\"" + result_pad + key + " end\""),
       secret);
  send(event("PreToolUse", ",\"tool_name\":\"Bash\",\"tool_use_id\":\"t2\"" + input), secret);
  write_file(ws_ / "junk.txt", "junk");
  send(event("PostToolUseFailure", ",\"tool_name\":\"Bash\",\"tool_use_id\":\"t2\"" + input +
                                       ",\"error\":\"" + result_pad + key + "\""),
       secret);
  EXPECT_FALSE(fs::exists(ws_ / "junk.txt")) << "rolled back";
  // No prefix of 8 bytes or more of either, anywhere.
  EXPECT_EQ(holding({secret.substr(0, 8), key.substr(0, 8)}), std::vector<std::string>{});
}

TEST_F(HookRedactionTest, ASecretWithQuotesAndBackslashesInAnObjectIsFoundEscapedOrNot) {
  const std::string secret = R"(pa"ss\word/0123-"x\y)";
  const std::string in_json = json_escaped(secret);
  std::string input = ",\"tool_input\":{\"command\":\"login\",\"options\":{\"password\":\"" +
                      in_json + "\",\"list\":[1,\"" + in_json + "\"]}}";
  send(event("PreToolUse", ",\"tool_name\":\"Login\",\"tool_use_id\":\"t1\"" + input), secret);
  send(event("PostToolUse", ",\"tool_name\":\"Login\",\"tool_use_id\":\"t1\"" + input +
                                ",\"tool_response\":{\"stdout\":\"logged in with " + in_json +
                                "\"}"),
       secret);
  EXPECT_EQ(holding({secret, in_json, json_escaped(in_json)}), std::vector<std::string>{});
}

TEST_F(HookRedactionTest, ACodexFailureAcrossTheCutLeavesNoPrefixOfTheSecret) {
  // Codex tells a failed command in its rollout: "exit code 3: <its output>".
  const std::string secret = "Cfg-Secret-0123456789-abcdefghijklmnop";
  std::string output =
      std::string(hooks::kResultSummaryLimit - 15 - std::string("exit code 3: ").size(), 'o') +
      secret;
  fs::path rollout = temp_ / "rollout.jsonl";
  write_file(rollout,
             R"({"timestamp":"t","type":"event_msg","payload":{"type":"item_completed","item":)"
             R"({"type":"CommandExecution","id":"call_1","status":"failed","exit_code":3,)"
             R"("aggregated_output":")" +
                 output + "\"}}}\n");
  std::string call = ",\"transcript_path\":\"" + rollout.string() +
                     "\",\"tool_name\":\"Bash\",\"tool_use_id\":\"call_1\","
                     "\"tool_input\":{\"command\":\"x\"}";
  send("{\"hook_event_name\":\"PreToolUse\",\"session_id\":\"th\",\"cwd\":\"" + ws_.string() +
           "\"" + call + "}",
       secret, "codex");
  send("{\"hook_event_name\":\"PostToolUse\",\"session_id\":\"th\",\"cwd\":\"" + ws_.string() +
           "\"" + call + ",\"tool_response\":\"\"}",
       secret, "codex");
  EXPECT_EQ(holding({secret.substr(0, 8)}), std::vector<std::string>{});
}

}  // namespace
