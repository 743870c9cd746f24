// ssd-fuzz's cases (ssd::campaign_problem) and the token shrink candidates of a problem.
#include <memory>
#include <sstream>

#include "guard.h"
#include "handles.h"
#include "ssd/fuzz/campaign.h"
#include "ssd/fuzz/shrink.h"

using ssd::capi::guarded;
using ssd::capi::need;

namespace {

ssd::CampaignOptions campaign_options(const ssd_capi_campaign_options& c) {
  if (c.shards < 1 || c.shard < 0 || c.shard >= c.shards)
    throw ssd::ArgumentError("options", "shard " + std::to_string(c.shard) + "/" + std::to_string(c.shards) +
                                            " is not i/n with 0 <= i < n");
  if (!(c.large_fraction >= 0 && c.large_fraction <= 1))
    throw ssd::ArgumentError("options", "large_fraction " + std::to_string(c.large_fraction) + " is outside [0, 1]");
  if (!(c.huge_fraction >= 0 && c.huge_fraction <= 1))
    throw ssd::ArgumentError("options", "huge_fraction " + std::to_string(c.huge_fraction) + " is outside [0, 1]");
  ssd::CampaignOptions o;
  o.seed = c.seed;
  o.shard = c.shard;
  o.shards = c.shards;
  o.large_fraction = c.large_fraction;
  o.huge_fraction = c.huge_fraction;
  if (c.dtypes != nullptr) {
    std::stringstream list(c.dtypes);
    for (std::string name; std::getline(list, name, ',');)
      if (!name.empty()) o.dtypes.push_back(ssd::parse_dtype(name, "options.dtypes"));
  }
  return o;
}

}  // namespace

extern "C" {

ssd_capi_status ssd_capi_campaign_defaults(ssd_capi_campaign_options* options) {
  return guarded("ssd_capi_campaign_defaults", [&] {
    const ssd::CampaignOptions d;
    need(options, "options") = {d.seed, d.shard, d.shards, nullptr, d.large_fraction, d.huge_fraction};
  });
}

ssd_capi_status ssd_capi_campaign_problem(const char* op, const ssd_capi_campaign_options* options, int64_t k,
                                          ssd_problem** out) {
  return guarded("ssd_capi_campaign_problem", [&] {
    need(out, "out") = nullptr;
    const ssd::Op parsed = ssd::parse_op(ssd::capi::need_text(op, "op"));
    const ssd::CampaignOptions o = campaign_options(need(options, "options"));
    // ssd-fuzz's shard i runs the cases k = i, i + n, i + 2n, ...: any other k is another shard's.
    if (k < 0 || k % o.shards != o.shard)
      throw ssd::ArgumentError("k", std::to_string(k) + " is not a case of shard " + std::to_string(o.shard) + "/" +
                                        std::to_string(o.shards) + " (k >= 0 and k % shards == shard)");
    *out = new ssd_problem(ssd::campaign_problem(parsed, o, k));
  });
}

ssd_capi_status ssd_capi_shrink_candidates(const ssd_problem* problem, ssd_problem_list** out) {
  return guarded("ssd_capi_shrink_candidates", [&] {
    need(out, "out") = nullptr;
    auto list = std::make_unique<ssd_problem_list>();
    list->problems = ssd::shrink_candidates(need(problem, "problem").problem);
    *out = list.release();
  });
}

void ssd_capi_problem_list_free(ssd_problem_list* list) { delete list; }

ssd_capi_status ssd_capi_problem_list_count(const ssd_problem_list* list, int64_t* count) {
  return guarded("ssd_capi_problem_list_count",
                 [&] { need(count, "count") = static_cast<int64_t>(need(list, "list").problems.size()); });
}

ssd_capi_status ssd_capi_problem_list_get(const ssd_problem_list* list, int64_t index, ssd_problem** out) {
  return guarded("ssd_capi_problem_list_get", [&] {
    need(out, "out") = nullptr;
    const auto& problems = need(list, "list").problems;
    *out = new ssd_problem(problems[ssd::capi::need_index(index, problems.size())]);
  });
}

}  // extern "C"
