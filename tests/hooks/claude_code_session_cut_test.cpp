// Cutting a Claude Code transcript before a tool call (rewind): the lines of the call's
// assistant turn (one per content block) and everything after go, what came before
// stays byte for byte, and a transcript that does not hold the call or cannot be read is
// refused without a change. The lines are shaped like Claude Code 2.1.330's.
#include <gtest/gtest.h>

#include <boost/filesystem.hpp>

#include "hooks/claude_code_session_cut.hpp"
#include "sandbox/errors.hpp"
#include "test_support.hpp"

namespace {

namespace fs = boost::filesystem;

const std::string kSession = "1f1d3d4b-d000-4298-a147-92e76034952d";

std::string user(const std::string& uuid, const std::string& parent, const std::string& text) {
  return R"({"type":"user","uuid":")" + uuid + R"(","parentUuid":)" +
         (parent.empty() ? "null" : "\"" + parent + "\"") +
         R"(,"message":{"role":"user","content":")" + text + R"("}})";
}
std::string attachment(const std::string& uuid, const std::string& parent) {
  return R"({"type":"attachment","uuid":")" + uuid + R"(","parentUuid":")" + parent +
         R"(","attachment":{"type":"todo"}})";
}
std::string assistant(const std::string& uuid, const std::string& parent, const std::string& msg,
                      const std::string& block) {
  return R"({"type":"assistant","uuid":")" + uuid + R"(","parentUuid":")" + parent +
         R"(","message":{"id":")" + msg + R"(","role":"assistant","content":[)" + block + "]}}";
}
std::string tool_use(const std::string& id) {
  return R"({"type":"tool_use","id":")" + id + R"(","name":"Write","input":{}})";
}
std::string result(const std::string& uuid, const std::string& parent, const std::string& id) {
  return R"({"type":"user","uuid":")" + uuid + R"(","parentUuid":")" + parent +
         R"(","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":")" + id +
         R"(","content":"ok"}]}})";
}

class ClaudeCodeSessionCutTest : public ::testing::Test {
 protected:
  fs::path transcript() const {
    return temp_ / "home/.claude/projects/-tmp-ws" / (kSession + ".jsonl");
  }
  void write(const std::vector<std::string>& lines) {
    std::string text;
    for (const std::string& l : lines) text += l + "\n";
    testing_support::write_file(transcript(), text);
  }
  hooks::TranscriptCut cut(const std::string& call) {
    return hooks::cut_claude_code_transcript(temp_ / "home", {kSession, call, "Write", "{}"});
  }
  testing_support::TempDir temp_;
};

TEST_F(ClaudeCodeSessionCutTest, TheCallsWholeTurnAndWhatFollowsGo) {
  std::vector<std::string> before = {
      R"({"type":"queue-operation","operation":"enqueue"})",
      user("u1", "", "go"),
      attachment("a1", "u1"),
      assistant("m1", "a1", "msg_1", tool_use("toolu_one")),
      result("r1", "m1", "toolu_one"),
      attachment("a2", "r1"),
      R"({"type":"last-prompt"})",
  };
  std::vector<std::string> lines = before;
  // The second call's turn: a text block and the tool_use, one line each.
  lines.push_back(assistant("m2a", "a2", "msg_2", R"({"type":"text","text":"next"})"));
  lines.push_back(assistant("m2b", "m2a", "msg_2", tool_use("toolu_two")));
  lines.push_back(result("r2", "m2b", "toolu_two"));
  lines.push_back(assistant("m3", "r2", "msg_3", tool_use("toolu_three")));
  write(lines);
  hooks::TranscriptCut c = cut("toolu_two");
  EXPECT_EQ(c.last_kept_uuid, "a2");
  EXPECT_EQ(c.kept_lines, before.size());
  EXPECT_EQ(c.dropped_lines, 4u);
  std::string kept;
  for (const std::string& l : before) kept += l + "\n";
  EXPECT_EQ(testing_support::read_file(transcript()), kept);
  EXPECT_EQ(fs::status(transcript()).permissions() & 077, 0) << "a transcript stays private";
}

TEST_F(ClaudeCodeSessionCutTest, ALastLineCutShortByACrashGoesWithTheRest) {
  // (Its newline never written.)
  testing_support::write_file(transcript(),
                              user("u1", "", "go") + "\n" +
                                  assistant("m1", "u1", "msg_1", tool_use("toolu_one")) + "\n" +
                                  R"({"type":"user","uuid":"r1","par)");
  EXPECT_EQ(cut("toolu_one").last_kept_uuid, "u1");
  EXPECT_EQ(testing_support::read_file(transcript()), user("u1", "", "go") + "\n");
}

TEST_F(ClaudeCodeSessionCutTest, WhatCannotBeCutIsRefusedAndLeftAsItWas) {
  std::vector<std::string> lines = {user("u1", "", "go"),
                                    assistant("m1", "u1", "msg_1", tool_use("toolu_one"))};
  write(lines);
  std::string text = testing_support::read_file(transcript());
  auto code_of = [&](const std::string& call) {
    try {
      cut(call);
    } catch (const sandbox::Error& e) {
      return e.code();
    }
    ADD_FAILURE() << call << " was cut";
    return sandbox::ErrorCode::kInvalidArgument;
  };
  EXPECT_EQ(code_of("toolu_missing"), sandbox::ErrorCode::kNotFound);
  EXPECT_EQ(testing_support::read_file(transcript()), text);
  // A line in the middle that is not JSON: written by someone else, not cut.
  write({user("u1", "", "go"), "not json", assistant("m1", "u1", "msg_1", tool_use("toolu_one"))});
  EXPECT_EQ(code_of("toolu_one"), sandbox::ErrorCode::kCorrupt);
  // A turn following no message of the transcript.
  write({user("u1", "", "go"), assistant("m1", "elsewhere", "msg_1", tool_use("toolu_one"))});
  EXPECT_EQ(code_of("toolu_one"), sandbox::ErrorCode::kCorrupt);
  // No transcript of the session at all.
  fs::remove(transcript());
  EXPECT_EQ(code_of("toolu_one"), sandbox::ErrorCode::kNotFound);
}

}  // namespace
