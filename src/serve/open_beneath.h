// Opening a file of the served directory so that nothing outside it is ever read, even when a
// path component is swapped for a symlink between a check and the open: there is no separate
// check, the open itself refuses to leave the directory, and the caller reads that descriptor.
#pragma once

#include <string>

namespace mlprof::serve {

// Opens `rel` (relative, '/'-separated, already free of "..") read-only under the directory
// `dir_fd`. Uses openat2(RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS), which follows symlinks only
// while they stay inside; where the kernel lacks openat2 (or `use_openat2` is false, for tests)
// it walks the components with openat(O_NOFOLLOW), which refuses every symlink. Never blocks on
// a FIFO (O_NONBLOCK). Returns a descriptor, or -errno: -EXDEV or -ELOOP when the path leads out
// of the directory or through a refused symlink.
int open_beneath(int dir_fd, const std::string& rel, bool use_openat2 = true);

}  // namespace mlprof::serve
