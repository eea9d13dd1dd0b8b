//! What-if on a staged rollout: had the strategy run its stages in the opposite order, the
//! production cluster would have got the version first, and the rollout would have waited
//! for an approval nobody gave; the recorded reports of the clusters it never reached are
//! dropped, and the recorded approvals of requests it never made are refused in the fork.

mod common;

use common::staged::{recording, strategy};
use flotilla_replay::{WhatIfError, what_if};

const REVERSED: &str = "\
what-if from #9 2025-03-12T23:00:00Z, changed: ClusterStagedUpdateStrategy/rings
re-fed 4 of 6 recorded inputs up to #15 (2 refused by the what-if); dropped 0 applies or deletes of the changed objects, 2 work reports on work the what-if did not give; skipped 0 rejected records

ClusterResourcePlacement/web
  recorded: finished at index 0 since #15 2025-03-12T23:01:50Z
  what-if:  stalled at index 0 since #15 2025-03-12T23:01:50Z; behind: member-1 (- scheduled), member-2 (- scheduled)
  cluster    recorded                              what-if
  member-1   #9 2025-03-12T23:00:00Z - scheduled   #9 2025-03-12T23:00:00Z - scheduled
             #10 2025-03-12T23:00:10Z 0 pending
             #11 2025-03-12T23:00:30Z 0 ready
  member-2   #9 2025-03-12T23:00:00Z - scheduled   #9 2025-03-12T23:00:00Z - scheduled
             #12 2025-03-12T23:00:50Z 0 pending
             #13 2025-03-12T23:01:10Z 0 ready
  member-3   #9 2025-03-12T23:00:00Z - scheduled   #9 2025-03-12T23:00:00Z - scheduled
             #14 2025-03-12T23:01:30Z 0 pending    #10 2025-03-12T23:00:10Z 0 pending
             #15 2025-03-12T23:01:50Z 0 ready      #15 2025-03-12T23:01:50Z 0 ready
";

#[tokio::test]
async fn a_reversed_stage_order_reaches_production_first_and_waits() -> Result<(), WhatIfError> {
    let log = common::memory_log(&recording().events).await;
    let reversed = strategy(["production", "canary", "staging"]);
    let result = what_if(&log, 9, vec![reversed]).await?;
    assert_eq!(result.to_string(), REVERSED);
    Ok(())
}
