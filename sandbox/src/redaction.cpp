#include "sandbox/redaction.hpp"

#include <cstdlib>

namespace sandbox {

namespace {

const std::string kMark = "[REDACTED]";

bool is_token_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '_';
}

bool is_upper_alnum(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

bool is_bearer_char(char c) {
  return is_token_char(c) || c == '.' || c == '~' || c == '+' || c == '/' || c == '=';
}

// A credential recognised by its shape: a prefix at the start of a word, then at least
// min_body characters of its alphabet. keep_prefix: only the body is the secret.
struct Shape {
  const char* prefix;
  bool (*body_char)(char);
  std::size_t min_body;
  bool keep_prefix;
};

constexpr Shape kShapes[] = {
    {kAnthropicTokenPrefix, is_token_char, kMinAnthropicTokenBody, false},  // Anthropic
    {"sk-", is_token_char, 20, false},    // OpenAI and others (sk-..., sk-proj-...)
    {"AKIA", is_upper_alnum, 16, false},  // AWS access key ids
    {"ASIA", is_upper_alnum, 16, false},  // AWS temporary access key ids
    {"AIza", is_token_char, 30, false},   // Google API keys
    {"ghp_", is_token_char, 30, false},   // GitHub tokens
    {"gho_", is_token_char, 30, false},
    {"ghu_", is_token_char, 30, false},
    {"ghs_", is_token_char, 30, false},
    {"ghr_", is_token_char, 30, false},
    {"github_pat_", is_token_char, 22, false},
    {"glpat-", is_token_char, 20, false},  // GitLab
    {"xoxb-", is_token_char, 10, false},   // Slack
    {"xoxp-", is_token_char, 10, false},
    {"xoxa-", is_token_char, 10, false},
    {"Bearer ", is_bearer_char, 20, true},  // HTTP bearer tokens
    {"bearer ", is_bearer_char, 20, true},
};

std::string redact_shape(std::string text, const Shape& shape) {
  const std::string prefix = shape.prefix;
  for (std::size_t at = text.find(prefix); at != std::string::npos; at = text.find(prefix, at)) {
    std::size_t end = at + prefix.size();
    while (end < text.size() && shape.body_char(text[end])) ++end;
    bool word_start = at == 0 || !is_token_char(text[at - 1]);
    if (word_start && end - at - prefix.size() >= shape.min_body) {
      std::size_t from = shape.keep_prefix ? at + prefix.size() : at;
      text.replace(from, end - from, kMark);
      at = from + kMark.size();
    } else {
      at += 1;
    }
  }
  return text;
}

// text with every PEM private key block replaced by kMark.
std::string redact_private_keys(std::string text) {
  const std::string begin = "-----BEGIN ";
  for (std::size_t at = text.find(begin); at != std::string::npos; at = text.find(begin, at)) {
    std::size_t header_end = text.find("-----", at + begin.size());
    if (header_end == std::string::npos) break;
    std::string label = text.substr(at + begin.size(), header_end - at - begin.size());
    if (label.find("PRIVATE KEY") == std::string::npos) {
      at = header_end;
      continue;
    }
    std::string footer = "-----END " + label + "-----";
    std::size_t end = text.find(footer, header_end);
    end = end == std::string::npos ? text.size() : end + footer.size();  // cut off: all of it
    text.replace(at, end - at, kMark);
    at += kMark.size();
  }
  return text;
}

// text with every credential recognised by its shape replaced by kMark.
std::string redact_shapes(std::string text) {
  for (const Shape& shape : kShapes) text = redact_shape(std::move(text), shape);
  return redact_private_keys(std::move(text));
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
  return redact_shapes(std::move(text));
}

std::vector<std::string> secret_values(const std::vector<std::string>& names) {
  return secret_values(names, [](const std::string& name) { return std::getenv(name.c_str()); });
}

std::vector<std::string> secret_values(
    const std::vector<std::string>& names,
    const std::function<const char*(const std::string&)>& lookup) {
  std::vector<std::string> out;
  for (const std::string& name : names) {
    const char* value = lookup(name);
    if (value != nullptr && *value != '\0') out.emplace_back(value);
  }
  return out;
}

}  // namespace sandbox
