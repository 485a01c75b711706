// What cloud tools receive for a turn: the resolved credentials (in memory
// only) and a ROS client bound to them.
import type { AlibabaCloudCredentials } from "./credentials.js";
import type { RosApi } from "./ros-client.js";

export interface CloudContext {
  credentials: AlibabaCloudCredentials;
  ros: RosApi;
  /** Pause between two GetStack polls. */
  pollIntervalMs: number;
  /** Upper bound of one stack operation's polling. */
  maxPollMs: number;
}
