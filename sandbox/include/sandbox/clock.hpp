// Clock — the injectable time source of the runtime
// (docs/conformance/EXECUTION_STATE.md, Determinism Support). It is fsnap's Clock, so
// one clock stamps checkpoints, snapshots and elapsed times alike.
#pragma once

#include "fsnap/clock.hpp"

namespace sandbox {

using TimePoint = fsnap::TimePoint;
using Clock = fsnap::Clock;
using SystemClock = fsnap::SystemClock;
using FixedClock = fsnap::FixedClock;

}  // namespace sandbox
