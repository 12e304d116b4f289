// LedgerRun — one run of a workspace whose state lives in its store's ledger: what the
// CLI, the hooks and `shadowbox run` drive tool calls through. It opens the store's
// repository once and shares it with the workspace and the ledger, and puts the
// transaction core (ToolTransactions) on top:
//
//   LedgerRun run(store, {.capture = config.capture, .policy = ..., .run = "r1"});
//   run.transactions().begin({"toolu_1", "Bash", input});
//   ...
//   run.transactions().fail("toolu_1", "exit 1");
//
// Thread-safety: one thread at a time (steps of other processes serialise on the store
// lock).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "fsnap/host_filesystem.hpp"
#include "fsnap/store.hpp"
#include "sandbox/execution_state.hpp"
#include "sandbox/ledger.hpp"
#include "sandbox/rollback_policy.hpp"
#include "sandbox/tool_transactions.hpp"

namespace runs {

// How a LedgerRun is set up.
struct LedgerRunOptions {
  fsnap::CaptureOptions capture;
  sandbox::RollbackPolicy policy;
  std::string run = std::string(fsnap::kDefaultRun);
  fsnap::HostEnv env;                 // repository, clock, ids (defaults if empty)
  std::optional<std::uint64_t> seed;  // of the state's snapshot ids (random if not given)
  // Values redacted from every tool call the session logs (redacting_middleware, which
  // also redacts well-known credential shapes): the config's run.secrets.
  std::vector<std::string> secrets;
  // Slice type name -> the newest items the session keeps (config session.windows).
  // Error kInvalidArgument for a name no registered slice type has.
  std::map<std::string, std::size_t> windows;
};

// A run whose session and boundaries are kept in a store's ledger.
class LedgerRun {
 public:
  // The name under which the state holds the workspace.
  static constexpr const char* kWorkspaceResource = "filesystem";

  LedgerRun(fsnap::Store store, LedgerRunOptions options);
  ~LedgerRun();
  LedgerRun(const LedgerRun&) = delete;
  LedgerRun& operator=(const LedgerRun&) = delete;

  const std::string& run() const { return run_; }
  const fsnap::Store& store() const { return workspace_->store(); }
  fsnap::HostFilesystem& workspace() { return *workspace_; }
  const std::shared_ptr<fsnap::ShadowRepo>& repo() const { return workspace_->shared_repo(); }
  sandbox::Ledger& ledger() { return *ledger_; }
  sandbox::LedgerBoundaryLog& log() { return *log_; }
  sandbox::ExecutionState& state() { return *state_; }
  sandbox::ToolTransactions& transactions() { return *transactions_; }

 private:
  std::string run_;
  std::shared_ptr<fsnap::HostFilesystem> workspace_;
  std::shared_ptr<sandbox::Ledger> ledger_;
  std::unique_ptr<sandbox::LedgerBoundaryLog> log_;
  std::unique_ptr<sandbox::ExecutionState> state_;
  std::unique_ptr<sandbox::ToolTransactions> transactions_;
};

}  // namespace runs
