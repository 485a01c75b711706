// What cloud tools receive for a turn: the resolved credentials (in memory
// only), a ROS client bound to them and the generic caller of aliyun_api.
import type { AliyunApi } from "./aliyun-api-client.js";
import type { AlibabaCloudCredentials } from "./credentials.js";
import type { RosApi } from "./ros-client.js";

export interface CloudContext {
  credentials: AlibabaCloudCredentials;
  ros: RosApi;
  /** Products of the aliyun_api table other than ROS; absent against the simulated endpoint. */
  api?: AliyunApi;
  /** Pause between two GetStack polls. */
  pollIntervalMs: number;
  /** Upper bound of one stack operation's polling. */
  maxPollMs: number;
}
