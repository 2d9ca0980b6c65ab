// Gatehouse data plane: key-auth + rate-limiting, policy redis (one atomic script per request on REDIS_URL).
// See rate-limiting-scenario.ts.
import { serveKeyAuthRateLimiting } from './rate-limiting-scenario';

await serveKeyAuthRateLimiting('redis');
