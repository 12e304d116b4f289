// Secret redaction: configured secret values, and well-known credentials by their shape
// (a login refreshed during a run has values no configured variable holds).
#include <gtest/gtest.h>

#include "sandbox/redaction.hpp"

namespace {

using sandbox::redact;

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

}  // namespace
