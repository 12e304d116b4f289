#include "sandbox/redaction.hpp"

#include <cstdlib>

namespace sandbox {

namespace {

const std::string kMark = "[REDACTED]";

bool is_token_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '_';
}

// text with every Anthropic credential (kAnthropicTokenPrefix and enough token
// characters after it) replaced by kMark.
std::string redact_anthropic_tokens(std::string text) {
  const std::string prefix = kAnthropicTokenPrefix;
  for (std::size_t at = text.find(prefix); at != std::string::npos; at = text.find(prefix, at)) {
    std::size_t end = at + prefix.size();
    while (end < text.size() && is_token_char(text[end])) ++end;
    if (end - at - prefix.size() >= kMinAnthropicTokenBody) {
      text.replace(at, end - at, kMark);
      at += kMark.size();
    } else {
      at = end;
    }
  }
  return text;
}

}  // namespace

std::string redact(std::string text, const std::vector<std::string>& secrets) {
  for (const std::string& secret : secrets) {
    if (secret.size() < kMinSecretLength) continue;
    for (std::size_t at = text.find(secret); at != std::string::npos;
         at = text.find(secret, at + kMark.size())) {
      text.replace(at, secret.size(), kMark);
    }
  }
  return redact_anthropic_tokens(std::move(text));
}

std::vector<std::string> secret_values(const std::vector<std::string>& names) {
  std::vector<std::string> out;
  for (const std::string& name : names) {
    const char* value = std::getenv(name.c_str());
    if (value != nullptr && *value != '\0') out.emplace_back(value);
  }
  return out;
}

}  // namespace sandbox
