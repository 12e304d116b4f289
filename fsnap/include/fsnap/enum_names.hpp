// One table per enum, read both ways: the name a value is written as (in records, in
// output, in configuration) and the value a name reads back as. A switch that names
// the values and a parser written beside it can drift apart; one table cannot.
//
//   constexpr EnumName<Phase> kPhaseNames[] = {{Phase::kPreTool, "pre_tool"}, ...};
//   name_of(kPhaseNames, phase, "unknown");   // "pre_tool"
//   value_of(kPhaseNames, "pre_tool");        // Phase::kPreTool, or nullopt
//
// Thread-safety: pure functions over constant tables.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

namespace fsnap {

// A value of E and its name.
template <class E>
struct EnumName {
  E value;
  std::string_view name;
};

// The name of value in table; fallback if the table does not hold it.
template <class E, std::size_t N>
constexpr std::string_view name_of(const EnumName<E> (&table)[N], E value,
                                   std::string_view fallback) {
  for (const EnumName<E>& entry : table) {
    if (entry.value == value) return entry.name;
  }
  return fallback;
}

// The value named name in table, or nullopt.
template <class E, std::size_t N>
constexpr std::optional<E> value_of(const EnumName<E> (&table)[N], std::string_view name) {
  for (const EnumName<E>& entry : table) {
    if (entry.name == name) return entry.value;
  }
  return std::nullopt;
}

}  // namespace fsnap
