#include "runtime/scheduler/token_bucket.hpp"

#include "support/error.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

namespace gpukit::rt::sched {

// Tokens earned over `elapsed` are elapsed * Amount / Window. The product
// overflows 64 bits for long idle periods with large amounts (10 s idle at
// 10^9 tokens per window), so it is formed in 128 bits.
using Wide = __int128;

TokenBucket::TokenBucket(uint64_t amount, Nanos window, uint64_t burst, TimePoint now)
    : Amount(amount), Window(window), Burst(static_cast<int64_t>(std::min<uint64_t>(burst, INT64_MAX))),
      Tokens(Burst), Last(now) {
  if (amount == 0 || window.count() <= 0 || burst == 0)
    throw Error(ErrorKind::Usage,
                fmt::format("token bucket needs a positive amount, window and burst (got amount {}, "
                            "window {} ns, burst {})",
                            amount, window.count(), burst));
}

void TokenBucket::refill(TimePoint now) {
  if (now <= Last)
    return;
  Wide earned = Wide(Remainder) + Wide((now - Last).count()) * Wide(Amount);
  Last = now;
  Wide whole = earned / Window.count();
  Wide room = Wide(Burst) - Wide(Tokens);
  if (whole >= room) {
    Tokens = Burst;
    Remainder = 0;
    return;
  }
  Tokens += static_cast<int64_t>(whole);
  Remainder = static_cast<int64_t>(earned % Window.count());
}

bool TokenBucket::try_take(int64_t n, TimePoint now) {
  refill(now);
  if (Tokens < n)
    return false;
  Tokens -= n;
  return true;
}

void TokenBucket::charge(int64_t n, TimePoint now) {
  refill(now);
  // Debt is capped so a runaway measurement cannot overflow; a task that
  // deep in debt waits for years either way.
  Tokens = static_cast<int64_t>(std::clamp<Wide>(Wide(Tokens) - n, INT64_MIN / 2, Burst));
}

Nanos TokenBucket::time_until(int64_t n, TimePoint now) const {
  if (n > Burst)
    return Nanos::max();
  // Work on a copy so a query does not move the refill point.
  TokenBucket at = *this;
  at.refill(now);
  if (at.Tokens >= n)
    return Nanos(0);
  // Need (n - Tokens) * Window - Remainder more units; Amount units arrive per ns.
  Wide units = Wide(n - at.Tokens) * Window.count() - at.Remainder;
  Wide ns = (units + Amount - 1) / Amount;
  return Nanos(static_cast<int64_t>(std::min<Wide>(ns, Nanos::max().count())));
}

} // namespace gpukit::rt::sched
