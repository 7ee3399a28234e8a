/* Programs that abuse the descriptors and limits of the process `mlprof run --memory` traces
 * (tests/cli/run_capture_fd.sh builds this with cc at test time).
 *   closefrom DATA   close fds 3..1023 (the daemon / closefrom(3) pattern), open DATA for
 *                    writing (it gets fd 3), write a line, 300,000 malloc/free, another line
 *   fsize BYTES      RLIMIT_FSIZE = BYTES with SIGXFSZ ignored (0: no limit), then 300,000
 *                    malloc/free: the tracker's writes fail with EFBIG past BYTES
 *   nofile soft|hard RLIMIT_NOFILE = 3 (soft only, or soft and hard), then two forked children:
 *                    one does 1,000 malloc/free and exits, one does 2,000 and calls _exit */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

static void churn(int n) {
  for (int i = 0; i < n; ++i) {
    void* volatile p = malloc(64 + (size_t)(i % 100));
    free(p);
  }
}

static void put(int fd, const char* s) {
  if (write(fd, s, strlen(s)) != (ssize_t)strlen(s)) exit(3);
}

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  if (strcmp(argv[1], "closefrom") == 0 && argc == 3) {
    for (int fd = 3; fd < 1024; ++fd) close(fd);
    int fd = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd != 3) return 4;
    put(fd, "the program's first line\n");
    churn(300000);
    put(fd, "its second line\n");
    return close(fd) == 0 ? 0 : 5;
  }
  if (strcmp(argv[1], "fsize") == 0 && argc == 3) {
    long long limit = atoll(argv[2]);
    if (limit > 0) {
      signal(SIGXFSZ, SIG_IGN);
      struct rlimit rl = {(rlim_t)limit, (rlim_t)limit};
      if (setrlimit(RLIMIT_FSIZE, &rl) != 0) return 4;
    }
    churn(300000);
    return 0;
  }
  if (strcmp(argv[1], "nofile") == 0 && argc == 3) {
    struct rlimit rl;
    getrlimit(RLIMIT_NOFILE, &rl);
    rl.rlim_cur = 3;
    if (strcmp(argv[2], "hard") == 0) rl.rlim_max = 3;
    if (setrlimit(RLIMIT_NOFILE, &rl) != 0) return 4;
    pid_t a = fork();
    if (a == 0) {
      churn(1000);
      exit(0);
    }
    pid_t b = fork();
    if (b == 0) {
      churn(2000);
      _exit(0);
    }
    int st1 = 0, st2 = 0;
    waitpid(a, &st1, 0);
    waitpid(b, &st2, 0);
    return WIFEXITED(st1) && WEXITSTATUS(st1) == 0 && WIFEXITED(st2) && WEXITSTATUS(st2) == 0 ? 0 : 7;
  }
  return 2;
}
