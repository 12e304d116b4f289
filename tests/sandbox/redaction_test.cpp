// Secret redaction: configured secret values, and Anthropic credentials by their shape
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

}  // namespace
