#include "hooks/event_json.hpp"

#include <cstdint>
#include <vector>

#include "fsnap/path_quoting.hpp"
#include "sandbox/errors.hpp"

namespace hooks {

namespace {

using sandbox::Error;
using sandbox::ErrorCode;

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool is_high_surrogate(std::uint32_t u) {
  return u >= 0xD800 && u <= 0xDBFF;
}
bool is_low_surrogate(std::uint32_t u) {
  return u >= 0xDC00 && u <= 0xDFFF;
}

// One pass over a JSON text, copying it to out with the rewrites readable_event_json
// promises. Containers are tracked on a stack of its own: no recursion.
class Rewriter {
 public:
  explicit Rewriter(std::string_view in) : in_(in) { out_.reserve(in.size()); }

  std::string run() {
    document();
    skip_space();
    if (pos_ != in_.size()) fail("more after the JSON value");
    return std::move(out_);
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw Error(ErrorCode::kInvalidArgument,
                "not JSON: " + what + " at byte " + std::to_string(pos_));
  }

  char peek() const { return pos_ < in_.size() ? in_[pos_] : '\0'; }
  bool at_end() const { return pos_ >= in_.size(); }

  void skip_space() {
    while (!at_end() &&
           (in_[pos_] == ' ' || in_[pos_] == '\t' || in_[pos_] == '\n' || in_[pos_] == '\r')) {
      ++pos_;
    }
  }

  void take(char c) {
    out_ += c;
    ++pos_;
  }

  void document() {
    std::vector<char> open;  // '{' or '[' of each container we are in
    bool want_value = true;
    for (;;) {
      if (want_value) {
        skip_space();
        char c = peek();
        if (c == '{' || c == '[') {
          if (open.size() + 1 > kMaxEventDepth) {
            elide();
          } else {
            take(c);
            open.push_back(c);
            skip_space();
            char close = c == '{' ? '}' : ']';
            if (peek() == close) {
              take(close);
              open.pop_back();
            } else {
              if (c == '{') key();
              continue;  // a first value
            }
          }
        } else {
          scalar();
        }
      }
      // After a value.
      if (open.empty()) return;
      skip_space();
      char close = open.back() == '{' ? '}' : ']';
      if (peek() == ',') {
        take(',');
        if (open.back() == '{') key();
        want_value = true;
        continue;
      }
      if (peek() != close) fail(std::string("expected ',' or '") + close + "'");
      take(close);
      open.pop_back();
      want_value = false;
    }
  }

  void key() {
    skip_space();
    if (peek() != '"') fail("expected a string key");
    string();
    skip_space();
    if (peek() != ':') fail("expected ':'");
    take(':');
  }

  void scalar() {
    char c = peek();
    if (c == '"') return string();
    if (c == '-' || (c >= '0' && c <= '9')) return number();
    for (std::string_view word : {"true", "false", "null"}) {
      if (in_.substr(pos_, word.size()) == word) {
        out_ += word;
        pos_ += word.size();
        return;
      }
    }
    fail(at_end() ? "unexpected end" : "unexpected character");
  }

  void digits() {
    if (!(peek() >= '0' && peek() <= '9')) fail("expected a digit");
    while (peek() >= '0' && peek() <= '9') take(peek());
  }

  void number() {
    std::size_t start = out_.size();
    if (peek() == '-') take('-');
    if (peek() == '0') {
      take('0');
    } else {
      digits();
    }
    bool whole = true;
    if (peek() == '.') {
      whole = false;
      take('.');
      digits();
    }
    if (peek() == 'e' || peek() == 'E') {
      whole = false;
      take(peek());
      if (peek() == '+' || peek() == '-') take(peek());
      digits();
    }
    // Poco refuses a whole number beyond 64 bits (JSON.stringify writes 1e20 as
    // 100000000000000000000): it is read as the double it is.
    if (whole && !fits_64_bits(std::string_view(out_).substr(start))) out_ += ".0";
  }

  static bool fits_64_bits(std::string_view digits) {
    bool negative = !digits.empty() && digits.front() == '-';
    if (negative) digits.remove_prefix(1);
    std::string_view limit = negative ? "9223372036854775808" : "18446744073709551615";
    return digits.size() < limit.size() || (digits.size() == limit.size() && digits <= limit);
  }

  // The four hex digits of a \u escape at in_[at], or -1.
  long code_unit(std::size_t at) const {
    if (at + 4 > in_.size()) return -1;
    long u = 0;
    for (std::size_t k = 0; k < 4; ++k) {
      int d = hex_digit(in_[at + k]);
      if (d < 0) return -1;
      u = u * 16 + d;
    }
    return u;
  }

