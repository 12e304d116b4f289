// readable_event_json and scan_event_name: every valid JSON an agent emits reads, and
// what is not JSON says where.
#include <cmath>

#include <Poco/JSON/Parser.h>

#include <gtest/gtest.h>

#include "hooks/event_json.hpp"
#include "sandbox/errors.hpp"

namespace {

using hooks::readable_event_json;
using hooks::scan_event_name;

// The string value of key in the object json holds, as Poco reads it.
std::string read_string(const std::string& json, const std::string& key) {
  Poco::JSON::Parser parser;
  auto o = parser.parse(readable_event_json(json)).extract<Poco::JSON::Object::Ptr>();
  return o->getValue<std::string>(key);
}

TEST(EventJsonTest, ALoneSurrogateBecomesTheReplacementCharacter) {
  const std::string replacement = "\xef\xbf\xbd";
  EXPECT_EQ(read_string(R"({"s":"a\ud800b"})", "s"), "a" + replacement + "b");
  EXPECT_EQ(read_string(R"({"s":"\udc00"})", "s"), replacement);
  EXPECT_EQ(read_string(R"({"s":"\ud800\u0041"})", "s"), replacement + "A");
  EXPECT_EQ(read_string(R"({"s":"x\ud83d"})", "s"), "x" + replacement);
  // A pair is one character, kept.
  EXPECT_EQ(read_string(R"({"s":"\ud83d\ude00"})", "s"), "\xf0\x9f\x98\x80");
  // An escaped backslash before "ud800" is no escape.
  EXPECT_EQ(read_string(R"({"s":"\\ud800"})", "s"), "\\ud800");
}

TEST(EventJsonTest, PocoAloneRefusesWhatAgentsEmit) {
  // What made events unreadable before: the rewrite is what makes them read.
  Poco::JSON::Parser parser;
  EXPECT_ANY_THROW(parser.parse(R"({"s":"a\ud800b"})"));
  std::string deep = R"({"tool_input":)" + std::string(200, '[') + std::string(200, ']') + "}";
  EXPECT_ANY_THROW(Poco::JSON::Parser().parse(deep));
  EXPECT_NO_THROW(Poco::JSON::Parser().parse(readable_event_json(deep)));
}

TEST(EventJsonTest, ValuesNestedTooDeepBecomeAStringSayingSo) {
  std::string inner = std::string(100000, '[') + "1" + std::string(100000, ']');
  std::string event = R"({"hook_event_name":"PreToolUse","tool_input":{"a":)" + inner + "}}";
  std::string readable = readable_event_json(event);
  Poco::JSON::Parser parser;
  auto o = parser.parse(readable).extract<Poco::JSON::Object::Ptr>();
  EXPECT_EQ(o->getValue<std::string>("hook_event_name"), "PreToolUse");
  std::string kept = readable;
  EXPECT_NE(kept.find("bytes nested deeper than 64 levels"), std::string::npos);
  EXPECT_LT(readable.size(), 1000u);
}

TEST(EventJsonTest, RawControlBytesAndInvalidUtf8InStringsAreMadeValid) {
  EXPECT_EQ(read_string(std::string("{\"s\":\"a\tb\x01\"}"), "s"), "a\tb\x01");
  EXPECT_EQ(read_string(std::string("{\"s\":\"a\xff\"}"), "s"), "a\xef\xbf\xbd");
  EXPECT_EQ(read_string("{\"s\":\"caf\xc3\xa9\"}", "s"), "caf\xc3\xa9");
}

TEST(EventJsonTest, NumbersLiteralsAndWhitespaceAreKept) {
  std::string json = " {\"a\" : [1, -2.5e+3, 0, true, false, null, {}, []] }\n";
  std::string readable = readable_event_json(json);
  EXPECT_EQ(readable, "{\"a\":[1,-2.5e+3,0,true,false,null,{},[]]}");
}

TEST(EventJsonTest, WholeNumbersBeyond64BitsAreReadAsDoubles) {
  // What JSON.stringify writes for 1e20 and -1e20; Poco alone refuses both.
  for (const char* json : {R"({"n":100000000000000000000})", R"({"n":-100000000000000000000})"}) {
    SCOPED_TRACE(json);
    EXPECT_ANY_THROW(Poco::JSON::Parser().parse(json));
    Poco::JSON::Parser parser;
    auto o = parser.parse(readable_event_json(json)).extract<Poco::JSON::Object::Ptr>();
    EXPECT_DOUBLE_EQ(std::abs(o->getValue<double>("n")), 1e20);
  }
  // What fits is kept as it is.
  EXPECT_EQ(readable_event_json(R"({"n":18446744073709551615,"m":-9223372036854775808})"),
            R"({"n":18446744073709551615,"m":-9223372036854775808})");
}

TEST(EventJsonTest, WhatIsNotJsonSaysWhere) {
  for (const char* bad : {"", "{", "{\"a\":}", "{\"a\":1,}", "[1 2]", "{\"a\":\"\\x\"}",
                          "{\"a\":01}", "{} {}", "{\"a\":tru}", "\"unterminated"}) {
    SCOPED_TRACE(bad);
    try {
      readable_event_json(bad);
      ADD_FAILURE() << "accepted";
    } catch (const sandbox::Error& e) {
      EXPECT_EQ(e.code(), sandbox::ErrorCode::kInvalidArgument);
      EXPECT_NE(std::string(e.what()).find("at byte"), std::string::npos) << e.what();
    }
  }
}

TEST(EventJsonTest, TheEventNameIsFoundInABrokenEvent) {
  EXPECT_EQ(scan_event_name(R"({"session_id":"s","hook_event_name":"PreToolUse","tool_input":{)"),
            "PreToolUse");
  EXPECT_EQ(scan_event_name(R"({ "hook_event_name" : "BeforeTool" , "x": [[[)"), "BeforeTool");
  // Only the top-level key counts: not one inside an input, nor inside a string.
  EXPECT_EQ(scan_event_name(
                R"({"tool_input":{"hook_event_name":"Stop"},"hook_event_name":"PostToolUse"})"),
            "PostToolUse");
  EXPECT_EQ(scan_event_name(R"({"s":"\"hook_event_name\":\"Stop\"",)"), "");
  EXPECT_EQ(scan_event_name("not json at all"), "");
}

}  // namespace
