// One table per enum, read both ways: every value's name reads back as the value, an
// unknown value gives the fallback, an unknown name nothing.
#include <gtest/gtest.h>

#include "fsnap/checkpoint.hpp"
#include "fsnap/enum_names.hpp"

namespace {

enum class Colour { kRed, kGreen, kBlue };

constexpr fsnap::EnumName<Colour> kColours[] = {{Colour::kRed, "red"}, {Colour::kGreen, "green"}};

TEST(EnumNamesTest, NamesAndValuesReadBothWays) {
  EXPECT_EQ(fsnap::name_of(kColours, Colour::kGreen, "?"), "green");
  EXPECT_EQ(fsnap::value_of(kColours, "red"), Colour::kRed);
  EXPECT_EQ(fsnap::name_of(kColours, Colour::kBlue, "?"), "?") << "not in the table";
  EXPECT_FALSE(fsnap::value_of(kColours, "Red")) << "names are exact";
  EXPECT_FALSE(fsnap::value_of(kColours, ""));
  static_assert(fsnap::value_of(kColours, "green") == Colour::kGreen, "usable at compile time");
}

TEST(EnumNamesTest, EveryPhaseRoundTripsThroughItsName) {
  for (fsnap::Phase phase :
       {fsnap::Phase::kPreTool, fsnap::Phase::kPostTool, fsnap::Phase::kCheckpoint,
        fsnap::Phase::kManual, fsnap::Phase::kSafety, fsnap::Phase::kDenied}) {
    std::string_view name = fsnap::to_string(phase);
    EXPECT_NE(name, "unknown");
    EXPECT_EQ(fsnap::parse_phase(name), phase) << name;
  }
  EXPECT_EQ(fsnap::to_string(fsnap::Phase::kPreTool), "pre_tool");
  EXPECT_FALSE(fsnap::parse_phase("pre-tool"));
}

}  // namespace
