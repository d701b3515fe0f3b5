// The MirroredBuffer state machine, every (state, access) cell of the table
// in mirrored_buffer.hpp, over the host pool and host transfer engine; plus
// lazy, exactly-once syncing with the data checked.
#include "runtime/mirrored_buffer.hpp"

#include "runtime/memory_backend_host.hpp"
#include "runtime/memory_pool.hpp"
#include "support/error.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <functional>

namespace gpukit::rt {
namespace {

const CUstream S = reinterpret_cast<CUstream>(1);

struct Fixture {
  std::unique_ptr<MemoryPool> pool = make_host_pool();
  HostMemoryBackend backend;
  TransferEngine engine{backend};
};

using Access = std::function<void(MirroredBuffer&)>;

struct Named {
  const char* name;
  Access access;
};

const Named kAccesses[] = {
    {"host_read", [](MirroredBuffer& b) { b.host_read(); }},
    {"host_write", [](MirroredBuffer& b) { b.host_write(); }},
    {"host_overwrite", [](MirroredBuffer& b) { b.host_overwrite(); }},
    {"device_read", [](MirroredBuffer& b) { b.device_read(S); }},
    {"device_write", [](MirroredBuffer& b) { b.device_write(S); }},
    {"device_overwrite", [](MirroredBuffer& b) { b.device_overwrite(S); }},
};

/// Brings a fresh buffer into `state`.
void enter(MirroredBuffer& b, MirrorState state) {
  switch (state) {
  case MirrorState::Uninitialised: break;
  case MirrorState::HostOnly: b.host_overwrite(); break;
  case MirrorState::DeviceOnly: b.device_overwrite(S); break;
  case MirrorState::Synchronised:
    b.host_overwrite();
    b.device_read(S);
    break;
  case MirrorState::HostDirty:
    b.host_overwrite();
    b.device_read(S);
    b.host_write();
    break;
  case MirrorState::DeviceDirty:
    b.host_overwrite();
    b.device_read(S);
    b.device_write(S);
    break;
  }
  ASSERT_EQ(b.state(), state);
}

/// What an access does in a state: the next state (or nullopt: Error{Usage})
/// and whether it uploads or downloads.
struct Cell {
  std::optional<MirrorState> next;
  int uploads;
  int downloads;
};

using enum MirrorState;
// Rows: states in enum order; columns: kAccesses order.
const Cell kTable[6][6] = {
    // host_read, host_write, host_overwrite, device_read, device_write, device_overwrite
    /* Uninitialised */
    {{std::nullopt, 0, 0}, {HostOnly, 0, 0}, {HostOnly, 0, 0}, {std::nullopt, 0, 0},
     {DeviceOnly, 0, 0}, {DeviceOnly, 0, 0}},
    /* HostOnly */
    {{HostOnly, 0, 0}, {HostOnly, 0, 0}, {HostOnly, 0, 0}, {Synchronised, 1, 0},
     {DeviceDirty, 1, 0}, {DeviceDirty, 0, 0}},
    /* DeviceOnly */
    {{Synchronised, 0, 1}, {HostDirty, 0, 1}, {HostDirty, 0, 0}, {DeviceOnly, 0, 0},
     {DeviceOnly, 0, 0}, {DeviceOnly, 0, 0}},
    /* Synchronised */
    {{Synchronised, 0, 0}, {HostDirty, 0, 0}, {HostDirty, 0, 0}, {Synchronised, 0, 0},
     {DeviceDirty, 0, 0}, {DeviceDirty, 0, 0}},
    /* HostDirty */
    {{HostDirty, 0, 0}, {HostDirty, 0, 0}, {HostDirty, 0, 0}, {Synchronised, 1, 0},
     {DeviceDirty, 1, 0}, {DeviceDirty, 0, 0}},
    /* DeviceDirty */
    {{Synchronised, 0, 1}, {HostDirty, 0, 1}, {HostDirty, 0, 0}, {DeviceDirty, 0, 0},
     {DeviceDirty, 0, 0}, {DeviceDirty, 0, 0}},
};

TEST(MirroredBuffer, EveryTransitionOfTheTable) {
  Fixture f;
  for (int s = 0; s < 6; ++s) {
    for (int a = 0; a < 6; ++a) {
      auto state = static_cast<MirrorState>(s);
      SCOPED_TRACE(testing::Message() << to_string(state) << " + " << kAccesses[a].name);
      MirroredBuffer b(*f.pool, f.engine, 1000);
      enter(b, state);
      uint64_t up = b.uploads(), down = b.downloads();
      const Cell& cell = kTable[s][a];
      if (!cell.next) {
        try {
          kAccesses[a].access(b);
          ADD_FAILURE() << "no error";
        } catch (const Error& e) {
          EXPECT_EQ(e.kind(), ErrorKind::Usage);
          EXPECT_NE(std::string(e.what()).find("never written"), std::string::npos) << e.what();
        }
        EXPECT_EQ(b.state(), state);
        continue;
      }
      kAccesses[a].access(b);
      EXPECT_EQ(b.state(), *cell.next) << to_string(b.state());
      EXPECT_EQ(b.uploads() - up, static_cast<uint64_t>(cell.uploads));
      EXPECT_EQ(b.downloads() - down, static_cast<uint64_t>(cell.downloads));
    }
  }
}

TEST(MirroredBuffer, ReadsSyncLazilyAndExactlyOnce) {
  Fixture f;
  constexpr size_t n = 3 * 1000 * 1000 + 7; // several staging chunks if pageable
  MirroredBuffer b(*f.pool, f.engine, n);
  auto* host = static_cast<uint8_t*>(b.host_overwrite());
  for (size_t i = 0; i < n; ++i)
    host[i] = static_cast<uint8_t>(i * 7);
  EXPECT_EQ(b.uploads(), 0u); // nothing until the device reads

  auto* device = reinterpret_cast<uint8_t*>(b.device_read(S));
  EXPECT_EQ(b.uploads(), 1u);
  EXPECT_EQ(device[n - 1], static_cast<uint8_t>((n - 1) * 7));
  b.device_read(S);
  b.device_read(S);
  EXPECT_EQ(b.uploads(), 1u);

  // "A kernel" writes the device copy; the host sees it once, on demand.
  device = reinterpret_cast<uint8_t*>(b.device_write(S));
  device[5] = 0xAB;
  EXPECT_EQ(b.downloads(), 0u);
  const auto* seen = static_cast<const uint8_t*>(b.host_read());
  EXPECT_EQ(seen[5], 0xAB);
  EXPECT_EQ(seen[6], static_cast<uint8_t>(6 * 7));
  b.host_read();
  EXPECT_EQ(b.downloads(), 1u);
  EXPECT_EQ(b.state(), MirrorState::Synchronised);

  // A partial host write keeps the device's other bytes.
  b.device_write(S);
  device[9] = 0x11;
  auto* writable = static_cast<uint8_t*>(b.host_write());
  EXPECT_EQ(writable[9], 0x11);
  writable[10] = 0x22;
  device = reinterpret_cast<uint8_t*>(b.device_read(S));
  EXPECT_EQ(device[10], 0x22);
  EXPECT_EQ(device[9], 0x11);
  EXPECT_EQ(b.uploads(), 2u);
  EXPECT_EQ(b.downloads(), 2u);
}

TEST(MirroredBuffer, ReleasesItsMemory) {
  Fixture f;
  {
    MirroredBuffer b(*f.pool, f.engine, 5 * 1000 * 1000);
    b.host_overwrite();
    b.device_read(S);
    EXPECT_GT(f.pool->stats().allocated, 0u);
  }
  EXPECT_EQ(f.pool->stats().allocated, 0u);
}

} // namespace
} // namespace gpukit::rt
