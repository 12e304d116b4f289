// Parsing a Claude Code hook event: the fields shadowbox reads, the inputs and results kept
// whole (and their summaries), and what makes an event malformed.
#include <gtest/gtest.h>

#include "hooks/agent_event.hpp"
#include "runs/redaction.hpp"
#include "sandbox/errors.hpp"

namespace {

using hooks::AgentEvent;
using hooks::parse_agent_event;

TEST(AgentEventTest, ToolEventsCarryTheCallAndItsValues) {
  AgentEvent e = parse_agent_event(
      R"({"hook_event_name":"PostToolUse","session_id":"s","transcript_path":"/t.jsonl",)"
      R"("cwd":"/w","tool_name":"Bash","tool_use_id":"toolu_1",)"
      R"("tool_input":{"command":"ls"},"tool_response":"done","permission_mode":"default"})");
  EXPECT_EQ(e.name, "PostToolUse");
  EXPECT_TRUE(e.is_tool_event());
  EXPECT_EQ(e.tool_name, "Bash");
  EXPECT_EQ(e.tool_use_id, "toolu_1");
  EXPECT_EQ(runs::redacted_value_summary(e.tool_input, {}, hooks::kInputSummaryLimit),
            "{\"command\":\"ls\"}");
  EXPECT_EQ(e.tool_response.toString(), "done");
  EXPECT_EQ(e.cwd, "/w");
}

TEST(AgentEventTest, ValuesAreKeptWholeAndTheirSummariesCutAfterRedaction) {
  std::string big(20000, 'x');
  AgentEvent e = parse_agent_event(
      R"({"hook_event_name":"PostToolUseFailure","tool_name":"Bash","tool_use_id":"t",)"
      R"("tool_input":{"command":")" +
      big + R"("},"error":")" + big + R"("})");
  EXPECT_EQ(e.error.toString(), big) << "whole: the record redacts it before it cuts it";
  std::string input = runs::redacted_value_summary(e.tool_input, {}, hooks::kInputSummaryLimit);
  EXPECT_EQ(input.size(), hooks::kInputSummaryLimit + 3);
  std::string error = runs::redacted_value_summary(e.error, {}, hooks::kResultSummaryLimit);
  EXPECT_EQ(error.size(), hooks::kResultSummaryLimit + 3);
  EXPECT_EQ(error.substr(error.size() - 3), "...");
}

TEST(AgentEventTest, SessionEventsAndFieldsOfOtherShapes) {
  AgentEvent start = parse_agent_event(
      R"({"hook_event_name":"SessionStart","session_id":"s1","source":"resume"})");
  EXPECT_EQ(start.session_id, "s1");
  EXPECT_EQ(start.source, "resume");
  AgentEvent end = parse_agent_event(R"({"hook_event_name":"SessionEnd","reason":"clear"})");
  EXPECT_EQ(end.reason, "clear");
  EXPECT_FALSE(end.is_tool_event());
  // A field shadowbox only reads when present is ignored in another shape.
  AgentEvent odd = parse_agent_event(R"({"hook_event_name":"Stop","reason":{"x":1}})");
  EXPECT_EQ(odd.reason, "");
}

TEST(AgentEventTest, MalformedEventsSayWhatIsWrong) {
  auto problem = [](const std::string& json) -> std::string {
    try {
      parse_agent_event(json);
      return "";
    } catch (const sandbox::Error& e) {
      return e.what();
    }
  };
  EXPECT_NE(problem("not json").find("not JSON"), std::string::npos);
  EXPECT_NE(problem("[1]").find("not a JSON object"), std::string::npos);
  EXPECT_NE(problem("{}").find("hook_event_name"), std::string::npos);
  EXPECT_NE(problem(R"({"hook_event_name":5})").find("not a string"), std::string::npos);
  EXPECT_NE(problem(R"({"hook_event_name":"PreToolUse","tool_name":"Bash"})").find("tool_use_id"),
            std::string::npos);
  EXPECT_NE(problem(R"({"hook_event_name":"SessionStart"})").find("session_id"), std::string::npos);
  EXPECT_EQ(problem(R"({"hook_event_name":"Notification"})"), "");
  EXPECT_THROW(parse_agent_event("{"), sandbox::Error);
}

}  // namespace
