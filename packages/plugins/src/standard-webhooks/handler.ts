import { createHmac } from 'node:crypto';
import type { PluginContext, PluginResponse } from '../contract';
import type { StandardWebhooksConfig } from './schema';

const BAD_REQUEST: PluginResponse = Object.freeze({ status: 400, body: Object.freeze({ message: 'Bad request' }) });

/**
 * The Standard Webhooks signature Kong compares with: `v1,` and the base64 HMAC-SHA256, keyed with the secret as
 * given, of `<webhook-id>.<webhook-timestamp>.<body>`.
 */
export function webhookSignature(secret: string, id: string, timestamp: number, body: Buffer | string): string {
  const mac = createHmac('sha256', secret);
  mac.update(`${id}.${timestamp}.`);
  mac.update(body);
  return `v1,${mac.digest('base64')}`;
}

function first(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/**
 * Lets a webhook through when it carries `webhook-id`, `webhook-signature` and `webhook-timestamp`, the timestamp is
 * no more than `tolerance_second` in the past (one that does not parse counts as 0, so too old), the body is not
 * empty, and the signature is exactly the expected one; anything else answers 400, as Kong.
 */
export async function standardWebhooksAccess(ctx: PluginContext, config: StandardWebhooksConfig, nowMs = Date.now()): Promise<PluginResponse | void> {
  const headers = ctx.req.headers;
  const id = first(headers['webhook-id']);
  const signature = first(headers['webhook-signature']);
  const timestampText = first(headers['webhook-timestamp']);
  if (id === undefined || signature === undefined || timestampText === undefined) return BAD_REQUEST;
  const parsed = Number(timestampText.trim());
  const timestamp = timestampText.trim() !== '' && Number.isFinite(parsed) ? parsed : 0;
  if (nowMs / 1000 - timestamp > config.tolerance_second) return BAD_REQUEST;
  const body = await ctx.req.readBody();
  if (body.length === 0) return BAD_REQUEST;
  if (signature !== webhookSignature(config.secret_v1, id, timestamp, body)) return BAD_REQUEST;
}
