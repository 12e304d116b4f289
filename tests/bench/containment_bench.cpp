// containment_bench — what containment's decision adds to each tool call of a wrapped
// agent, in process: bringing the agent's spend up to date from its transcript (one new
// model request per call, on transcripts of growing length), admitting the call and
// completing it under every limit at once (cost ceiling, steps, retries, timeout, a
// circuit breaker and a budget window), and encoding the state its ledger record
// carries. Prints the mean of each per call, in microseconds.
//
//   containment_bench [--requests N]   (largest transcript; default 10,000 requests)
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "hooks/agent_session_state.hpp"
#include "hooks/agent_spend.hpp"
#include "hooks/run_slice_types.hpp"
#include "sandbox/containment.hpp"
#include "sandbox/session.hpp"
#include "test_support.hpp"

namespace {

using Clock = std::chrono::steady_clock;

double micros_since(Clock::time_point start) {
  return std::chrono::duration<double, std::micro>(Clock::now() - start).count();
}

// One model request as Claude Code writes it, asking for tool call n.
std::string request_line(std::size_t n) {
  std::string id = std::to_string(n);
  return "{\"parentUuid\":\"p\",\"isSidechain\":false,\"type\":\"assistant\",\"requestId\":"
         "\"req_" +
         id + "\",\"message\":{\"id\":\"msg_" + id +
         "\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"claude-sonnet-4-6\","
         "\"content\":[{\"type\":\"tool_use\",\"id\":\"toolu_" +
         id +
         "\",\"name\":\"Bash\",\"input\":{\"command\":\"make test\",\"description\":\"run the "
         "tests\"}}],\"stop_reason\":\"tool_use\",\"usage\":{\"input_tokens\":3,"
         "\"cache_creation_input_tokens\":1200,\"cache_read_input_tokens\":45000,"
         "\"cache_creation\":{\"ephemeral_5m_input_tokens\":1200,\"ephemeral_1h_input_tokens\":0},"
         "\"output_tokens\":180}},\"uuid\":\"u" +
         id + "\",\"timestamp\":\"2026-11-23T10:00:00.000Z\"}\n";
}

// Its tool result, which the transcript holds too (and the meter skips unparsed).
std::string result_line(std::size_t n) {
  return "{\"type\":\"user\",\"message\":{\"role\":\"user\",\"content\":[{\"type\":"
         "\"tool_result\",\"tool_use_id\":\"toolu_" +
         std::to_string(n) + "\",\"content\":\"" + std::string(2000, 'x') + "\"}]}}\n";
}

}  // namespace

int main(int argc, char** argv) {
  std::size_t max = 10000;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--requests" && i + 1 < argc) {
      max = std::strtoull(argv[++i], nullptr, 10);
    } else {
      std::fprintf(stderr, "usage: containment_bench [--requests N]\n");
      return 2;
    }
  }
  hooks::register_agent_run_slice_types();
  testing_support::TempDir dir("shadowbox-containment-bench");
  boost::filesystem::path transcript = dir / "session.jsonl";
  policy::ExecutionConfig config;
  config.max_cost_usd = 1e9;
  config.max_steps = 1u << 30;
  config.max_retries_total = 1u << 30;
  config.timeout = std::chrono::hours(24);
  config.circuit_breaker = policy::CircuitBreakerConfig{5, std::chrono::seconds(30)};
  config.budget_window = policy::BudgetWindowConfig{std::chrono::minutes(5), 1u << 30, 1e9};
  policy::ExecutionContext context(config);
  sandbox::Session session;
  hooks::SpendMeter meter(runs::PriceTable::defaults(), dir / "agent-cost.json");

  std::printf("per tool call, mean over the last 100 calls before each size (us)\n");
  std::printf("%10s %14s %12s %12s %10s\n", "requests", "spend update", "admit+done", "record",
              "total");
  std::ofstream out(transcript.string(), std::ios::app);
  std::size_t next_report = 100;
  double spend = 0, admit = 0, record = 0;
  for (std::size_t n = 1; n <= max; ++n) {
    out << request_line(n);
    out.flush();
    Clock::time_point t0 = Clock::now();
    meter.update(session, &context, {transcript}, "toolu_" + std::to_string(n));
    double t_spend = micros_since(t0);
    t0 = Clock::now();
    policy::Admission a =
        context.admit(policy::NodeKind::kTool, {.operation_name = "Bash", .key = "Bash"});
    context.complete(a.node_id, {true, 0, "", false, "Bash"});
    double t_admit = micros_since(t0);
    t0 = Clock::now();
    sandbox::record_containment(session, context.state());
    std::string json = session.snapshot({}, /*include_all=*/true).to_json();
    double t_record = micros_since(t0);
    out << result_line(n);
    if (n + 100 > next_report) {
      spend += t_spend;
      admit += t_admit;
      record += t_record;
    }
    if (n == next_report) {
      std::printf("%10zu %12.1fus %10.1fus %10.1fus %8.1fus\n", n, spend / 100, admit / 100,
                  record / 100, (spend + admit + record) / 100);
      spend = admit = record = 0;
      next_report *= 10;
      if (json.empty()) return 1;
    }
  }
  return 0;
}
