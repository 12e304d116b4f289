#include "git_objects.hpp"

#include <git2.h>

#include <stdexcept>

namespace testing_support {

namespace {

// The object database of the repository at git_dir; closed on destruction.
class ObjectDatabase {
 public:
  explicit ObjectDatabase(const boost::filesystem::path& git_dir) {
    git_libgit2_init();
    if (git_repository_open_bare(&repo_, git_dir.c_str()) != 0 ||
        git_repository_odb(&odb_, repo_) != 0) {
      throw std::runtime_error("cannot open the objects of " + git_dir.string());
    }
  }
  ~ObjectDatabase() {
    git_odb_free(odb_);
    git_repository_free(repo_);
    git_libgit2_shutdown();
  }
  ObjectDatabase(const ObjectDatabase&) = delete;
  ObjectDatabase& operator=(const ObjectDatabase&) = delete;

  // Calls visit(id, type, content) for every object.
  template <typename Visit>
  void each(Visit visit) {
    std::vector<git_oid> ids;
    auto collect = [](const git_oid* id, void* payload) {
      static_cast<std::vector<git_oid>*>(payload)->push_back(*id);
      return 0;
    };
    if (git_odb_foreach(odb_, collect, &ids) != 0) throw std::runtime_error("cannot list objects");
    for (const git_oid& id : ids) {
      git_odb_object* object = nullptr;
      if (git_odb_read(&object, odb_, &id) != 0) throw std::runtime_error("cannot read an object");
      std::string content(static_cast<const char*>(git_odb_object_data(object)),
                          git_odb_object_size(object));
      git_object_t type = git_odb_object_type(object);
      git_odb_object_free(object);
      visit(id, type, content);
    }
  }

 private:
  git_repository* repo_ = nullptr;
  git_odb* odb_ = nullptr;
};

}  // namespace

std::vector<std::string> objects_containing(const boost::filesystem::path& git_dir,
                                            const std::vector<std::string>& needles) {
  std::vector<std::string> out;
  ObjectDatabase(git_dir).each([&](const git_oid& id, git_object_t type, const std::string& data) {
    for (const std::string& needle : needles) {
      if (data.find(needle) == std::string::npos) continue;
      char hex[GIT_OID_HEXSZ + 1];
      git_oid_tostr(hex, sizeof hex, &id);
      out.push_back(std::string(git_object_type2string(type)) + " " + hex);
      break;
    }
  });
  return out;
}

std::size_t object_count(const boost::filesystem::path& git_dir) {
  std::size_t n = 0;
  ObjectDatabase(git_dir).each([&](const git_oid&, git_object_t, const std::string&) { ++n; });
  return n;
}

}  // namespace testing_support
