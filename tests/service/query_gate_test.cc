// ConcurrencyGate (service/query_service.h): the slots that bound SQL queries, reports and pages at once come
// back however their holders' scopes end.
#include <gtest/gtest.h>

#include <chrono>
#include <optional>
#include <stdexcept>
#include <utility>

#include "service/query_service.h"

namespace xladb::service {
namespace {

using std::chrono::milliseconds;

// A slot is given back when its holder's scope ends by a throw (a page renderer's std::bad_alloc): the gate
// still admits `limit` holders afterwards. (Report gave its slot back by hand, after rendering: each throw
// lost one for good, and after four every query, report and page was refused until a restart.)
TEST(QueryGate, ASlotComesBackWhenItsHolderThrows) {
  ConcurrencyGate gate(2);
  for (int i = 0; i < 3; ++i) {
    try {
      auto slot = gate.Enter(milliseconds(0));
      ASSERT_TRUE(slot.has_value());
      EXPECT_EQ(gate.held(), 1);
      throw std::runtime_error("rendering failed");
    } catch (const std::runtime_error&) {
    }
  }
  EXPECT_EQ(gate.held(), 0);
  auto first = gate.Enter(milliseconds(0));
  auto second = gate.Enter(milliseconds(0));
  EXPECT_TRUE(first.has_value() && second.has_value());
  EXPECT_FALSE(gate.Enter(milliseconds(10)).has_value());  // full: two held
  std::optional<ConcurrencyGate::Slot> moved = std::move(first);
  first.reset();  // the moved-from slot gives nothing back
  EXPECT_EQ(gate.held(), 2);
  moved.reset();
  EXPECT_EQ(gate.held(), 1);
}

}  // namespace
}  // namespace xladb::service
