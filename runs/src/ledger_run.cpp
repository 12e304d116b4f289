#include "runs/ledger_run.hpp"

#include "fsnap/shadow_repo.hpp"
#include "runs/redacting_middleware.hpp"
#include "sandbox/errors.hpp"

namespace runs {

LedgerRun::LedgerRun(fsnap::Store store, LedgerRunOptions options) : run_(options.run) {
  fsnap::HostEnv env = options.env;
  if (!env.repo) {
    env.repo =
        std::make_shared<fsnap::ShadowRepo>(fsnap::ShadowRepo::open(store.repo_dir(), false));
  }
  if (!env.clock) env.clock = std::make_shared<fsnap::SystemClock>();
  workspace_ = std::make_shared<fsnap::HostFilesystem>(store, std::move(options.capture), env);
  auto trees = std::make_shared<sandbox::SessionTrees>();
  ledger_ = std::make_shared<sandbox::Ledger>(env.repo, trees);
  log_ = std::make_unique<sandbox::LedgerBoundaryLog>(store, ledger_, run_, kWorkspaceResource);
  sandbox::ResourceRegistry resources;
  resources.put<fsnap::Filesystem>(workspace_, kWorkspaceResource);
  state_ = std::make_unique<sandbox::ExecutionState>(
      std::make_shared<sandbox::Session>(env.clock, env.ids), std::move(resources), env.clock,
      options.seed);
  state_->share_session_trees(std::move(trees));
  state_->session().use(redacting_middleware(std::move(options.secrets)));
  for (const auto& [name, max_items] : options.windows) {
    std::shared_ptr<const sandbox::SliceType> type =
        sandbox::SliceTypes::find(std::string_view(name));
    if (type == nullptr) {
      throw sandbox::Error(sandbox::ErrorCode::kInvalidArgument,
                           "session.windows names " + name + ", which is no slice type");
    }
    state_->session().set_count_window(type->type, max_items);
  }
  transactions_ =
      std::make_unique<sandbox::ToolTransactions>(*state_, *log_, std::move(options.policy), run_);
}

LedgerRun::~LedgerRun() = default;

}  // namespace runs
