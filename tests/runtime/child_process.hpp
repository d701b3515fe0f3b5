// Test helpers for code that must run in a fresh process: the Runtime is a
// process-wide singleton, and the loader reads LD_LIBRARY_PATH only at start.
#pragma once

#include <llvm/Support/FileSystem.h>

#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <exception>
#include <functional>
#include <string>

namespace gpukit::test {

/// A forked child running a test body; finish() collects its report.
struct ChildProcess {
  pid_t Pid = -1;
  int ReadFd = -1;
};

/// Forks a child that runs `body` and reports what it returned: empty for
/// success, otherwise a description of the failure.
inline ChildProcess start_child(const std::function<std::string()>& body) {
  int fds[2];
  if (pipe(fds) != 0)
    return {};
  std::fflush(nullptr);
  pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return {};
  }
  if (pid == 0) {
    close(fds[0]);
    std::string result;
    try {
      result = body();
    } catch (const std::exception& e) {
      result = std::string("exception in child: ") + e.what();
    } catch (...) {
      result = "unknown exception in child";
    }
    size_t written = 0;
    while (written < result.size()) {
      ssize_t n = write(fds[1], result.data() + written, result.size() - written);
      if (n <= 0)
        break;
      written += static_cast<size_t>(n);
    }
    close(fds[1]);
    _exit(0); // skip atexit handlers and the parent's gtest state
  }
  close(fds[1]);
  return {pid, fds[0]};
}

/// Waits for `child`; returns its report, or why it failed (a crash, an exception).
inline std::string finish(ChildProcess child) {
  if (child.Pid < 0)
    return "could not start a child process";
  std::string report;
  char buffer[4096];
  for (ssize_t n; (n = read(child.ReadFd, buffer, sizeof(buffer))) > 0;)
    report.append(buffer, static_cast<size_t>(n));
  close(child.ReadFd);
  int status = 0;
  waitpid(child.Pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    return "child process died (status " + std::to_string(status) + ")" +
           (report.empty() ? "" : ": " + report);
  return report;
}

/// Runs `body` in a forked child and returns its report (see start_child).
inline std::string run_in_child(const std::function<std::string()>& body) {
  return finish(start_child(body));
}

/// Runs a shell command and returns its exit status, with stdout and stderr in `output`.
inline int run_command(const std::string& command, std::string& output) {
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (!pipe)
    return -1;
  char buffer[4096];
  for (size_t n; (n = fread(buffer, 1, sizeof(buffer), pipe)) > 0;)
    output.append(buffer, n);
  int status = pclose(pipe);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/// This test binary's path.
inline std::string self_path() {
  char path[4096] = {};
  ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);
  return n > 0 ? std::string(path, static_cast<size_t>(n)) : std::string();
}

/// A fresh empty directory under the build tree, named after the test and
/// this process (test binaries may run in parallel).
inline std::string fresh_directory(const std::string& name) {
  std::string dir = std::string(GPUKIT_BINARY_DIR) + "/test-tmp/runtime/" + name + "-" +
                    std::to_string(getpid());
  llvm::sys::fs::remove_directories(dir);
  llvm::sys::fs::create_directories(dir);
  return dir;
}

} // namespace gpukit::test
