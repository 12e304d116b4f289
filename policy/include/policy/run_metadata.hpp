// RunMetadata — who a run (an agent run, or one request of an embedding program) is: its ids, its
// owner and the model and labels it runs under. The context keeps it, and every per-call check
// (ShieldPipeline's hooks) is shown it with each call.
//
// Thread-safety: a plain value.
#pragma once

#include <map>
#include <string>

namespace policy {

// Who the run is (all optional).
struct RunMetadata {
  std::string request_id;
  std::string run_id;         // the run
  std::string parent_run_id;  // the run that started this one, if any
  std::string org_id;
  std::string team;
  std::string service;
  std::string user_id;
  std::string model;
  std::map<std::string, std::string> tags;
};

}  // namespace policy
