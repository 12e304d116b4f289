// ReportedCost — what each model request cost as the agent reports it itself: Claude
// Code's OpenTelemetry log events (`claude_code.api_request`, with `cost_usd`), which
// `shadowbox run` asks it to export as OTLP/HTTP JSON to the run's loopback server. The
// run's total is kept in <store>/runs/<run>/agent-cost.json, where hook processes of
// either transport read it. An exporter that retries sends an event again: each event
// (session, timestamp, sequence number) counts once.
//
// Thread-safety: add_export may be called from any thread.
#pragma once

#include <cstddef>
#include <mutex>
#include <set>
#include <string>

#include <boost/filesystem/path.hpp>

namespace hooks {

// The agent's own cost reports, summed.
class ReportedCost {
 public:
  // Keeps the total in file, starting from base_usd (what the run's agent reported
  // before a resume).
  ReportedCost(boost::filesystem::path file, double base_usd);

  // Adds the api_request events of one OTLP/JSON logs export and rewrites the file;
  // returns how many were new. Error kInvalidArgument if body is not OTLP JSON, kIo if
  // the file cannot be written.
  std::size_t add_export(const std::string& body);
  // The total so far (USD).
  double usd() const;

 private:
  boost::filesystem::path file_;
  mutable std::mutex mutex_;
  double usd_ = 0;
  std::size_t requests_ = 0;
  std::set<std::string> seen_;
};

// The total kept in file, or 0 if there is none (or it cannot be read).
double read_reported_cost(const boost::filesystem::path& file);

}  // namespace hooks
