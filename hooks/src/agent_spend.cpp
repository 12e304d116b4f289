#include "hooks/agent_spend.hpp"

#include <algorithm>
#include <mutex>
#include <set>
#include <thread>

#include <Poco/JSON/Array.h>
#include <Poco/JSON/Object.h>

#include "fsnap/error.hpp"
#include "hooks/agent_session_state.hpp"
#include "hooks/reported_cost.hpp"
#include "sandbox/slice_types.hpp"

namespace hooks {

namespace fs = boost::filesystem;
using Poco::Dynamic::Var;
using Poco::JSON::Array;
using Poco::JSON::Object;

void register_agent_spend_slice_type() {
  static std::once_flag once;
  std::call_once(once, [] {
    sandbox::SliceTypes::add<AgentSpend>(
        "agent.spend", sandbox::SlicePolicy::kLog,
        [](const AgentSpend& s) -> Var {
          Object::Ptr o = new Object(Poco::JSON_PRESERVE_KEY_ORDER);
          o->set("transcript_usd", s.transcript_usd);
          o->set("reported_usd", s.reported_usd);
          o->set("charged_usd", s.charged_usd);
          o->set("requests", s.requests);
          Array::Ptr unknown = new Array;
          for (const std::string& m : s.unknown_models) unknown->add(m);
          o->set("unknown_models", unknown);
          return o;
        },
        [](const Var& v) {
          Object::Ptr o = v.extract<Object::Ptr>();
          AgentSpend s;
          s.transcript_usd = o->optValue<double>("transcript_usd", 0);
          s.reported_usd = o->optValue<double>("reported_usd", 0);
          s.charged_usd = o->optValue<double>("charged_usd", 0);
          s.requests = o->optValue<std::uint64_t>("requests", 0);
          if (Array::Ptr unknown = o->getArray("unknown_models")) {
            for (std::size_t i = 0; i < unknown->size(); ++i) {
              s.unknown_models.push_back(
                  unknown->getElement<std::string>(static_cast<unsigned>(i)));
            }
          }
          return s;
        });
    // Sessions stored before the slice was named for every agent.
    sandbox::SliceTypes::add_old_name("agent.spend", "claude_code.spend");
  });
}

std::optional<AgentSpend> agent_spend(const sandbox::SessionSnapshot& session) {
  statekit::Slice<AgentSpend> slice = session.slice<AgentSpend>();
  if (slice.empty()) return std::nullopt;
  return *slice.latest();
}

SpendMeter::SpendMeter(runs::PriceTable prices, fs::path reported_file)
    : reported_file_(std::move(reported_file)), usage_(std::move(prices)) {}

bool SpendMeter::must_wait_for(const std::string& call_id,
                               const policy::ExecutionContext* containment) const {
  if (call_id.empty() || containment == nullptr || usage_.has_tool_call(call_id)) return false;
  const std::optional<double>& ceiling = containment->config().max_cost_usd;
  if (!ceiling) return false;
  double largest = usage_.largest_request_usd();
  if (largest == 0) return true;  // nothing to estimate the request by
  return containment->state().cost_usd + 2 * largest >= *ceiling;
}

std::vector<std::string> SpendMeter::update(sandbox::Session& session,
                                            policy::ExecutionContext* containment,
                                            const std::vector<fs::path>& transcripts,
                                            const std::string& call_id) {
  std::optional<AgentSpend> recorded = session.latest<AgentSpend>();
  // A session that counted nothing yet, where this meter has counted: not the session
  // this meter read for (a run of the same name made anew, or one rolled back to before
  // its first count). What it read is forgotten, and read again for this one.
  if (!recorded && usage_.cost().requests > 0) usage_.reset();
  AgentSpend before = recorded.value_or(AgentSpend{});
  usage_.update(transcripts);
  if (must_wait_for(call_id, containment)) {
    auto until = std::chrono::steady_clock::now() + max_wait_;
    while (!usage_.has_tool_call(call_id) && std::chrono::steady_clock::now() < until) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
      usage_.update(transcripts);
    }
  }
  const TranscriptUsage::Cost& cost = usage_.cost();
  AgentSpend now = before;
  // Neither figure goes down: a transcript restored from an older preserved HOME, or
  // a process that has not seen every file, must not undo what was counted.
  now.transcript_usd = std::max(before.transcript_usd, cost.usd);
  now.requests = std::max<std::uint64_t>(before.requests, cost.requests);
  now.reported_usd = std::max(before.reported_usd, read_reported_cost(reported_file_));
  now.charged_usd = std::max({before.charged_usd, now.transcript_usd, now.reported_usd});
  std::vector<std::string> new_unknown;
  for (const std::string& model : cost.unknown_models) {
    if (std::find(now.unknown_models.begin(), now.unknown_models.end(), model) ==
        now.unknown_models.end()) {
      now.unknown_models.push_back(model);
      new_unknown.push_back(model);
    }
  }
  if (now == before) return new_unknown;
  if (containment != nullptr && now.charged_usd > before.charged_usd) {
    containment->charge(now.charged_usd - before.charged_usd);
  }
  session.register_slice<AgentSpend>(sandbox::SlicePolicy::kLog);
  session.seed<AgentSpend>({now});
  return new_unknown;
}

std::string unpriced_model_warning(const std::string& model) {
  return "the model " + fsnap::quote_input(model) +
         " has no price in policy.prices; its requests are counted at the highest price of "
         "each kind of token";
}

std::vector<fs::path> run_transcripts(const sandbox::Session& session, const fs::path& current) {
  std::set<std::string> seen;
  std::vector<fs::path> out;
  auto add = [&](const fs::path& transcript) {
    if (transcript.empty() || !seen.insert(transcript.string()).second) return;
    for (fs::path& file : session_transcripts(transcript)) out.push_back(std::move(file));
  };
  statekit::Slice<AgentSession> sessions = session.all<AgentSession>();
  for (std::size_t i = 0; i < sessions.size(); ++i) add(sessions[i].transcript_path);
  add(current);
  return out;
}

}  // namespace hooks
