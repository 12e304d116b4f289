#include "run_figures.hpp"

#include <cstdio>

#include <Poco/JSON/Array.h>

#include "fsnap/path_quoting.hpp"

namespace cli {

std::string cost_text(double usd, const std::vector<std::string>& unpriced_models) {
  char text[48];
  std::snprintf(text, sizeof text, "%s%.4f", unpriced_models.empty() ? "" : "~", usd);
  return text;
}

std::string figures_line(const runs::RunStats& f, const std::vector<std::string>& unpriced_models) {
  auto n = [](std::size_t count, const char* one, const char* many) {
    return std::to_string(count) + " " + (count == 1 ? one : many);
  };
  std::string line = n(f.calls, "call", "calls") + ": " + n(f.steps, "step", "steps") + " (" +
                     std::to_string(f.failed) + " failed, " + std::to_string(f.rolled_back) +
                     " rolled back), " + std::to_string(f.refused) + " refused, " +
                     std::to_string(f.agent_denied) + " denied by the agent; cost $" +
                     cost_text(f.cost_usd, {});
  if (unpriced_models.empty()) return line;
  line.insert(line.rfind('$'), "~");
  std::string models;
  for (const std::string& m : unpriced_models) {
    models += (models.empty() ? "" : ", ") + fsnap::quote_input(m);
  }
  return line + " (an estimate: " + models + (unpriced_models.size() == 1 ? " has" : " have") +
         " no price in policy.prices)";
}

void set_figures_json(Poco::JSON::Object& out, const runs::RunStats& f,
                      const std::vector<std::string>& unpriced_models) {
  out.set("cost_usd", f.cost_usd);
  out.set("cost_exact", unpriced_models.empty());
  Poco::JSON::Array::Ptr unpriced = new Poco::JSON::Array;
  for (const std::string& m : unpriced_models) unpriced->add(m);
  out.set("unpriced_models", unpriced);
  out.set("calls", f.calls);
  out.set("steps", f.steps);
  out.set("failed_calls", f.failed);
  out.set("rolled_back_calls", f.rolled_back);
  out.set("refused_calls", f.refused);
  out.set("agent_denied_calls", f.agent_denied);
}

}  // namespace cli
