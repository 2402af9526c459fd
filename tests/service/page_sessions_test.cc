#include "service/page_sessions.h"

#include <gtest/gtest.h>

#include <regex>
#include <set>

namespace xladb::service {
namespace {

std::string NewSession(PageSessions& sessions) {
  StatusOr<std::string> id = sessions.Create();
  EXPECT_TRUE(id.ok());
  return id.ok() ? *id : std::string();
}

TEST(PageSessions, IdsAreRandom256BitHexAndOnlyTheirOwnCookieCounts) {
  PageSessions sessions;
  std::set<std::string> ids;
  for (int i = 0; i < 100; ++i) {
    const std::string id = NewSession(sessions);
    EXPECT_TRUE(std::regex_match(id, std::regex("[0-9a-f]{64}"))) << id;
    ids.insert(id);
  }
  EXPECT_EQ(ids.size(), 100u);
  const std::string id = *ids.begin();
  EXPECT_TRUE(sessions.Valid("xladb_session=" + id));
  EXPECT_TRUE(sessions.Valid("theme=dark; xladb_session=" + id + "; lang=en"));
  EXPECT_TRUE(sessions.Valid("xladb_session=stale; xladb_session=" + id));  // a second cookie cannot hide it
  EXPECT_FALSE(sessions.Valid(""));
  EXPECT_FALSE(sessions.Valid("xladb_session="));
  EXPECT_FALSE(sessions.Valid("xladb_session=" + std::string(64, '0')));
  EXPECT_FALSE(sessions.Valid("my_xladb_session=" + id));
  EXPECT_FALSE(sessions.Valid("xladb_session=" + id.substr(1)));
  EXPECT_FALSE(sessions.Valid("xladb_session=" + id + "0"));
}

TEST(PageSessions, SessionsExpireAndTheCapDropsTheOneNearestItsEnd) {
  PageSessions expired(std::chrono::seconds(0));
  EXPECT_FALSE(expired.Valid("xladb_session=" + NewSession(expired)));

  PageSessions capped(std::chrono::hours(1), 2);
  const std::string first = NewSession(capped), second = NewSession(capped), third = NewSession(capped);
  EXPECT_FALSE(capped.Valid("xladb_session=" + first));
  EXPECT_TRUE(capped.Valid("xladb_session=" + second));
  EXPECT_TRUE(capped.Valid("xladb_session=" + third));
}

TEST(PageSessions, TheCookieIsHttpOnlyStrictAndSecureUnderTls) {
  PageSessions sessions(std::chrono::seconds(600));
  EXPECT_EQ(sessions.SetCookie("ab", false), "xladb_session=ab; Path=/; Max-Age=600; HttpOnly; SameSite=Strict");
  EXPECT_EQ(sessions.SetCookie("ab", true), "xladb_session=ab; Path=/; Max-Age=600; HttpOnly; SameSite=Strict; Secure");
}

}  // namespace
}  // namespace xladb::service
