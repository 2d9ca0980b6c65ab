// Gatehouse data plane: key-auth + rate-limiting, policy local (counters in the process). See rate-limiting-scenario.ts.
import { serveKeyAuthRateLimiting } from './rate-limiting-scenario';

await serveKeyAuthRateLimiting('local');
