// `shadowbox init`, `shadowbox path` and `shadowbox gc`: the store itself.
#include <chrono>
#include <iostream>

#include "commands.hpp"
#include "fsnap/shadow_repo.hpp"
#include "output.hpp"

namespace cli {

int cmd_init(const Context& context, const Args& /*parsed*/) {
  fsnap::Store store = context.open_store(true);
  if (context.options.json) {
    Poco::JSON::Object::Ptr out = make_object();
    set_path(*out, "store", store.dir().string());
    set_path(*out, "repo", store.repo_dir().string());
    set_path(*out, "workspace", store.workspace().string());
    print_json(std::cout, out);
  } else {
    std::cout << store.dir().string() << '\n';
  }
  return 0;
}

int cmd_path(const Context& context, const Args& /*parsed*/) {
  fsnap::Store store = context.open_store(false);
  if (context.options.json) {
    Poco::JSON::Object::Ptr out = make_object();
    set_path(*out, "path", store.repo_dir().string());
    print_json(std::cout, out);
  } else {
    std::cout << store.repo_dir().string() << '\n';
  }
  return 0;
}

int cmd_gc(const Context& context, const Args& /*parsed*/) {
  fsnap::Store store = context.open_store(false);
  fsnap::StoreLock lock = store.lock();
  const fsnap::RetentionPolicy& policy = context.config.retention;
  fsnap::GcReport report =
      context.open_repo(store)->collect_garbage(policy, std::chrono::system_clock::now());
  if (context.options.json) {
    Poco::JSON::Object::Ptr out = make_object();
    out->set("keep_last", policy.keep_last);
    out->set("max_age_seconds", static_cast<std::int64_t>(policy.max_age.count()));
    out->set("checkpoints_dropped", report.checkpoints_dropped);
    out->set("runs_dropped", report.runs_dropped);
    out->set("objects_pruned", report.objects_pruned);
    print_json(std::cout, out);
    return 0;
  }
  if (policy.keep_last == 0 && policy.max_age.count() == 0) {
    std::cout << "no retention limits configured (retention.keep_last, retention.max_age): "
                 "every checkpoint kept\n";
  } else {
    std::cout << "dropped " << report.checkpoints_dropped << " checkpoint(s) and "
              << report.runs_dropped << " run(s) beyond the retention limits\n";
  }
  std::cout << "pruned " << report.objects_pruned << " unreferenced object(s)\n";
  return 0;
}

}  // namespace cli
