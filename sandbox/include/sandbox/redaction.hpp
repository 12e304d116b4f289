// Secret redaction: the values of credential variables (config run.secrets), and
// anything shaped like a well-known credential — Anthropic, OpenAI, Google, GitHub,
// GitLab and Slack tokens, AWS access key ids, HTTP bearer tokens, PEM private key
// blocks (a login refreshed during a run has values no variable holds) — never enter
// the store's records: not ledger records, not preserved agent data. Workspace files
// are captured as they are (they are the user's data).
//
// Thread-safety: pure functions.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace sandbox {

// Values shorter than this are not redacted (they would match ordinary text).
inline constexpr std::size_t kMinSecretLength = 8;

// Anthropic credentials start with this (sk-ant-api03-..., sk-ant-oat01-..., ...).
inline constexpr const char* kAnthropicTokenPrefix = "sk-ant-";
// ... and have at least this many token characters ([A-Za-z0-9_-]) after it.
inline constexpr std::size_t kMinAnthropicTokenBody = 12;

// text with every occurrence of each secret, and every credential recognised by its
// shape, replaced by "[REDACTED]".
std::string redact(std::string text, const std::vector<std::string>& secrets);
// The values of the named environment variables that are set and non-empty.
std::vector<std::string> secret_values(const std::vector<std::string>& names);
// The same in another process's environment: lookup gives a variable's value, or null.
std::vector<std::string> secret_values(
    const std::vector<std::string>& names,
    const std::function<const char*(const std::string&)>& lookup);

}  // namespace sandbox
