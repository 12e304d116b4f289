#include "session_file.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <optional>
#include <sstream>

#include <Poco/JSON/ParseHandler.h>
#include <Poco/JSON/Parser.h>
#include <boost/filesystem/operations.hpp>

#include "fsnap/atomic_file.hpp"
#include "fsnap/id_source.hpp"
#include "sandbox/errors.hpp"

namespace hooks::session_file {

namespace fs = boost::filesystem;
using sandbox::Error;
using sandbox::ErrorCode;

namespace {

// text as a JSON object (keys in order), or null if it is not one.
Poco::JSON::Object::Ptr parse_object(const std::string& text) {
  try {
    Poco::JSON::Parser parser(new Poco::JSON::ParseHandler(/*preserveObjectOrder=*/true));
    Poco::Dynamic::Var v = parser.parse(text);
    if (v.type() == typeid(Poco::JSON::Object::Ptr)) return v.extract<Poco::JSON::Object::Ptr>();
  } catch (const Poco::Exception&) {
  }
  return nullptr;
}

}  // namespace

std::vector<Line> read_lines(const fs::path& file) {
  std::optional<std::string> content = fsnap::read_small_file(file);
  if (!content) throw Error(ErrorCode::kNotFound, "no file " + file.string());
  std::vector<Line> out;
  std::size_t number = 0;
  for (std::size_t start = 0; start < content->size();) {
    std::size_t end = content->find('\n', start);
    bool terminated = end != std::string::npos;
    if (!terminated) end = content->size();
    std::string text = content->substr(start, end - start);
    start = end + 1;
    ++number;
    if (text.find_first_not_of(" \t\r") == std::string::npos) continue;
    Poco::JSON::Object::Ptr object = parse_object(text);
    if (!object) {
      if (!terminated) break;  // being written when the file was copied
      throw Error(ErrorCode::kCorrupt, file.string() + ", line " + std::to_string(number) +
                                           ", is not a JSON object: " + fsnap::quote_input(text));
    }
    out.push_back(Line{number, std::move(text), object});
  }
  return out;
}

std::vector<fs::path> files_below(const fs::path& home, const std::string& root,
                                  const std::function<bool(const std::string&)>& matches) {
  std::vector<fs::path> out;
  boost::system::error_code ec;
  if (!fs::is_directory(home / root, ec)) return out;
  for (fs::recursive_directory_iterator it(home / root, ec), end; !ec && it != end;
       it.increment(ec)) {
    if (!fs::is_regular_file(it->symlink_status(ec))) continue;
    if (matches(it->path().lexically_relative(home).generic_string())) out.push_back(it->path());
  }
  if (ec)
    throw Error(ErrorCode::kIo, "cannot list " + (home / root).string() + ": " + ec.message());
  std::sort(out.begin(), out.end());
  return out;
}

std::string random_uuid(int version) {
  std::string hex = fsnap::IdSource::shared_random()->hex(32);
  if (version == 7) {
    auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                  std::chrono::system_clock::now().time_since_epoch())
                  .count();
    char time[13];
    std::snprintf(time, sizeof time, "%012llx",
                  static_cast<unsigned long long>(ms) & 0xffffffffffffULL);
    hex.replace(0, 12, time);
  }
  hex[12] = static_cast<char>('0' + version);
  hex[16] = "89ab"[hex[16] % 4];  // the variant: 10xx
  return hex.substr(0, 8) + "-" + hex.substr(8, 4) + "-" + hex.substr(12, 4) + "-" +
         hex.substr(16, 4) + "-" + hex.substr(20);
}

std::string utc_now(const char* format, bool with_millis) {
  auto now = std::chrono::system_clock::now();
  std::time_t seconds = std::chrono::system_clock::to_time_t(now);
  std::tm tm{};
  ::gmtime_r(&seconds, &tm);
  char text[64];
  std::size_t n = std::strftime(text, sizeof text, format, &tm);
  std::string out(text, n);
  if (with_millis) {
    auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()) % 1000;
    char millis[8];
    std::snprintf(millis, sizeof millis, ".%03dZ", static_cast<int>(ms.count()));
    out += millis;
  }
  return out;
}

std::optional<std::chrono::system_clock::time_point> parse_utc_time(const std::string& text) {
  std::tm tm{};
  int consumed = 0;
  if (std::sscanf(text.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
                  &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &consumed) != 6 ||
      consumed != 19) {
    return std::nullopt;
  }
  std::size_t at = 19;
  std::chrono::nanoseconds fraction{0};
  if (at < text.size() && text[at] == '.') {
    long long scale = 100000000;
    for (++at; at < text.size() && text[at] >= '0' && text[at] <= '9'; ++at, scale /= 10) {
      fraction += std::chrono::nanoseconds((text[at] - '0') * scale);
    }
  }
  if (at + 1 != text.size() || text[at] != 'Z') return std::nullopt;
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  std::time_t seconds = ::timegm(&tm);
  if (seconds == static_cast<std::time_t>(-1)) return std::nullopt;
  return std::chrono::system_clock::from_time_t(seconds) +
         std::chrono::duration_cast<std::chrono::system_clock::duration>(fraction);
}

std::string json_line(const Poco::JSON::Object::Ptr& o) {
  std::ostringstream out;
  o->stringify(out);
  return out.str();
}

}  // namespace hooks::session_file
