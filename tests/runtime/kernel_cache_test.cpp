#include "runtime/kernel_cache.hpp"

#include "child_process.hpp"
#include "runtime/disk_cache.hpp"
#include "runtime/nvrtc_api.hpp"
#include "runtime/nvrtc_compiler.hpp"
#include "support/error.hpp"

#include <gtest/gtest.h>
#include <fmt/format.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/Path.h>

#include <cstdlib>
#include <fstream>
#include <optional>
#include <thread>
#include <utility>

namespace gpukit::rt {
namespace {

std::string kernel_source(const std::string& name, int constant) {
  return fmt::format("extern \"C\" __global__ void {}(float* y, unsigned n) {{\n"
                     "  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                     "  if (i < n) y[i] = y[i] * {}.0f;\n"
                     "}}\n",
                     name, constant);
}

/// Files in `dir` (names only), sorted.
std::vector<std::string> files_in(const std::string& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(dir, ec), end; it != end && !ec; it.increment(ec))
    names.push_back(llvm::sys::path::filename(it->path()).str());
  std::sort(names.begin(), names.end());
  return names;
}

class KernelCacheTest : public ::testing::Test {
protected:
  void SetUp() override {
    Nvrtc = NvrtcApi::load();
    if (!Nvrtc)
      GTEST_SKIP() << NvrtcApi::load_error();
    unsetenv("GPUKIT_CACHE");
    Dir = test::fresh_directory(::testing::UnitTest::GetInstance()->current_test_info()->name());
  }
  void TearDown() override {
    unsetenv("GPUKIT_CACHE");
    if (!Dir.empty())
      llvm::sys::fs::remove_directories(Dir);
  }
  KernelCache make_cache(const std::string& arch = "sm_90") {
    return KernelCache(Nvrtc, nullptr, arch, KernelCacheConfig{nullptr, Dir});
  }

