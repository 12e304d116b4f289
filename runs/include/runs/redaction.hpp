// Secret redaction: the values of credential variables (config run.secrets), and
// anything shaped like a well-known credential — Anthropic, OpenAI, Google, GitHub,
// GitLab and Slack tokens, AWS access key ids, HTTP bearer tokens, PEM private key
// blocks (a login refreshed during a run has values no variable holds) — never enter
// the store's records: not ledger records, not preserved agent data. Workspace files
// are captured as they are (they are the user's data).
//
// A record keeps a summary of a tool call's input or result, cut to a few thousand
// bytes. It is redacted before it is cut — a cut inside a secret would leave a prefix
// no pattern recognises — and, where it is JSON, on the decoded strings: JSON writes a
// '"' or '\' in a secret escaped, and the escaped text is not the secret.
//
// Thread-safety: pure functions.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <Poco/Dynamic/Var.h>

namespace runs {

// Values shorter than this are not redacted (they would match ordinary text).
inline constexpr std::size_t kMinSecretLength = 8;

// Anthropic credentials start with this (sk-ant-api03-..., sk-ant-oat01-..., ...).
inline constexpr const char* kAnthropicTokenPrefix = "sk-ant-";
// ... and have at least this many token characters ([A-Za-z0-9_-]) after it.
inline constexpr std::size_t kMinAnthropicTokenBody = 12;

// The text that replaces a secret.
inline constexpr const char* kRedactedMark = "[REDACTED]";

// text with every occurrence of each secret — as it is, or as JSON writes it inside a
// string ('"', '\' and control characters escaped; '/' too, as some writers do) — and
// every credential recognised by its shape, replaced by kRedactedMark.
std::string redact(std::string text, const std::vector<std::string>& secrets);
// value (decoded JSON) with every string in it, object keys too, redacted (and a number
// that is a secret replaced by the string kRedactedMark).
Poco::Dynamic::Var redact_value(const Poco::Dynamic::Var& value,
                                const std::vector<std::string>& secrets);
// text redacted, then cut to at most limit bytes ("..." marks a cut). A cut never
// splits a kRedactedMark (it moves to before the mark) or a UTF-8 character.
std::string redacted_summary(std::string text, const std::vector<std::string>& secrets,
                             std::size_t limit);
// What a record keeps of value (decoded JSON; empty: ""): a string as it is, anything
// else as compact JSON, redacted as redact_value redacts it, then cut as
// redacted_summary cuts.
std::string redacted_value_summary(const Poco::Dynamic::Var& value,
                                   const std::vector<std::string>& secrets, std::size_t limit);
// The values of the named environment variables that are set and non-empty.
std::vector<std::string> secret_values(const std::vector<std::string>& names);
// The same in another process's environment: lookup gives a variable's value, or null.
std::vector<std::string> secret_values(
    const std::vector<std::string>& names,
    const std::function<const char*(const std::string&)>& lookup);

}  // namespace runs
