// Preloaded into a server process by `rss-under-load.ts --heap` (NODE_OPTIONS=--import, outside
// the product): once a second it appends one line to RSS_BENCH_HEAP_FILE,
// `<epoch ms> <heap total> <heap used> <heap used after the last full GC>` in bytes. The last
// figure is the live heap (taken when the collector reports a mark-compact, so it includes what was
// allocated between the collection and the report): what a leak would raise; the heap total is
// what V8 keeps reserved, which with native memory (SQLite's page cache, code) makes up the RSS.
import { appendFileSync } from "node:fs";
import { PerformanceObserver, constants } from "node:perf_hooks";
import process from "node:process";
import { setInterval } from "node:timers";
import v8 from "node:v8";

const file = process.env.RSS_BENCH_HEAP_FILE;
if (file) {
  let afterFullGc = 0;
  new PerformanceObserver((list) => {
    if (list.getEntries().some((e) => e.detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR))
      afterFullGc = v8.getHeapStatistics().used_heap_size;
  }).observe({ entryTypes: ["gc"] });
  setInterval(() => {
    const heap = v8.getHeapStatistics();
    appendFileSync(file, `${Date.now()} ${heap.total_heap_size} ${heap.used_heap_size} ${afterFullGc}\n`);
  }, 1000).unref();
}