  const NvrtcApi* Nvrtc = nullptr;
  std::string Dir;
};

TEST_F(KernelCacheTest, MissThenMemoryHit) {
  KernelCache cache(Nvrtc, nullptr, "sm_90", KernelCacheConfig{nullptr, Dir});
  std::string source = kernel_source("scale2", 2);
  const Kernel& first = cache.get({"scale2", source});
  EXPECT_EQ(cache.stats().compiles, 1u);
  EXPECT_EQ(cache.stats().memory_hits, 0u);
  EXPECT_FALSE(first.from_disk);
  EXPECT_GT(first.compile_ms, 0);
  EXPECT_EQ(first.function, nullptr); // no driver: compiled, not loaded
  EXPECT_EQ(first.name, "scale2");
  EXPECT_FALSE(first.cubin.empty());

  const Kernel& second = cache.get({"scale2", source});
  EXPECT_EQ(&first, &second);
  EXPECT_EQ(cache.stats().compiles, 1u);
  EXPECT_EQ(cache.stats().memory_hits, 1u);
  EXPECT_EQ(cache.directory(), Dir);
  EXPECT_EQ(cache.arch(), "sm_90");
  EXPECT_TRUE(llvm::sys::fs::exists(DiskCache(Dir).entry_path(first.key)));
}

TEST_F(KernelCacheTest, NewInstanceHitsDisk) {
  std::string source = kernel_source("scale3", 3);
  uint64_t key = 0;
  std::vector<char> cubin;
  {
    KernelCache cache(Nvrtc, nullptr, "sm_90", KernelCacheConfig{nullptr, Dir});
    const Kernel& k = cache.get({"scale3", source});
    key = k.key;
    cubin = k.cubin;
  }
  KernelCache cache(Nvrtc, nullptr, "sm_90", KernelCacheConfig{nullptr, Dir});
  const Kernel& k = cache.get({"scale3", source});
  EXPECT_TRUE(k.from_disk);
  EXPECT_EQ(k.compile_ms, 0);
  EXPECT_EQ(k.key, key);
  EXPECT_EQ(k.cubin, cubin);
  EXPECT_EQ(cache.stats().disk_hits, 1u);
  EXPECT_EQ(cache.stats().compiles, 0u);
}

TEST_F(KernelCacheTest, CorruptEntriesAreDetectedRemovedAndRecompiled) {
  std::string source = kernel_source("scale4", 4);
  uint64_t key;
  {
    KernelCache cache(Nvrtc, nullptr, "sm_90", KernelCacheConfig{nullptr, Dir});
    key = cache.get({"scale4", source}).key;
  }
  std::string path = DiskCache(Dir).entry_path(key);
  auto original = llvm::MemoryBuffer::getFile(path, false, false);
  ASSERT_TRUE(original);
  std::string good = (*original)->getBuffer().str();

  // Each damage in turn: a flipped payload byte, a flipped header byte, a
  // truncated payload, a truncated header, an empty file.
  std::vector<std::string> damaged;
  damaged.push_back(good);
  damaged.back()[good.size() / 2] ^= 0x5a;
  damaged.push_back(good);
  damaged.back()[2] ^= 0x01;
  damaged.push_back(good.substr(0, good.size() - 7));
  damaged.push_back(good.substr(0, 20));
  damaged.push_back("");
  for (size_t i = 0; i < damaged.size(); ++i) {
    {
      std::ofstream out(path, std::ios::binary | std::ios::trunc);
      out << damaged[i];
    }
    KernelCache cache(Nvrtc, nullptr, "sm_90", KernelCacheConfig{nullptr, Dir});
    const Kernel& k = cache.get({"scale4", source});
    EXPECT_EQ(cache.stats().corrupt_entries, 1u) << "damage " << i;
    EXPECT_EQ(cache.stats().compiles, 1u) << "damage " << i;
    EXPECT_FALSE(k.from_disk) << "damage " << i;
    // Recompiled and written back intact.
    auto now = llvm::MemoryBuffer::getFile(path, false, false);
    ASSERT_TRUE(now) << "damage " << i;
    EXPECT_EQ((*now)->getBuffer(), good) << "damage " << i;
  }
}

TEST_F(KernelCacheTest, CacheOffWritesNothing) {
  setenv("GPUKIT_CACHE", "off", 1);
  KernelCache cache(Nvrtc, nullptr, "sm_90", KernelCacheConfig{nullptr, Dir});
  EXPECT_TRUE(cache.directory().empty());
  std::string source = kernel_source("scale5", 5);
  cache.get({"scale5", source});
  cache.get({"scale5", source});
  EXPECT_EQ(cache.stats().compiles, 1u);
  EXPECT_EQ(cache.stats().memory_hits, 1u);
  EXPECT_TRUE(files_in(Dir).empty());
}

TEST_F(KernelCacheTest, DirectoryComesFromTheEnvironment) {
  const char* saved = std::getenv("GPUKIT_CACHE_DIR");
  std::optional<std::string> previous = saved ? std::optional<std::string>(saved) : std::nullopt;
  setenv("GPUKIT_CACHE_DIR", Dir.c_str(), 1);
  EXPECT_EQ(cache_directory(), Dir);
  EXPECT_EQ(KernelCache(Nvrtc, nullptr, "sm_90").directory(), Dir);
  unsetenv("GPUKIT_CACHE_DIR");
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  const char* home = std::getenv("HOME");
  if (xdg && *xdg) {
    EXPECT_EQ(cache_directory(), std::string(xdg) + "/gpukit");
  } else if (home && *home) {
    EXPECT_EQ(cache_directory(), std::string(home) + "/.cache/gpukit");
  }
  if (previous)
    setenv("GPUKIT_CACHE_DIR", previous->c_str(), 1);
}

TEST_F(KernelCacheTest, KeysSeparateOptionsArchSourceAndName) {
  KernelCache sm90 = make_cache("sm_90");
  KernelCache sm80 = make_cache("sm_80");
  std::string source = kernel_source("k", 6);
  uint64_t base = sm90.key({"k", source});
  EXPECT_EQ(base, sm90.key({"k", source})); // deterministic
  EXPECT_NE(base, sm80.key({"k", source}));
  EXPECT_NE(base, sm90.key({"k", source, {"-lineinfo"}}));
  EXPECT_NE(sm90.key({"k", source, {"-lineinfo", "-DX"}}), sm90.key({"k", source, {"-DX", "-lineinfo"}}));
  EXPECT_NE(base, sm90.key({"k", kernel_source("k", 7)}));
  EXPECT_NE(base, sm90.key({"k2", source}));
  // Fields are length-prefixed: moving text between them changes the key.
  std::vector<std::string> options = NvrtcCompiler::cubin_options("sm_90");
  EXPECT_NE(kernel_cache_key("ab", "c", options, 13, 0), kernel_cache_key("a", "bc", options, 13, 0));
  EXPECT_NE(kernel_cache_key("a", "b", options, 13, 0), kernel_cache_key("a", "b", options, 12, 8));
  // Different keys really are different entries.
  const Kernel& a = sm90.get({"k", source});
  const Kernel& b = sm80.get({"k", source});
  EXPECT_NE(a.key, b.key);
  EXPECT_EQ(DiskCache(Dir).list().size(), 2u);
}

TEST_F(KernelCacheTest, CompileErrorsPropagateAndAreNotCached) {
  KernelCache cache = make_cache();
  KernelRequest bad{"bad", "extern \"C\" __global__ void bad() { nope; }\n"};
  EXPECT_THROW(cache.get(bad), Error);
  EXPECT_THROW(cache.get(bad), Error); // still an error, not a half-built entry
  EXPECT_TRUE(files_in(Dir).empty());
}

TEST_F(KernelCacheTest, WithoutNvrtcGetIsUnavailable) {
  KernelCache cache(nullptr, nullptr, "sm_90", KernelCacheConfig{nullptr, Dir});
  try {
    cache.get({"k", kernel_source("k", 1)});
    FAIL() << "no exception";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Unavailable);
  }
}

