// cli/vllm_flags.h and --kv-cache-dtype fp8: vLLM's deployment flags accepted by `serve`.
#include "cli/vllm_flags.h"

#include <gtest/gtest.h>

#include "cli/kv_cache_flag.h"

namespace minimax::cli {
namespace {

struct Serve {
  CLI::App app;
  VllmFlags flags;
  bool no_prefix_caching = false;
  std::string kv_cache_dtype;
  Serve() {
    CLI::Option* off = app.add_flag("--no-enable-prefix-caching", no_prefix_caching);
    add_vllm_flags(&app, flags, off);
    add_kv_cache_dtype_flag(&app, kv_cache_dtype);
  }
};

TEST(VllmFlags, AcceptsTheDeploymentGuidesFlags) {
  Serve s;
  s.app.parse(
      "--trust-remote-code --enable-auto-tool-choice --enable-prefix-caching --dtype bfloat16 "
      "--kv-cache-dtype fp8");
  EXPECT_TRUE(s.flags.trust_remote_code);
  EXPECT_TRUE(s.flags.enable_auto_tool_choice);
  EXPECT_EQ(s.flags.dtype, "bfloat16");
  EXPECT_EQ(kv_cache_dtype(s.kv_cache_dtype), KvDtype::kFp8E4m3);
  EXPECT_EQ(vllm_flag_notes(s.flags).size(), 2u);
}

TEST(VllmFlags, NoNotesWhenNoneIsGiven) {
  Serve s;
  s.app.parse("");
  EXPECT_TRUE(vllm_flag_notes(s.flags).empty());
  EXPECT_EQ(s.flags.dtype, "auto");
}

TEST(VllmFlags, OtherDtypesAreRefusedNamingTheFlag) {
  Serve s;
  try {
    s.app.parse("--dtype float16");
    FAIL() << "--dtype float16 accepted";
  } catch (const CLI::ValidationError& e) {
    EXPECT_NE(std::string(e.what()).find("--dtype"), std::string::npos) << e.what();
  }
}

TEST(VllmFlags, PrefixCachingOnAndOffTogetherIsRefused) {
  Serve s;
  EXPECT_THROW(s.app.parse("--enable-prefix-caching --no-enable-prefix-caching"), CLI::ParseError);
}

}  // namespace
}  // namespace minimax::cli
