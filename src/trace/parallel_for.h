// Work shared over threads, for loops whose items are independent (one rank file each).
#pragma once

#include <cstddef>
#include <functional>

namespace mlprof {

// Calls fn(i) once for each i in [0, n) on up to `threads` threads (0 = every core; never more
// threads than items), the calling thread included. Items are handed out one at a time, so a slow
// item does not hold back a fixed share. Once keep_going (when given) returns false, no further
// item starts.
void parallel_for(size_t n, unsigned threads, const std::function<void(size_t)>& fn,
                  const std::function<bool()>& keep_going = {});

}  // namespace mlprof
