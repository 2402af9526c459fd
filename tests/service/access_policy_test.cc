#include "service/access_policy.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "tests/store/test_dirs.h"

namespace xladb::service {
namespace {

TEST(AccessPolicy, PathsMustResolveInsideAnAllowedRoot) {
  testing::TempDir tmp;
  std::filesystem::create_directories(tmp / "root/run");
  std::filesystem::create_directories(tmp / "rootkit/run");  // shares a prefix with "root"
  std::filesystem::create_directories(tmp / "outside");
  ASSERT_EQ(::symlink((tmp / "outside").c_str(), (tmp / "root/link").c_str()), 0);
  auto policy = AccessPolicy::Create("", {tmp / "root"});
  ASSERT_TRUE(policy.ok());
  EXPECT_TRUE(policy->ResolveAllowedPath(tmp / "root/run").ok());
  EXPECT_TRUE(policy->ResolveAllowedPath(tmp / "root").ok());
  for (const std::string& bad : {tmp / "outside", tmp / "root/../outside", tmp / "root/link", tmp / "rootkit/run"}) {
    auto r = policy->ResolveAllowedPath(bad);
    EXPECT_EQ(r.status().code(), Status::Code::kPermissionDenied) << bad;
  }
  EXPECT_EQ(policy->ResolveAllowedPath(tmp / "root/missing").status().code(), Status::Code::kNotFound);
  auto none = AccessPolicy::Create("", {});
  EXPECT_EQ(none->ResolveAllowedPath(tmp / "root").status().code(), Status::Code::kPermissionDenied);
  EXPECT_FALSE(AccessPolicy::Create("", {tmp / "no-such-root"}).ok());
}

TEST(AccessPolicy, BearerTokenMustMatchExactly) {
  auto open = AccessPolicy::Create("", {});
  EXPECT_TRUE(open->CheckToken("").ok());
  auto policy = AccessPolicy::Create("s3cret", {});
  EXPECT_TRUE(policy->CheckToken("Bearer s3cret").ok());
  for (const char* bad : {"", "s3cret", "Bearer s3cre", "Bearer s3cret2", "Bearer S3cret", "bearer s3cret"}) {
    EXPECT_EQ(policy->CheckToken(bad).code(), Status::Code::kPermissionDenied) << bad;
  }
}

TEST(AccessPolicy, TokenFileFirstLineTrimmed) {
  testing::TempDir tmp;
  testing::WriteFile(tmp / "t", "  abc123 \nsecond line\n");
  auto t = ReadTokenFile(tmp / "t");
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t.value(), "abc123");
  testing::WriteFile(tmp / "empty", "\n");
  EXPECT_FALSE(ReadTokenFile(tmp / "empty").ok());
}

}  // namespace
}  // namespace xladb::service
