// Computed slices (docs/conformance/STATE_MANAGEMENT.md): a value derived from source
// slices by a pure function, installed in a Session and read like a slice's newest
// value (Session::latest<T>()). It is recomputed only when it is read and is stale: one
// of its sources changed since it was computed (a source is compared by identity, O(1):
// slices are persistent vectors), or Session::invalidate<T>() marked it (for a function
// that also reads something else); Session::stale<T>() says whether a read would
// compute. The sources are the parameters of the function — each a `const Slice<S>&` —
// so installing one whose parameter is anything else does not compile; a computed type
// takes no reducer, and its sources are ordinary slices.
//
//   struct Progress { std::size_t done, total; };
//   session.install_computed([](const Slice<Plan>& plan) {
//     Progress p{0, 0};
//     if (const Plan* latest = plan.latest()) {
//       p.total = latest->steps.size();
//       for (const PlanStep& s : latest->steps) p.done += s.done;
//     }
//     return p;
//   });
//   std::optional<Progress> now = session.latest<Progress>();
//   std::shared_ptr<const Progress> shared = session.computed<Progress>();  // no copy
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <tuple>
#include <type_traits>
#include <typeindex>
#include <utility>
#include <vector>

#include "statekit/persistent_vector.hpp"
#include "statekit/slice.hpp"

namespace statekit {

namespace computed_detail {

// The slice type S of a parameter `const Slice<S>&` (no other parameter compiles).
template <typename P>
struct SourceOf;
template <typename S>
struct SourceOf<Slice<S>> {
  using type = S;
};

// What a compute function returns and the slice types it reads.
template <typename F>
struct Signature : Signature<decltype(&F::operator())> {};
template <typename R, typename... P>
struct Signature<R (*)(P...)> {
  using Result = R;
  using Sources = std::tuple<typename SourceOf<std::remove_cvref_t<P>>::type...>;
};
template <typename C, typename R, typename... P>
struct Signature<R (C::*)(P...) const> : Signature<R (*)(P...)> {};

}  // namespace computed_detail

// A computed value, type-erased: how to compute it from its sources' items.
struct ComputedDefinition {
  std::type_index type = typeid(void);
  std::vector<std::type_index> sources;
  std::function<std::shared_ptr<const void>(const std::vector<SliceItems>&)> compute;
};

// The ComputedDefinition of compute (a function or lambda of `const Slice<S>&`s).
template <typename F>
ComputedDefinition define_computed(F compute) {
  using Sig = computed_detail::Signature<std::decay_t<F>>;
  using T = typename Sig::Result;
  static_assert(!std::is_void_v<T>, "a computed slice returns its value");
  return [&]<typename... S>(std::tuple<S...>*) {
    ComputedDefinition out;
    out.type = typeid(T);
    out.sources = {std::type_index(typeid(S))...};
    out.compute = [compute = std::move(compute)](const std::vector<SliceItems>& items) {
      return [&]<std::size_t... I>(std::index_sequence<I...>)->std::shared_ptr<const void> {
        return std::make_shared<const T>(compute(Slice<S>(items[I])...));
      }
      (std::index_sequence_for<S...>{});
    };
    return out;
  }(static_cast<typename Sig::Sources*>(nullptr));
}

}  // namespace statekit
