import { definePlugin } from '../contract';
import { jweDecryptAccess } from './handler';
import { buildKeyIndex, type JweKeyIndex } from './key-index';
import { jweDecryptConfigSchema, type JweDecryptConfig } from './schema';

/** Decrypts a compact JWE from a request header with a key from the configured key sets and forwards the plaintext. */
export const jweDecrypt = definePlugin<JweDecryptConfig, JweKeyIndex>({
  name: 'jwe-decrypt',
  priority: 1999,
  version: '3.9.0',
  configSchema: jweDecryptConfigSchema,
  auth: false,
  noConsumer: true,
  compile: buildKeyIndex,
  indexSections: ['key_sets', 'keys'],
  access: jweDecryptAccess,
});