TEST_F(KernelCacheTest, ThreadsShareOneCompile) {
  KernelCache cache = make_cache();
  std::string source = kernel_source("shared", 8);
  std::vector<const Kernel*> seen(4);
  std::vector<std::thread> threads;
  for (size_t i = 0; i < seen.size(); ++i)
    threads.emplace_back([&, i] { seen[i] = &cache.get({"shared", source}); });
  for (std::thread& t : threads)
    t.join();
  for (const Kernel* k : seen)
    EXPECT_EQ(k, seen[0]);
  EXPECT_EQ(cache.stats().compiles, 1u);
  EXPECT_EQ(cache.stats().memory_hits, 3u);
}

// Two processes fill one directory at once, racing on shared entries and
// adding their own; afterwards every entry must be intact and no
// temporary file left behind.
TEST_F(KernelCacheTest, TwoProcessesWriteOneDirectory) {
  constexpr int Shared = 6, Own = 4;
  // Each child's requests: the shared kernels, walked in opposite orders so
  // the children meet on some of them mid-compile, then its own.
  auto requests_of = [&](int child) {
    std::vector<std::pair<std::string, std::string>> requests;
    for (int i = 0; i < Shared; ++i) {
      int j = child == 0 ? i : Shared - 1 - i;
      std::string name = fmt::format("shared{}", j);
      requests.emplace_back(name, kernel_source(name, j + 1));
    }
    for (int i = 0; i < Own; ++i) {
      std::string name = fmt::format("own{}_{}", child, i);
      requests.emplace_back(name, kernel_source(name, i + 1));
    }
    return requests;
  };
  auto fill = [&](int child) {
    return [&, child]() -> std::string {
      KernelCache cache(Nvrtc, nullptr, "sm_90", KernelCacheConfig{nullptr, Dir});
      for (const auto& [name, source] : requests_of(child))
        if (cache.get({name, source}).cubin.size() < 4)
          return "empty cubin for " + name;
      return std::string();
    };
  };
  // Both children are forked before either is waited for.
  test::ChildProcess first = test::start_child(fill(0));
  test::ChildProcess second = test::start_child(fill(1));
  EXPECT_EQ(test::finish(first), "");
  EXPECT_EQ(test::finish(second), "");

  std::vector<CacheEntryInfo> entries = DiskCache(Dir).list();
  EXPECT_EQ(entries.size(), static_cast<size_t>(Shared + 2 * Own));
  for (const CacheEntryInfo& entry : entries)
    EXPECT_TRUE(entry.valid) << entry.path;
  EXPECT_EQ(files_in(Dir).size(), entries.size()) << "temporary files were left behind";

  // And every one of them loads from disk in a third cache.
  KernelCache cache = make_cache();
  for (int child = 0; child < 2; ++child)
    for (const auto& [name, source] : requests_of(child))
      EXPECT_TRUE(cache.get({name, source}).from_disk) << name;
  EXPECT_EQ(cache.stats().corrupt_entries, 0u);
  EXPECT_EQ(cache.stats().compiles, 0u);
  EXPECT_EQ(cache.stats().disk_hits, static_cast<uint64_t>(Shared + 2 * Own));
}

TEST_F(KernelCacheTest, ListBytesAndClear) {
  KernelCache cache = make_cache();
  cache.get({"a", kernel_source("a", 1)});
  cache.get({"b", kernel_source("b", 2)});
  DiskCache disk(Dir);
  // A writer's leftover temporary file and a stranger's file.
  { std::ofstream(disk.entry_path(1) + ".tmp-abcdef") << "partial"; }
  { std::ofstream(Dir + "/README") << "not ours"; }
  std::vector<CacheEntryInfo> entries = disk.list();
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_LT(entries[0].key, entries[1].key);
  uint64_t total = 0;
  for (const CacheEntryInfo& e : entries) {
    EXPECT_TRUE(e.valid);
    EXPECT_EQ(e.file_bytes, e.payload_bytes + 40);
    EXPECT_GT(e.modified_seconds, 0);
    total += e.file_bytes;
  }
  EXPECT_EQ(disk.bytes(), total);
  EXPECT_EQ(disk.clear(), 3u);
  EXPECT_EQ(files_in(Dir), std::vector<std::string>{"README"});
}

} // namespace
} // namespace gpukit::rt
