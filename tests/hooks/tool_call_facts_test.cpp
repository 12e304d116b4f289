// What a tool event says of its call: the files an editing tool names (workspace paths,
// through symlinks as they resolve), a failed shell call's command and exit status, and
// its input in the canonical form the repeat guard compares.
#include <gtest/gtest.h>

#include <boost/filesystem.hpp>

#include "hooks/agent_event.hpp"
#include "hooks/tool_call_facts.hpp"
#include "test_support.hpp"

namespace {

namespace fs = boost::filesystem;
using hooks::AgentEvent;

class ToolCallFactsTest : public ::testing::Test {
 protected:
  ToolCallFactsTest() {
    fs::create_directories(temp_.path() / "ws");
    ws_ = fs::canonical(temp_.path() / "ws");
  }
  AgentEvent event(const std::string& tool, const std::string& input_json,
                   const std::string& extra = "") const {
    return hooks::parse_agent_event(R"({"hook_event_name":"PreToolUse","tool_name":")" + tool +
                                    R"(","tool_use_id":"t1","cwd":")" + ws_.string() +
                                    R"(","tool_input":)" + input_json + extra + "}");
  }
  std::optional<std::vector<std::string>> named(const AgentEvent& e) const {
    return hooks::named_paths(e, ws_);
  }

  testing_support::TempDir temp_;
  fs::path ws_;
};

using Paths = std::optional<std::vector<std::string>>;

TEST_F(ToolCallFactsTest, EditingToolsNameTheirFiles) {
  std::string file = (ws_ / "src" / "a.c").string();
  EXPECT_EQ(named(event("Edit", R"({"file_path":")" + file + R"(","old_string":"x"})")),
            Paths({"src/a.c"}));
  EXPECT_EQ(named(event("Write", R"({"file_path":"rel/b.txt"})")), Paths({"rel/b.txt"}))
      << "relative to the event's cwd";
  EXPECT_EQ(named(event("NotebookEdit", R"({"notebook_path":")" + file + R"("})")),
            Paths({"src/a.c"}));
  EXPECT_EQ(named(event("replace", R"({"file_path":")" + file + R"("})")), Paths({"src/a.c"}));
  EXPECT_EQ(named(event("apply_patch",
                        R"({"input":"*** Begin Patch\n*** Update File: x.py\n@@\n-a\n+b\n)"
                        R"(*** Add File: new/y.py\n+z\n*** Update File: old.py\n)"
                        R"(*** Move to: moved.py\n*** Delete File: gone.py\n*** End Patch"})")),
            Paths({"gone.py", "moved.py", "new/y.py", "old.py", "x.py"}));
}

TEST_F(ToolCallFactsTest, OtherToolsAndInputsWithoutAPathMayChangeAnything) {
  EXPECT_EQ(named(event("Bash", R"({"command":"make"})")), std::nullopt);
  EXPECT_EQ(named(event("Edit", R"({"old_string":"x"})")), std::nullopt);
  EXPECT_EQ(named(event("Write", R"({"file_path":42})")), std::nullopt);
  EXPECT_EQ(named(event("apply_patch", R"({"input":"not a patch"})")), std::nullopt);
}

TEST_F(ToolCallFactsTest, PathsOutsideTheWorkspaceAreNotItsAndSymlinksCountBothWays) {
  EXPECT_EQ(named(event("Write", R"({"file_path":"/etc/hosts.new"})")),
            Paths(std::vector<std::string>{}));
  EXPECT_EQ(named(event("Write", R"({"file_path":")" + (ws_ / ".." / "x").string() + R"("})")),
            Paths(std::vector<std::string>{}));
  testing_support::write_file(ws_ / "real.txt", "r");
  fs::create_symlink("real.txt", ws_ / "link.txt");
  EXPECT_EQ(named(event("Write", R"({"file_path":"link.txt"})")), Paths({"link.txt", "real.txt"}));
}

TEST_F(ToolCallFactsTest, AFailedShellCallsCommandAndExitStatus) {
  AgentEvent claude = hooks::parse_agent_event(
      R"({"hook_event_name":"PostToolUseFailure","tool_name":"Bash","tool_use_id":"t1",)"
      R"("tool_input":{"command":"npm test"},"error":"Exit code 1\nFAIL src/a.test.js"})");
  sandbox::FailureDetails d = hooks::failure_details(claude);
  EXPECT_EQ(d.command, "npm test");
  EXPECT_EQ(d.exit_code, 1);
  AgentEvent gemini = hooks::parse_agent_event(
      R"({"hook_event_name":"PostToolUseFailure","tool_name":"run_shell_command",)"
      R"("tool_use_id":"t2","tool_input":{"command":"pytest"},"error":"Error: x\nExit Code: 5"})");
  EXPECT_EQ(hooks::failure_details(gemini).exit_code, 5);
  EXPECT_EQ(hooks::failure_details(gemini).command, "pytest");
  AgentEvent edit = hooks::parse_agent_event(
      R"({"hook_event_name":"PostToolUseFailure","tool_name":"Edit","tool_use_id":"t3",)"
      R"("tool_input":{"command":"not a shell"},"error":"String to replace not found"})");
  EXPECT_EQ(hooks::failure_details(edit).command, "");
  EXPECT_EQ(hooks::failure_details(edit).exit_code, std::nullopt);
}

TEST_F(ToolCallFactsTest, TheCanonicalInputIgnoresKeyOrderAndSpacingOnly) {
  std::string a = hooks::canonical_input(
      event("Bash", R"({"command":"echo same","opts":{"z":1,"a":[true,null,"x\"y"]}})"));
  EXPECT_EQ(a, R"({"command":"echo same","opts":{"a":[true,null,"x\"y"],"z":1}})");
  EXPECT_EQ(
      hooks::canonical_input(event(
          "Bash",
          R"({ "opts" : { "a" : [ true, null, "x\"y" ], "z" : 1 }, "command": "echo same" })")),
      a);
  EXPECT_NE(hooks::canonical_input(event("Bash", R"({"command":"echo other"})")),
            hooks::canonical_input(event("Bash", R"({"command":"echo same"})")));
  EXPECT_NE(hooks::canonical_input(event("Bash", R"({"n":1})")),
            hooks::canonical_input(event("Bash", R"({"n":"1"})")));
  AgentEvent none = hooks::parse_agent_event(
      R"({"hook_event_name":"PreToolUse","tool_name":"Bash","tool_use_id":"t1"})");
  EXPECT_EQ(hooks::canonical_input(none), "");
}

}  // namespace
