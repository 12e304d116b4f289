#include "runs/redaction.hpp"

#include <cstdlib>
#include <sstream>

#include <Poco/JSON/Array.h>
#include <Poco/JSON/Object.h>
#include <Poco/JSON/Stringifier.h>

#include "runs/json_string.hpp"

namespace runs {

namespace {

const std::string kMark = kRedactedMark;

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

// Replaces every occurrence of what in text by kMark.
void replace_all(std::string& text, const std::string& what) {
  for (std::size_t at = text.find(what); at != std::string::npos;
       at = text.find(what, at + kMark.size())) {
    text.replace(at, what.size(), kMark);
  }
}

// text cut to at most limit bytes ("..." marks a cut), never inside a UTF-8 character
// or a kMark (the cut moves to before it).
std::string cut(std::string text, std::size_t limit) {
  if (text.size() <= limit) return text;
  std::size_t at = limit;
  while (at > 0 && (static_cast<unsigned char>(text[at]) & 0xc0) == 0x80) --at;
  std::size_t mark = text.find(kMark, at >= kMark.size() ? at - kMark.size() + 1 : 0);
  if (mark < at) at = mark;
  text.resize(at);
  return text + "...";
}

// value with its strings, object keys and numbers (a secret may be one) redacted.
Poco::Dynamic::Var redacted(const Poco::Dynamic::Var& value,
                            const std::vector<std::string>& secrets) {
  using Poco::JSON::Array;
  using Poco::JSON::Object;
  if (value.type() == typeid(Object::Ptr)) {
    const Object::Ptr& in = value.extract<Object::Ptr>();
    if (in.isNull()) return value;
    Object::Ptr out = new Object;  // keys in their order, as Poco's parser keeps them
    for (const auto& [key, item] : *in) out->set(redact(key, secrets), redacted(item, secrets));
    return out;
  }
  if (value.type() == typeid(Array::Ptr)) {
    const Array::Ptr& in = value.extract<Array::Ptr>();
    if (in.isNull()) return value;
    Array::Ptr out = new Array;
    for (const Poco::Dynamic::Var& item : *in) out->add(redacted(item, secrets));
    return out;
  }
  if (value.isString()) return redact(value.extract<std::string>(), secrets);
  if (value.isNumeric()) {
    std::string text = value.toString();
    if (redact(text, secrets) != text) return kMark;
  }
  return value;
}

}  // namespace

std::string redact(std::string text, const std::vector<std::string>& secrets) {
  for (const std::string& secret : secrets) {
    if (secret.size() < kMinSecretLength) continue;
    // The escaped spellings first: they are the longer, and may hold the secret itself.
    std::string with_slash = json_string_body(secret, /*escape_slash=*/true);
    std::string escaped = json_string_body(secret);
    if (with_slash != escaped) replace_all(text, with_slash);
    if (escaped != secret) replace_all(text, escaped);
    replace_all(text, secret);
  }
  return redact_shapes(std::move(text));
}

Poco::Dynamic::Var redact_value(const Poco::Dynamic::Var& value,
                                const std::vector<std::string>& secrets) {
  return redacted(value, secrets);
}

std::string redacted_summary(std::string text, const std::vector<std::string>& secrets,
                             std::size_t limit) {
  return cut(redact(std::move(text), secrets), limit);
}

std::string redacted_value_summary(const Poco::Dynamic::Var& value,
                                   const std::vector<std::string>& secrets, std::size_t limit) {
  if (value.isEmpty()) return "";
  if (value.isString()) return redacted_summary(value.extract<std::string>(), secrets, limit);
  // Whole, then cut: redaction may shorten what comes before the limit, bringing more
  // of the value into the summary.
  std::ostringstream json;
  Poco::JSON::Stringifier::stringify(redacted(value, secrets), json);
  return cut(json.str(), limit);
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

}  // namespace runs
