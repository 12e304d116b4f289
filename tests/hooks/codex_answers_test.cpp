// What of a run's Codex config.toml is kept for the store's next runs: the person's
// answers to Codex's own questions (this folder's trust, notices), nothing else, and
// never over what the user's own file says.
#include <gtest/gtest.h>

#include "hooks/codex_answers.hpp"

namespace {

const std::string kUser =
    "model = \"gpt-5.5\"\n"
    "\n"
    "[model_providers.mock]\n"
    "name = \"mock\"\n";

// The run's file as Codex 0.169.0 leaves it after "Trust and continue" and "Use
// existing model": the user's, shadowbox's hook trust, then what Codex added.
const std::string kAfter = kUser +
                           "\n"
                           "[hooks.state.\"/s/runs/r/home/.codex/hooks.json:pre_tool_use:0:0\"]\n"
                           "trusted_hash = \"sha256:00\"\n"
                           "\n"
                           "[tui]\n"
                           "screen_reader_detection_done = true\n"
                           "\n"
                           "[tui.model_availability_nux]\n"
                           "\"gpt-6.1-sol\" = 1\n"
                           "\n"
                           "[projects.\"/home/me/app\"]\n"
                           "trust_level = \"trusted\"\n"
                           "\n"
                           "[projects.\"/elsewhere\"]\n"
                           "trust_level = \"trusted\"\n"
                           "\n"
                           "[notice.model_migrations]\n"
                           "\"gpt-5.5\" = \"gpt-6-sol\"\n";

TEST(CodexAnswersTest, KeepsThisFoldersTrustAndTheNoticesOnly) {
  std::string kept = hooks::codex_answers(kAfter, kUser, "/home/me/app");
  EXPECT_NE(kept.find("[projects.\"/home/me/app\"]\ntrust_level = \"trusted\"\n"),
            std::string::npos)
      << kept;
  EXPECT_NE(kept.find("[tui]\nscreen_reader_detection_done = true\n"), std::string::npos);
  EXPECT_NE(kept.find("[notice.model_migrations]\n\"gpt-5.5\" = \"gpt-6-sol\"\n"),
            std::string::npos);
  EXPECT_EQ(kept.find("/elsewhere"), std::string::npos)
      << "another folder's trust is not this run's";
  EXPECT_EQ(kept.find("hooks.state"), std::string::npos) << "shadowbox's own tables are per run";
  EXPECT_EQ(kept.find("model_providers"), std::string::npos) << "the user's file stays theirs";
  EXPECT_EQ(hooks::codex_answers(kUser, kUser, "/home/me/app"), "") << "nothing answered";
}

TEST(CodexAnswersTest, TheNextRunStartsWithThemUnlessTheUsersFileSaysOtherwise) {
  std::string kept = hooks::codex_answers(kAfter, kUser, "/home/me/app");
  std::string next = hooks::with_codex_answers(kUser, kept, "/home/me/app");
  EXPECT_EQ(next.rfind(kUser, 0), 0u) << "the user's file first, as it is";
  EXPECT_NE(next.find("[projects.\"/home/me/app\"]\ntrust_level = \"trusted\"\n"),
            std::string::npos)
      << next;
  // Applied again, nothing is added twice.
  EXPECT_EQ(hooks::with_codex_answers(next, kept, "/home/me/app"), next);

  // The user's own word on this folder (a table, or a dotted key) wins.
  std::string untrusted = kUser + "[projects.\"/home/me/app\"]\ntrust_level = \"untrusted\"\n";
  std::string with = hooks::with_codex_answers(untrusted, kept, "/home/me/app");
  EXPECT_EQ(with.find("\"trusted\""), std::string::npos) << with;
  std::string dotted = "projects.\"/home/me/app\".trust_level = \"untrusted\"\n" + kUser;
  EXPECT_EQ(hooks::with_codex_answers(dotted, kept, "/home/me/app").find("[projects."),
            std::string::npos);
  // A `tui` key of the user's own at the top: no [tui] table would be valid after it.
  std::string tui = "tui.theme = \"dark\"\n" + kUser;
  EXPECT_EQ(hooks::with_codex_answers(tui, kept, "/home/me/app").find("[tui]"), std::string::npos);
  // Answers for another workspace's store are not applied here.
  EXPECT_EQ(hooks::with_codex_answers(kUser, kept, "/other").find("[projects."), std::string::npos);
}

TEST(CodexAnswersTest, HeadersAreReadAsTomlWritesThem) {
  // Spaces in a header, a quoted workspace with a quote in its name, a bracket inside a
  // multi-line string, and an array of tables: only real tables count.
  std::string workspace = "/w/a \"b\"";
  std::string config =
      "description = \"\"\"\n[projects.\"/w/a \\\"b\\\"\"]\n\"\"\"\n"
      "[[profiles]]\nname = \"x\"\n"
      "[ projects . \"/w/a \\\"b\\\"\" ]\ntrust_level = \"trusted\"\n";
  std::string kept = hooks::codex_answers(config, "", workspace);
  EXPECT_EQ(kept, "[ projects . \"/w/a \\\"b\\\"\" ]\ntrust_level = \"trusted\"\n");
}

}  // namespace
