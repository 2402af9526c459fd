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
  EXPECT_TRUE(open->Authorize("", AccessPolicy::Right::kWrite).ok());
  auto policy = AccessPolicy::Create("s3cret", {});
  // The scheme is case-insensitive (RFC 9110 11.1); the token is not.
  for (const char* good : {"Bearer s3cret", "bearer s3cret", "BEARER s3cret", "Bearer   s3cret"}) {
    EXPECT_TRUE(policy->CheckToken(good).ok()) << good;
  }
  for (const char* bad : {"", "s3cret", "Bearer s3cre", "Bearer s3cret2", "Bearer S3cret", "Bearers3cret",
                          "Basic s3cret", "Bearer ", "Bearer"}) {
    EXPECT_EQ(policy->CheckToken(bad).code(), Status::Code::kPermissionDenied) << bad;
  }
}

TEST(AccessPolicy, TheReadTokenReadsAndOnlyTheAdminTokenWrites) {
  using Right = AccessPolicy::Right;
  auto both = AccessPolicy::Create("reader", "admin", {});
  ASSERT_TRUE(both.ok());
  EXPECT_TRUE(both->Authorize("Bearer reader", Right::kRead).ok());
  EXPECT_TRUE(both->Authorize("Bearer admin", Right::kRead).ok());
  EXPECT_TRUE(both->Authorize("Bearer admin", Right::kWrite).ok());
  const Status refused = both->Authorize("Bearer reader", Right::kWrite);
  EXPECT_EQ(refused.code(), Status::Code::kPermissionDenied);
  EXPECT_NE(refused.message().find("admin token"), std::string::npos) << refused.message();
  for (const char* bad : {"", "Bearer nobody", "Bearer readeradmin"}) {
    EXPECT_EQ(both->Authorize(bad, Right::kRead).code(), Status::Code::kPermissionDenied) << bad;
    EXPECT_EQ(both->Authorize(bad, Right::kWrite).code(), Status::Code::kPermissionDenied) << bad;
  }

  // The read token alone keeps every right, as before roles.
  auto read_only_configured = AccessPolicy::Create("reader", "", {});
  EXPECT_TRUE(read_only_configured->Authorize("Bearer reader", Right::kWrite).ok());
  EXPECT_EQ(read_only_configured->Authorize("", Right::kWrite).code(), Status::Code::kPermissionDenied);

  // The admin token alone: reads are open, writes need it.
  auto admin_only = AccessPolicy::Create("", "admin", {});
  EXPECT_TRUE(admin_only->Authorize("", Right::kRead).ok());
  EXPECT_FALSE(admin_only->token_required());
  EXPECT_EQ(admin_only->Authorize("", Right::kWrite).code(), Status::Code::kPermissionDenied);
  EXPECT_TRUE(admin_only->Authorize("Bearer admin", Right::kWrite).ok());

  // One token for both rights would make the read token an admin token.
  EXPECT_EQ(AccessPolicy::Create("same", "same", {}).status().code(), Status::Code::kInvalidArgument);
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
