// CallbackHandlers (collector/src/CallbackHandlers.h): the walk the collector's CUPTI callback
// makes over the handlers registered at start, with fake handlers and no CUPTI.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "CallbackHandlers.h"
#include "FakeCaptureSink.h"

using fuselens::collector::CallbackHandler;
using fuselens::collector::CallbackHandlers;
using fuselens::collector::CaptureSink;

namespace {

// Appends "<name>:<event>" to a shared log.
class LoggingHandler final : public CallbackHandler {
 public:
  LoggingHandler(std::string name, std::vector<std::string>& log)
      : name_(std::move(name)), log_(log) {}

  void on_callback(CUpti_CallbackDomain domain, CUpti_CallbackId id,
                   const void*) noexcept override {
    log_.push_back(name_ + ":callback " + std::to_string(static_cast<int>(domain)) + "/" +
                   std::to_string(id));
  }
  void finish() noexcept override { log_.push_back(name_ + ":finish"); }
  void write_final(CaptureSink&) noexcept override { log_.push_back(name_ + ":write_final"); }

 private:
  std::string name_;
  std::vector<std::string>& log_;
};

// Takes the default write_final (nothing).
class SilentHandler final : public CallbackHandler {
 public:
  void on_callback(CUpti_CallbackDomain, CUpti_CallbackId, const void*) noexcept override {}
  void finish() noexcept override {}
};

}  // namespace

TEST(CallbackHandlers, WalksTheRegisteredHandlersInRegistrationOrder) {
  std::vector<std::string> log;
  CallbackHandlers handlers;
  handlers.on_callback(CUPTI_CB_DOMAIN_DRIVER_API, 7, &log);  // none registered: nothing happens
  EXPECT_TRUE(log.empty());
  ASSERT_TRUE(handlers.add(std::make_unique<LoggingHandler>("profiler", log)));
  ASSERT_TRUE(handlers.add(std::make_unique<SilentHandler>()));
  ASSERT_TRUE(handlers.add(std::make_unique<LoggingHandler>("args", log)));
  EXPECT_EQ(handlers.size(), 3u);
  const int data = 0;
  handlers.on_callback(CUPTI_CB_DOMAIN_DRIVER_API, 7, &data);
  handlers.finish();
  fuselens::collector::test::FakeCaptureSink sink;
  handlers.write_final(sink);
  const std::vector<std::string> expected = {
      "profiler:callback " + std::to_string(static_cast<int>(CUPTI_CB_DOMAIN_DRIVER_API)) + "/7",
      "args:callback " + std::to_string(static_cast<int>(CUPTI_CB_DOMAIN_DRIVER_API)) + "/7",
      "profiler:finish",
      "args:finish",
      "profiler:write_final",
      "args:write_final"};
  EXPECT_EQ(log, expected);
}

TEST(CallbackHandlers, RefusesHandlersPastTheFixedCapacity) {
  CallbackHandlers handlers;
  for (std::size_t i = 0; i < CallbackHandlers::kMaxHandlers; ++i) {
    EXPECT_TRUE(handlers.add(std::make_unique<SilentHandler>()));
  }
  EXPECT_FALSE(handlers.add(std::make_unique<SilentHandler>()));
  EXPECT_EQ(handlers.size(), CallbackHandlers::kMaxHandlers);
}
