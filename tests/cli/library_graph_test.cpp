// The libraries' dependencies point one way: cli → hooks → fleet, runs → sandbox →
// statekit → fsnap, and policy; embed → sandbox. A library includes the headers of, and
// links, only libraries below it; fleet, which shares runs between machines, needs
// nothing of an agent run's concepts (runs) nor of the transaction core (sandbox); and
// YAML is read at the top, by the configuration's reader in hooks, the one library that
// links yaml-cpp.
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <boost/filesystem.hpp>

#include "test_support.hpp"

namespace {

namespace fs = boost::filesystem;

const fs::path kSource(SHADOWBOX_SOURCE_DIR);

// Each library's layer: a library may depend only on libraries of a lower layer.
const std::map<std::string, int> kLayers = {{"fsnap", 0},   {"policy", 0}, {"statekit", 1},
                                            {"sandbox", 2}, {"runs", 3},   {"embed", 3},
                                            {"fleet", 4},   {"hooks", 5},  {"cli", 6}};

// The libraries whose headers the sources of folder include, each with a file that does.
std::map<std::string, std::string> included_libraries(const std::string& folder) {
  std::map<std::string, std::string> out;
  static const std::regex include_line("^#include [\"<]([a-z]+)/");
  for (fs::recursive_directory_iterator it(kSource / folder), end; it != end; ++it) {
    std::string ext = it->path().extension().string();
    if (ext != ".hpp" && ext != ".cpp") continue;
    std::ifstream in(it->path().string());
    for (std::string line; std::getline(in, line);) {
      std::smatch m;
      if (!std::regex_search(line, m, include_line)) continue;
      std::string library = m[1];
      if (kLayers.count(library) != 0 && library != folder) {
        out.emplace(library, it->path().lexically_relative(kSource).string());
      }
    }
  }
  return out;
}

// The words of folder's CMakeLists.txt target_link_libraries calls.
std::set<std::string> linked(const std::string& folder) {
  std::string text = testing_support::read_file(kSource / folder / "CMakeLists.txt");
  std::set<std::string> out;
  static const std::regex call("target_link_libraries\\(([^)]*)\\)");
  static const std::regex word("[A-Za-z0-9_:+-]+");
  for (std::sregex_iterator it(text.begin(), text.end(), call), end; it != end; ++it) {
    std::string args = (*it)[1];
    for (std::sregex_iterator w(args.begin(), args.end(), word), wend; w != wend; ++w) {
      out.insert(w->str());
    }
  }
  return out;
}

TEST(LibraryGraphTest, EveryLibraryDependsOnlyOnLibrariesBelowIt) {
  for (const auto& [library, layer] : kLayers) {
    for (const auto& [other, file] : included_libraries(library)) {
      EXPECT_LT(kLayers.at(other), layer) << file << " (" << library << ") includes " << other;
    }
    for (const std::string& name : linked(library)) {
      auto other = kLayers.find(name);
      if (other == kLayers.end() || name == library) continue;
      EXPECT_LT(other->second, layer) << library << "/CMakeLists.txt links " << name;
    }
  }
}

TEST(LibraryGraphTest, FleetNeedsNeitherRunsNorTheTransactionCore) {
  std::map<std::string, std::string> included = included_libraries("fleet");
  std::set<std::string> links = linked("fleet");
  for (const char* below : {"runs", "sandbox"}) {
    EXPECT_EQ(included.count(below), 0u) << included[below] << " includes " << below;
    EXPECT_EQ(links.count(below), 0u) << "fleet/CMakeLists.txt links " << below;
  }
}

TEST(LibraryGraphTest, OnlyTheConfigurationsReaderReadsYaml) {
  for (const auto& [library, layer] : kLayers) {
    if (library == "cli") continue;  // the executable links what it links through hooks
    bool links_yaml = linked(library).count("yaml-cpp") != 0;
    EXPECT_EQ(links_yaml, library == "hooks") << library << "/CMakeLists.txt";
  }
  // And no source but the reader's includes yaml-cpp.
  for (const auto& [library, layer] : kLayers) {
    for (fs::recursive_directory_iterator it(kSource / library), end; it != end; ++it) {
      std::string ext = it->path().extension().string();
      if (ext != ".hpp" && ext != ".cpp") continue;
      std::string text = testing_support::read_file(it->path());
      if (text.find("#include <yaml-cpp/") == std::string::npos) continue;
      std::string file = it->path().lexically_relative(kSource).string();
      EXPECT_EQ(file.rfind("hooks/src/", 0), 0u) << file << " reads YAML";
    }
  }
}

}  // namespace
