// The tuning database on the CPU: round trips, exact-key lookups (another
// device, bucket or space misses), corrupt and other-version files ignored
// with a warning, and concurrent writers in separate processes.
#include "runtime/tuning_database.hpp"

#include "runtime/disk_cache.hpp"

#include "child_process.hpp"

#include <gtest/gtest.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/raw_ostream.h>

#include <fstream>
#include <string>
#include <thread>
#include <vector>

namespace gpukit::rt {
namespace {

TuningKey sample_key(unsigned bucket = 24) {
  TuningKey k;
  k.kernel = "ew/5c3fa0e8d1b2c3a4/aligned";
  k.dtype = "f32";
  k.device = "NVIDIA H100 80GB HBM3";
  k.arch = "sm_90";
  k.driver_version = 13000;
  k.size_bucket = bucket;
  k.space = "elementwise/1";
  return k;
}

TuningRecord sample_record(TuningKey key, int64_t block = 512) {
  TuningRecord r;
  r.key = std::move(key);
  r.config = {{"block", block}, {"ipt", 2}, {"vec", 4}, {"grid", -4}};
  r.n = uint64_t(1) << (r.key.size_bucket % 40);
  r.best_ms = 0.0712;
  r.default_ms = 0.0755;
  r.candidates = 61;
  r.tuned_at = 1763800000;
  r.label = "out = 2 * x + sin(y)";
  return r;
}

std::string read_text(const std::string& path) {
  auto buffer = llvm::MemoryBuffer::getFile(path);
  return buffer ? (*buffer)->getBuffer().str() : std::string();
}

void write_text(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

bool same_record(const TuningRecord& a, const TuningRecord& b) {
  return a.key == b.key && a.config == b.config && a.n == b.n && a.best_ms == b.best_ms &&
         a.default_ms == b.default_ms && a.candidates == b.candidates && a.tuned_at == b.tuned_at &&
         a.label == b.label;
}

TEST(TuneMode, ParsesEveryAcceptedSpelling) {
  EXPECT_EQ(parse_tune_mode("off"), TuneMode::Off);
  EXPECT_EQ(parse_tune_mode("OFF"), TuneMode::Off);
  EXPECT_EQ(parse_tune_mode("0"), TuneMode::Off);
  EXPECT_EQ(parse_tune_mode("cached"), TuneMode::Cached);
  EXPECT_EQ(parse_tune_mode(""), TuneMode::Cached);
  EXPECT_EQ(parse_tune_mode(" on "), TuneMode::On);
  EXPECT_EQ(parse_tune_mode("1"), TuneMode::On);
  EXPECT_EQ(parse_tune_mode("sometimes"), std::nullopt);
  EXPECT_EQ(to_string(TuneMode::Cached), "cached");
}

TEST(SizeBucket, IsFloorLog2) {
  EXPECT_EQ(size_bucket(0), 0u);
  EXPECT_EQ(size_bucket(1), 0u);
  EXPECT_EQ(size_bucket(2), 1u);
  EXPECT_EQ(size_bucket(3), 1u);
  EXPECT_EQ(size_bucket(1 << 20), 20u);
  EXPECT_EQ(size_bucket((1 << 21) - 1), 20u);
  EXPECT_EQ(size_bucket(uint64_t(1) << 40), 40u);
  EXPECT_EQ(size_bucket(~uint64_t(0)), 63u);
}

TEST(TuningDatabase, RoundTripsThroughTheFile) {
  std::string dir = test::fresh_directory("tuning-roundtrip");
  std::string path = dir + "/tuning.json";
  TuningRecord a = sample_record(sample_key(24));
  TuningRecord b = sample_record(sample_key(20), 128);
  {
    TuningDatabase db(path);
    EXPECT_EQ(db.lookup(a.key), std::nullopt); // a missing file is an empty database
    std::string error;
    ASSERT_TRUE(db.store(a, &error)) << error;
    ASSERT_TRUE(db.store(b, &error)) << error;
    EXPECT_TRUE(db.warnings().empty());
  }
  TuningDatabase again(path); // what a later process sees
  std::optional<TuningRecord> ra = again.lookup(a.key);
  std::optional<TuningRecord> rb = again.lookup(b.key);
  ASSERT_TRUE(ra && rb);
  EXPECT_TRUE(same_record(*ra, a));
  EXPECT_TRUE(same_record(*rb, b));
  EXPECT_EQ(again.records().size(), 2u);
  EXPECT_TRUE(again.warnings().empty());

  // Replacing an entry keeps one per key.
  TuningRecord a2 = sample_record(sample_key(24), 1024);
  ASSERT_TRUE(again.store(a2));
  TuningDatabase third(path);
  ASSERT_TRUE(third.lookup(a.key));
  EXPECT_EQ(third.lookup(a.key)->config.at("block"), 1024);
  EXPECT_EQ(third.records().size(), 2u);

  // Writers leave no temporary files behind.
  std::error_code ec;
  unsigned files = 0;
  for (llvm::sys::fs::directory_iterator it(dir, ec), end; it != end && !ec; it.increment(ec))
    ++files;
  EXPECT_EQ(files, 2u) << "tuning.json and tuning.json.lock only";
}

TEST(TuningDatabase, FileIsDeterministicAndReadable) {
  std::string dir = test::fresh_directory("tuning-deterministic");
  TuningRecord a = sample_record(sample_key(24));
  TuningRecord b = sample_record(sample_key(20), 128);
  {
    TuningDatabase one(dir + "/one.json");
    one.store(a);
    one.store(b);
    TuningDatabase two(dir + "/two.json");
    two.store(b);
    two.store(a);
  }
  std::string text = read_text(dir + "/one.json");
  EXPECT_EQ(text, read_text(dir + "/two.json"));
  EXPECT_NE(text.find("\"format\": \"gpukit-tuning\""), std::string::npos) << text;
  EXPECT_NE(text.find("\"version\": 1"), std::string::npos) << text;
  EXPECT_NE(text.find("\"block\": 512"), std::string::npos) << text;
}

TEST(TuningDatabase, AnyKeyFieldMismatchMisses) {
  std::string dir = test::fresh_directory("tuning-mismatch");
  TuningDatabase db(dir + "/tuning.json");
  TuningKey key = sample_key(24);
  ASSERT_TRUE(db.store(sample_record(key)));
  TuningDatabase later(dir + "/tuning.json");
  ASSERT_TRUE(later.lookup(key));

  std::vector<std::pair<std::string, TuningKey>> others;
  auto with = [&](std::string what, auto change) {
    TuningKey k = key;
    change(k);
    others.emplace_back(std::move(what), std::move(k));
  };
  with("other device", [](TuningKey& k) { k.device = "NVIDIA A100-SXM4-80GB"; });
  with("other SM", [](TuningKey& k) { k.arch = "sm_80"; });
  with("other driver", [](TuningKey& k) { k.driver_version = 12080; });
  with("other bucket", [](TuningKey& k) { k.size_bucket = 25; });
  with("other kernel", [](TuningKey& k) { k.kernel = "ew/0000000000000000/aligned"; });
  with("other dtype", [](TuningKey& k) { k.dtype = "f64"; });
  with("stale space", [](TuningKey& k) { k.space = "elementwise/2"; });
  for (const auto& [what, k] : others)
    EXPECT_EQ(later.lookup(k), std::nullopt) << what;
  EXPECT_TRUE(later.warnings().empty());
}

TEST(TuningDatabase, CorruptFileIsIgnoredWithAWarningThenReplaced) {
  std::string dir = test::fresh_directory("tuning-corrupt");
  std::string path = dir + "/tuning.json";
  write_text(path, "{\"format\": \"gpukit-tuning\", \"version\": 1, \"entries\": [ {\"kernel\": ");
  std::string warnings;
  llvm::raw_string_ostream os(warnings);
  TuningDatabase db(path, &os);
  EXPECT_EQ(db.lookup(sample_key()), std::nullopt);
  EXPECT_EQ(db.lookup(sample_key(3)), std::nullopt);
  ASSERT_EQ(db.warnings().size(), 1u) << "one warning, not one per lookup";
  EXPECT_NE(db.warnings()[0].find("not valid JSON"), std::string::npos) << db.warnings()[0];
  EXPECT_NE(db.warnings()[0].find(path), std::string::npos) << db.warnings()[0];
  os.flush();
  EXPECT_NE(warnings.find("gpukit: warning: ignoring the tuning database"), std::string::npos)
      << warnings;

  // A store replaces the corrupt file with a valid one.
  ASSERT_TRUE(db.store(sample_record(sample_key())));
  TuningDatabase later(path);
  EXPECT_TRUE(later.lookup(sample_key()));
  EXPECT_TRUE(later.warnings().empty());
}

TEST(TuningDatabase, WrongShapesAreCorruptToo) {
  std::string dir = test::fresh_directory("tuning-shapes");
  const std::pair<const char*, const char*> cases[] = {
      {"[1, 2, 3]", "not a GPUkit tuning database"},
      {"{\"format\": \"something-else\", \"version\": 1, \"entries\": []}",
       "not a GPUkit tuning database"},
      {"{\"format\": \"gpukit-tuning\", \"entries\": []}", "no integer \"version\""},
      {"{\"format\": \"gpukit-tuning\", \"version\": 1}", "no \"entries\" array"},
      {"", "not valid JSON"},
  };
  for (const auto& [text, expected] : cases) {
    std::string path = dir + "/tuning.json";
    write_text(path, text);
    TuningDatabase db(path);
    EXPECT_EQ(db.lookup(sample_key()), std::nullopt) << text;
    ASSERT_EQ(db.warnings().size(), 1u) << text;
    EXPECT_NE(db.warnings()[0].find(expected), std::string::npos) << db.warnings()[0];
  }
}

TEST(TuningDatabase, OldVersionIsIgnoredNotMisread) {
  std::string dir = test::fresh_directory("tuning-old");
  std::string path = dir + "/tuning.json";
  // Version 0 had the same field names: only the version keeps it from being read.
  {
    TuningDatabase db(path);
    ASSERT_TRUE(db.store(sample_record(sample_key())));
  }
  std::string text = read_text(path);
  size_t at = text.find("\"version\": 1");
  ASSERT_NE(at, std::string::npos);
  text.replace(at, 12, "\"version\": 0");
  write_text(path, text);

  TuningDatabase db(path);
  EXPECT_EQ(db.lookup(sample_key()), std::nullopt);
  ASSERT_EQ(db.warnings().size(), 1u);
  EXPECT_NE(db.warnings()[0].find("format version 0"), std::string::npos) << db.warnings()[0];

  // A store replaces an older file.
  ASSERT_TRUE(db.store(sample_record(sample_key(10))));
  TuningDatabase later(path);
  EXPECT_TRUE(later.lookup(sample_key(10)));
  EXPECT_EQ(later.lookup(sample_key()), std::nullopt) << "the old entry is gone, not converted";
}

TEST(TuningDatabase, NewerVersionIsLeftAlone) {
  std::string dir = test::fresh_directory("tuning-newer");
  std::string path = dir + "/tuning.json";
  std::string newer = "{\"format\": \"gpukit-tuning\", \"version\": 99, \"entries\": []}";
  write_text(path, newer);
  TuningDatabase db(path);
  EXPECT_EQ(db.lookup(sample_key()), std::nullopt);
  std::string error;
  EXPECT_FALSE(db.store(sample_record(sample_key()), &error));
  EXPECT_NE(error.find("newer GPUkit"), std::string::npos) << error;
  EXPECT_EQ(read_text(path), newer);
  // This process still uses what it measured.
  EXPECT_TRUE(db.lookup(sample_key()));
}

TEST(TuningDatabase, MalformedEntriesAreSkippedOthersUsed) {
  std::string dir = test::fresh_directory("tuning-entries");
  std::string path = dir + "/tuning.json";
  {
    TuningDatabase db(path);
    ASSERT_TRUE(db.store(sample_record(sample_key())));
  }
  std::string text = read_text(path);
  size_t at = text.find("\"entries\": [");
  ASSERT_NE(at, std::string::npos);
  text.insert(at + 12, "{\"kernel\": 7}, {\"kernel\": \"x\", \"config\": {\"block\": \"big\"}},");
  write_text(path, text);
  TuningDatabase db(path);
  EXPECT_TRUE(db.lookup(sample_key()));
  ASSERT_EQ(db.warnings().size(), 1u);
  EXPECT_NE(db.warnings()[0].find("2 malformed entries"), std::string::npos) << db.warnings()[0];
}

TEST(TuningDatabase, EmptyPathKeepsRecordsInMemory) {
  TuningDatabase db("");
  EXPECT_EQ(db.lookup(sample_key()), std::nullopt);
  EXPECT_TRUE(db.store(sample_record(sample_key())));
  EXPECT_TRUE(db.lookup(sample_key()));
}

TEST(TuningDatabase, UnwritableDirectoryReportsWhy) {
  std::string dir = test::fresh_directory("tuning-unwritable");
  std::string blocker = dir + "/file";
  write_text(blocker, "not a directory");
  TuningDatabase db(blocker + "/tuning.json");
  std::string error;
  EXPECT_FALSE(db.store(sample_record(sample_key()), &error));
  EXPECT_NE(error.find("cannot"), std::string::npos) << error;
  EXPECT_TRUE(db.lookup(sample_key())) << "kept in memory for this process";
}

TEST(TuningDatabase, ConcurrentThreadsLoseNoEntries) {
  std::string dir = test::fresh_directory("tuning-threads");
  std::string path = dir + "/tuning.json";
  TuningDatabase db(path);
  std::vector<std::thread> threads;
  for (unsigned t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (unsigned k = 0; k < 10; ++k)
        db.store(sample_record(sample_key(t * 10 + k)));
    });
  for (std::thread& t : threads)
    t.join();
  TuningDatabase later(path);
  EXPECT_EQ(later.records().size(), 40u);
}

TEST(TuningDatabase, ConcurrentProcessesLoseNoEntries) {
  std::string dir = test::fresh_directory("tuning-processes");
  std::string path = dir + "/tuning.json";
  constexpr unsigned kPerWriter = 25;
  auto writer = [&](unsigned first) {
    return [&, first]() -> std::string {
      TuningDatabase db(path);
      for (unsigned k = 0; k < kPerWriter; ++k) {
        std::string error;
        if (!db.store(sample_record(sample_key(first + k)), &error))
          return error;
      }
      return "";
    };
  };
  test::ChildProcess a = test::start_child(writer(0));
  test::ChildProcess b = test::start_child(writer(kPerWriter));
  test::ChildProcess c = test::start_child(writer(2 * kPerWriter));
  EXPECT_EQ(test::finish(a), "");
  EXPECT_EQ(test::finish(b), "");
  EXPECT_EQ(test::finish(c), "");

  TuningDatabase later(path);
  std::vector<TuningRecord> records = later.records();
  EXPECT_EQ(records.size(), 3 * kPerWriter) << "a writer overwrote another's entries";
  EXPECT_TRUE(later.warnings().empty());
  for (unsigned k = 0; k < 3 * kPerWriter; ++k)
    EXPECT_TRUE(later.lookup(sample_key(k))) << "bucket " << k;
}

TEST(TuningDatabase, DefaultPathIsUnderTheCacheDirectory) {
  std::string path = TuningDatabase::default_path();
  if (path.empty())
    GTEST_SKIP() << "no cache directory (GPUKIT_CACHE_DIR, XDG_CACHE_HOME and HOME unset)";
  EXPECT_EQ(path, cache_directory() + "/tuning.json");
}

} // namespace
} // namespace gpukit::rt
