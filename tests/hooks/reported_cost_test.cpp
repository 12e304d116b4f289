// ReportedCost: the cost_usd of Claude Code's api_request events in OTLP/HTTP JSON
// exports, each event counted once, the total kept in a file hook processes read.
#include <gtest/gtest.h>
#include <boost/filesystem.hpp>

#include "fsnap/error.hpp"
#include "hooks/reported_cost.hpp"
#include "test_support.hpp"

namespace {

// One log record as Claude Code 2.1.330 exports it (attributes trimmed).
std::string record(const std::string& event, int sequence, const std::string& cost) {
  return "{\"timeUnixNano\":\"1795447541937000000\",\"body\":{\"stringValue\":\"claude_code." +
         event +
         "\"},\"attributes\":["
         "{\"key\":\"session.id\",\"value\":{\"stringValue\":\"s-1\"}},"
         "{\"key\":\"event.name\",\"value\":{\"stringValue\":\"" +
         event +
         "\"}},"
         "{\"key\":\"event.timestamp\",\"value\":{\"stringValue\":\"2026-11-23T15:25:41.937Z\"}},"
         "{\"key\":\"event.sequence\",\"value\":{\"intValue\":" +
         std::to_string(sequence) +
         "}},"
         "{\"key\":\"model\",\"value\":{\"stringValue\":\"claude-opus-5-5\"}},"
         "{\"key\":\"cost_usd\",\"value\":" +
         cost + "}]}";
}

std::string export_of(const std::vector<std::string>& records) {
  std::string joined;
  for (const std::string& r : records) joined += (joined.empty() ? "" : ",") + r;
  return "{\"resourceLogs\":[{\"resource\":{\"attributes\":[]},\"scopeLogs\":[{\"scope\":{"
         "\"name\":\"com.anthropic.claude_code.events\"},\"logRecords\":[" +
         joined + "]}]}]}";
}

TEST(ReportedCostTest, SumsApiRequestEventsOnceEach) {
  testing_support::TempDir dir;
  boost::filesystem::path file = dir / "agent-cost.json";
  hooks::ReportedCost cost(file, 1.0);
  EXPECT_EQ(hooks::read_reported_cost(file), 0) << "no file yet";
  EXPECT_EQ(cost.add_export(export_of({record("api_request", 6, "{\"doubleValue\":0.25}"),
                                       record("tool_result", 7, "{\"doubleValue\":9}"),
                                       record("api_request", 9, "{\"intValue\":\"2\"}")})),
            2u);
  EXPECT_DOUBLE_EQ(cost.usd(), 3.25);
  EXPECT_DOUBLE_EQ(hooks::read_reported_cost(file), 3.25);
  // An exporter retrying sends the same events again.
  EXPECT_EQ(cost.add_export(export_of({record("api_request", 6, "{\"doubleValue\":0.25}")})), 0u);
  EXPECT_DOUBLE_EQ(cost.usd(), 3.25);
}

TEST(ReportedCostTest, OnlyTheAttributesOfALogRecordCount) {
  testing_support::TempDir dir;
  hooks::ReportedCost cost(dir / "agent-cost.json", 0);
  // The resource's attributes look like an api_request's; a record's attribute holds a
  // nested list; one attribute has its value before its key; one record is an array's.
  std::string body =
      "{\"resourceLogs\":[{\"resource\":{\"attributes\":["
      "{\"key\":\"event.name\",\"value\":{\"stringValue\":\"api_request\"}},"
      "{\"key\":\"cost_usd\",\"value\":{\"doubleValue\":100}}]},"
      "\"scopeLogs\":[{\"scope\":{},\"logRecords\":[" +
      record("api_request", 1, "{\"doubleValue\":0.5}") +
      ",{\"attributes\":[{\"value\":{\"stringValue\":\"api_request\"},\"key\":\"event.name\"},"
      "{\"key\":\"extra\",\"value\":{\"kvlistValue\":{\"values\":[{\"key\":\"cost_usd\","
      "\"value\":{\"doubleValue\":50}}]}}},"
      "{\"key\":\"session.id\",\"value\":{\"stringValue\":\"s-2\"}},"
      "{\"key\":\"cost_usd\",\"value\":{\"stringValue\":\"0.125\"}}]}]}]}]}";
  EXPECT_EQ(cost.add_export(body), 2u);
  EXPECT_DOUBLE_EQ(cost.usd(), 0.625);
}

TEST(ReportedCostTest, SomethingElseIsAnErrorAndChangesNothing) {
  testing_support::TempDir dir;
  hooks::ReportedCost cost(dir / "agent-cost.json", 0);
  EXPECT_THROW(cost.add_export("not json"), fsnap::Error);
  EXPECT_THROW(cost.add_export("{\"resourceSpans\":[]}"), fsnap::Error);
  EXPECT_EQ(cost.usd(), 0);
  testing_support::write_file(dir / "garbage.json", "{{{");
  EXPECT_EQ(hooks::read_reported_cost(dir / "garbage.json"), 0);
}

}  // namespace
