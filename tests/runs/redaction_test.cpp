// Secret redaction: configured secret values, and well-known credentials by their shape
// (a login refreshed during a run has values no configured variable holds).
#include <gtest/gtest.h>

#include <Poco/JSON/Parser.h>

#include "runs/redaction.hpp"

namespace {

using runs::redact;
using runs::redacted_summary;
using runs::redacted_value_summary;

Poco::Dynamic::Var json(const std::string& text) {
  Poco::JSON::Parser parser;
  return parser.parse(text);
}

TEST(RedactionTest, ConfiguredValuesAreReplacedEverywhere) {
  EXPECT_EQ(redact("a my-secret-1 b my-secret-1", {"my-secret-1"}), "a [REDACTED] b [REDACTED]");
  EXPECT_EQ(redact("short abc", {"abc"}), "short abc") << "too short to tell from text";
}

TEST(RedactionTest, AnthropicKeysAndOAuthTokensAreReplacedByTheirShape) {
  std::string credentials =
      R"({"claudeAiOauth":{"accessToken":"sk-ant-oat01-AbC_d-123456789","refreshToken":)"
      R"("sk-ant-ort01-ZyX987654321-_q","expiresAt":1}})";
  EXPECT_EQ(redact(credentials, {}),
            R"({"claudeAiOauth":{"accessToken":"[REDACTED]","refreshToken":"[REDACTED]",)"
            R"("expiresAt":1}})");
  EXPECT_EQ(redact("export ANTHROPIC_API_KEY=sk-ant-api03-0123456789abcdef\n", {}),
            "export ANTHROPIC_API_KEY=[REDACTED]\n");
  // Mentions that are no credential stay.
  EXPECT_EQ(redact("keys look like sk-ant-... or sk-ant-api03-x", {}),
            "keys look like sk-ant-... or sk-ant-api03-x");
  EXPECT_EQ(redact("sk-ant-", {}), "sk-ant-");
}

TEST(RedactionTest, OtherWellKnownCredentialShapesAreReplaced) {
  EXPECT_EQ(redact("OPENAI_API_KEY=sk-proj-AbCdEf0123456789_-xyzXYZ", {}),
            "OPENAI_API_KEY=[REDACTED]");
  EXPECT_EQ(redact("aws_access_key_id = AKIAIOSFODNN7EXAMPLE\n", {}),
            "aws_access_key_id = [REDACTED]\n");
  EXPECT_EQ(redact("key=AIzaSyA-1234567890abcdefghijklmnopqrstu", {}), "key=[REDACTED]");
  EXPECT_EQ(redact("token ghp_0123456789abcdefghijABCDEFGHIJ012345 end", {}),
            "token [REDACTED] end");
  EXPECT_EQ(redact("curl -H 'Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.payload.sig'", {}),
            "curl -H 'Authorization: Bearer [REDACTED]'");
  EXPECT_EQ(redact("a\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk\n"
                   "-----END OPENSSH PRIVATE KEY-----\nz",
                   {}),
            "a\n[REDACTED]\nz");
  // Look-alikes that are no credential stay: too short, or inside a word.
  for (const char* text : {"sk-short", "the task-abcdefghijklmnopqrstuvwxyz list", "AKIA-not-a-key",
                           "Bearer token", "-----BEGIN PUBLIC KEY-----\nx"}) {
    EXPECT_EQ(redact(text, {}), text);
  }
}

TEST(RedactionTest, ASecretIsFoundAsJsonWritesItInAString) {
  const std::string secret = "pa\"ss\\word/0123\n";
  EXPECT_EQ(redact(R"({"p":"pa\"ss\\word/0123\n"})", {secret}), R"({"p":"[REDACTED]"})");
  EXPECT_EQ(redact(R"({"p":"pa\"ss\\word\/0123\n"})", {secret}), R"({"p":"[REDACTED]"})");
  EXPECT_EQ(redact("raw " + secret, {secret}), "raw [REDACTED]");
  EXPECT_EQ(redact(R"(["\u0001-control-\u001f"])", {"\x01-control-\x1f"}), R"(["[REDACTED]"])");
}

TEST(RedactionTest, ASummaryIsRedactedBeforeItIsCut) {
  const std::string secret = "Cfg-Secret-0123456789";
  const std::string key = "sk-ant-api03-" + std::string(30, 'K');
  std::string text = std::string(90, 'a') + secret + " " + key;
  for (std::size_t limit = 85; limit < text.size(); ++limit) {
    std::string summary = redacted_summary(text, {secret}, limit);
    EXPECT_LE(summary.size(), limit + 3) << limit;
    EXPECT_EQ(summary.find("Cfg-"), std::string::npos) << summary;
    EXPECT_EQ(summary.find("sk-"), std::string::npos) << summary;
    // A cut moves to before a mark it would split: a mark is whole or not there.
    std::size_t mark = summary.find('[');
    if (mark != std::string::npos) {
      EXPECT_EQ(summary.compare(mark, 10, "[REDACTED]"), 0) << summary;
    }
  }
  EXPECT_EQ(redacted_summary("short", {secret}, 10), "short");
  // Nor is a UTF-8 character split.
  EXPECT_EQ(redacted_summary("ab\xC3\xA9"
                             "cd",
                             {}, 3),
            "ab...");
}

TEST(RedactionTest, ValuesAreRedactedOnTheirDecodedStrings) {
  const std::string secret = "pa\"ss\\word-0123";
  Poco::Dynamic::Var input =
      json(R"({"command":"login","options":{"password":"pa\"ss\\word-0123","pin":12345678901,)"
           R"("pa\"ss\\word-0123":["x pa\"ss\\word-0123 y"]}})");
  EXPECT_EQ(redacted_value_summary(input, {secret, "12345678901"}, 4000),
            R"({"command":"login","options":{"[REDACTED]":["x [REDACTED] y"],"password":)"
            R"("[REDACTED]","pin":"[REDACTED]"}})");
  EXPECT_EQ(
      redacted_value_summary(Poco::Dynamic::Var("token sk-ant-api03-0123456789abcdef"), {}, 4000),
      "token [REDACTED]")
      << "a string as it is";
  EXPECT_EQ(redacted_value_summary(Poco::Dynamic::Var(), {secret}, 4000), "");
  // A secret across the cut of the JSON text leaves nothing of it.
  std::string pad(40, 'p');
  std::string summary =
      redacted_value_summary(json(R"({"k":")" + pad + R"(pa\"ss\\word-0123"})"), {secret}, 50);
  EXPECT_EQ(summary, "{\"k\":\"" + pad + "...");
}

}  // namespace
