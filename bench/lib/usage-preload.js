// Preloaded (`node --import`) into a measured process: at exit it writes the process's own
// resource usage (CPU, peak RSS) to $BENCH_USAGE_FILE, so numbers cover that process only.
import { writeFileSync } from 'node:fs';

const file = process.env.BENCH_USAGE_FILE;
if (file) {
  process.on('exit', () => {
    const u = process.resourceUsage();
    writeFileSync(
      file,
      JSON.stringify({
        user_ms: u.userCPUTime / 1000,
        system_ms: u.systemCPUTime / 1000,
        max_rss_kb: u.maxRSS,
      }),
    );
  });
}
