// Checkpoint commit messages (labels of any bytes among them) and path quoting
// round-trip exactly.

#include <gtest/gtest.h>

#include "fsnap/checkpoint.hpp"
#include "fsnap/path_quoting.hpp"

namespace fsnap {
namespace {

TEST(PathQuoting, PlainNamesStayPlain) {
  EXPECT_EQ(quote_path("src/main.cpp"), "src/main.cpp");
  EXPECT_EQ(quote_path("with space.txt"), "with space.txt");
  EXPECT_EQ(quote_path("caf\xc3\xa9.txt"), "caf\xc3\xa9.txt");
}

TEST(PathQuoting, SpecialNamesAreQuotedAndComeBack) {
  const std::string names[] = {"a\nb",
                               "tab\there",
                               "quote\"d",
                               "back\\slash",
                               "\xff\xfe.bin",
                               "\"leading-quote",
                               std::string("nul\x01", 4),
                               "\x7f",
                               "mixed \xc3\xa9\xff"};
  for (const std::string& name : names) {
    std::string quoted = quote_path(name);
    EXPECT_EQ(quoted.front(), '"') << quoted;
    EXPECT_EQ(quoted.find('\n'), std::string::npos);
    auto back = unquote_path(quoted);
    ASSERT_TRUE(back.has_value()) << quoted;
    EXPECT_EQ(*back, name);
  }
  EXPECT_EQ(quote_path("a\nb"), "\"a\\nb\"");
  EXPECT_EQ(quote_path("\xff"), "\"\\377\"");
}

TEST(PathQuoting, RejectsMalformedQuoting) {
  EXPECT_FALSE(unquote_path("\"unterminated").has_value());
  EXPECT_FALSE(unquote_path("\"bad escape \\q\"").has_value());
  EXPECT_FALSE(unquote_path("\"short octal \\37\"").has_value());
  EXPECT_FALSE(unquote_path("").has_value());
}

TEST(Utf8, Validation) {
  EXPECT_TRUE(is_valid_utf8("plain"));
  EXPECT_TRUE(is_valid_utf8("\xe2\x82\xac"));
  EXPECT_FALSE(is_valid_utf8("\xc0\xaf"));      // overlong
  EXPECT_FALSE(is_valid_utf8("\xed\xa0\x80"));  // surrogate
  EXPECT_FALSE(is_valid_utf8("\xe2\x82"));      // truncated
}

TEST(CheckpointMessage, RoundTripsEveryField) {
  Checkpoint c;
  c.id = "0123456789abcdef";
  c.meta.phase = Phase::kPreTool;
  c.meta.run = "run-1";
  c.meta.tag = "before";
  c.meta.tool_name = "Bash";
  c.meta.tool_call_id = "toolu_01ABC";
  c.created_at = *parse_timestamp("2026-11-22T15:31:44.123456Z");
  c.skipped = {{"big.bin", "over-max-file-size", 123456789},
               {"odd\nname", "unsupported-type", 0},
               {"with copy.bin", "over-max-file-size", 1 << 30,
                LargeFileCopy{std::string(40, 'c'), -1'000'000'001}}};

  std::string message = format_checkpoint_message(c);
  EXPECT_EQ(message.substr(0, message.find('\n')), "pre_tool Bash toolu_01ABC [before]");

  Checkpoint back;
  ASSERT_TRUE(parse_checkpoint_message(message, back));
  EXPECT_EQ(back.id, c.id);
  EXPECT_EQ(back.meta.phase, c.meta.phase);
  EXPECT_EQ(back.meta.run, c.meta.run);
  EXPECT_EQ(back.meta.tag, c.meta.tag);
  EXPECT_EQ(back.meta.tool_name, c.meta.tool_name);
  EXPECT_EQ(back.meta.tool_call_id, c.meta.tool_call_id);
  EXPECT_EQ(back.created_at, c.created_at);
  EXPECT_EQ(back.skipped, c.skipped);
}

TEST(CheckpointMessage, AnyLabelRoundTripsInItsTrailer) {
  const std::string labels[] = {"pre:toolu_01",
                                "with spaces / and: colons",
                                "  spaces at the ends  ",
                                "\"quoted\"",
                                "two\nlines\tand a tab",
                                "caf\xc3\xa9 \xe2\x9c\x93",
                                std::string("nul\0and \xff", 9),
                                "Checkpoint-Id: ffffffffffffffff"};
  for (const std::string& label : labels) {
    Checkpoint c;
    c.id = "0123456789abcdef";
    c.meta.label = label;
    c.created_at = *parse_timestamp("2026-11-22T15:31:44.123456Z");
    std::string message = format_checkpoint_message(c);
    Checkpoint back;
    ASSERT_TRUE(parse_checkpoint_message(message, back)) << message;
    EXPECT_EQ(back.meta.label, label) << message;
    EXPECT_EQ(back.id, c.id) << "a label never passes for another trailer";
    EXPECT_EQ(back.meta.tag, "");
  }
}

TEST(CheckpointMessage, ForeignMessagesAreNotCheckpoints) {
  Checkpoint c;
  EXPECT_FALSE(parse_checkpoint_message("just a commit\n", c));
  EXPECT_FALSE(parse_checkpoint_message("subject\n\nSigned-off-by: someone\n", c));
}

TEST(Phase, NamesRoundTrip) {
  for (Phase p :
       {Phase::kPreTool, Phase::kPostTool, Phase::kCheckpoint, Phase::kManual, Phase::kSafety}) {
    EXPECT_EQ(parse_phase(to_string(p)), p);
  }
  EXPECT_FALSE(parse_phase("pre-tool").has_value());
}

TEST(Timestamp, FormatAndParse) {
  auto t = *parse_timestamp("2026-01-02T03:04:05.000006Z");
  EXPECT_EQ(format_timestamp(t), "2026-01-02T03:04:05.000006Z");
  EXPECT_TRUE(parse_timestamp("2026-01-02T03:04:05Z").has_value());
  EXPECT_FALSE(parse_timestamp("yesterday").has_value());
}

}  // namespace
}  // namespace fsnap
