// ChainMetadata — who a chain (one agent run, one request) is: its ids, its owner and
// the model and labels it runs under. The context keeps it, and every per-call check
// (ShieldPipeline's hooks) is shown it with each call.
//
// Thread-safety: a plain value.
#pragma once

#include <map>
#include <string>

namespace policy {

// Who the chain is (all optional).
struct ChainMetadata {
  std::string request_id;
  std::string chain_id;         // the run
  std::string parent_chain_id;  // the chain that started this one, if any
  std::string org_id;
  std::string team;
  std::string service;
  std::string user_id;
  std::string model;
  std::map<std::string, std::string> tags;
};

}  // namespace policy