  void string() {
    take('"');
    for (;;) {
      if (at_end()) fail("unterminated string");
      unsigned char c = static_cast<unsigned char>(in_[pos_]);
      if (c == '"') {
        take('"');
        return;
      }
      if (c == '\\') {
        escape();
        continue;
      }
      if (c < 0x20) {
        static const char* kHex = "0123456789abcdef";
        out_ += "\\u00";
        out_ += kHex[c >> 4];
        out_ += kHex[c & 15];
        ++pos_;
        continue;
      }
      if (c < 0x80) {
        take(static_cast<char>(c));
        continue;
      }
      if (std::size_t n = fsnap::utf8_sequence_length(in_, pos_)) {
        out_.append(in_.substr(pos_, n));
        pos_ += n;
      } else {
        out_ += "\\ufffd";
        ++pos_;
      }
    }
  }

  void escape() {
    if (pos_ + 1 >= in_.size()) fail("unterminated string");
    char e = in_[pos_ + 1];
    if (e != 'u') {
      if (std::string_view("\"\\/bfnrt").find(e) == std::string_view::npos) {
        fail("invalid escape");
      }
      out_.append(in_.substr(pos_, 2));
      pos_ += 2;
      return;
    }
    long u = code_unit(pos_ + 2);
    if (u < 0) fail("invalid \\u escape");
    if (is_high_surrogate(static_cast<std::uint32_t>(u)) && pos_ + 12 <= in_.size() &&
        in_[pos_ + 6] == '\\' && in_[pos_ + 7] == 'u') {
      long low = code_unit(pos_ + 8);
      if (low >= 0 && is_low_surrogate(static_cast<std::uint32_t>(low))) {
        out_.append(in_.substr(pos_, 12));  // a pair: one character
        pos_ += 12;
        return;
      }
    }
    if (is_high_surrogate(static_cast<std::uint32_t>(u)) ||
        is_low_surrogate(static_cast<std::uint32_t>(u))) {
      out_ += "\\ufffd";  // alone, it is no character
    } else {
      out_.append(in_.substr(pos_, 6));
    }
    pos_ += 6;
  }

  // Skips the container at pos_ (nested too deep to keep) and writes what stands for it.
  void elide() {
    std::size_t start = pos_;
    std::size_t depth = 0;
    bool in_string = false;
    for (; pos_ < in_.size(); ++pos_) {
      char c = in_[pos_];
      if (in_string) {
        if (c == '\\') {
          ++pos_;
        } else if (c == '"') {
          in_string = false;
        }
        continue;
      }
      if (c == '"') {
        in_string = true;
      } else if (c == '{' || c == '[') {
        ++depth;
      } else if (c == '}' || c == ']') {
        if (--depth == 0) {
          ++pos_;
          out_ += "\"[" + std::to_string(pos_ - start) + " bytes nested deeper than " +
                  std::to_string(kMaxEventDepth) + " levels]\"";
          return;
        }
      }
    }
    fail("unterminated container");
  }

  std::string_view in_;
  std::size_t pos_ = 0;
  std::string out_;
};

}  // namespace

std::string readable_event_json(std::string_view json) {
  return Rewriter(json).run();
}

std::string scan_event_name(std::string_view json) {
  static constexpr std::string_view kKey = "\"hook_event_name\"";
  std::size_t depth = 0;
  for (std::size_t i = 0; i < json.size(); ++i) {
    char c = json[i];
    if (c == '{' || c == '[') {
      ++depth;
    } else if (c == '}' || c == ']') {
      if (depth > 0) --depth;
    } else if (c == '"') {
      if (depth == 1 && json.compare(i, kKey.size(), kKey) == 0) {
        std::size_t at = i + kKey.size();
        while (at < json.size() &&
               (json[at] == ' ' || json[at] == '\t' || json[at] == '\n' || json[at] == '\r')) {
          ++at;
        }
        if (at < json.size() && json[at] == ':') {
          ++at;
          while (at < json.size() &&
                 (json[at] == ' ' || json[at] == '\t' || json[at] == '\n' || json[at] == '\r')) {
            ++at;
          }
          if (at < json.size() && json[at] == '"') {
            std::size_t end = at + 1;
            while (end < json.size() && ((json[end] >= 'A' && json[end] <= 'Z') ||
                                         (json[end] >= 'a' && json[end] <= 'z'))) {
              ++end;
            }
            if (end < json.size() && json[end] == '"' && end > at + 1) {
              return std::string(json.substr(at + 1, end - at - 1));
            }
          }
        }
      }
      // Past the string (a key or a value; its brackets are not structure).
      for (++i; i < json.size() && json[i] != '"'; ++i) {
        if (json[i] == '\\') ++i;
      }
    }
  }
  return "";
}

}  // namespace hooks
