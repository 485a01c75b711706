// The test Redis fixture itself: its own server, data kept across a restart with AOF.
import { expect } from "chai";
import { Redis } from "ioredis";
import { startRedis } from "../fixtures/redis-server.js";

describe("test redis fixture", () => {
  it("starts a private redis-server whose AOF data survives a restart", async () => {
    const redis = await startRedis({ appendOnly: true });
    try {
      expect(redis.port).to.not.equal(6379);
      const client = new Redis(redis.url, { lazyConnect: true, maxRetriesPerRequest: 1 });
      await client.connect();
      await client.set("k", "v");
      client.disconnect();
      await redis.restart();
      const again = new Redis(redis.url, { maxRetriesPerRequest: 1 });
      expect(await again.get("k")).to.equal("v");
      again.disconnect();
    } finally {
      await redis.close();
    }
  });
});
