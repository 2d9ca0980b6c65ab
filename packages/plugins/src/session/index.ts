import { definePlugin } from '../contract';
import { buildSessionIndex, sessionAuthenticate, sessionResponse, type SessionIndex } from './handler';
import { sessionConfigSchema, type SessionConfig } from './schema';

/**
 * Encrypted cookie sessions (Kong's priority 1900: before the authentication plugins, so a session stands in for
 * their credentials on later requests). An authentication plugin here only to restore the session: without one it
 * neither authenticates nor refuses.
 */
export const session = definePlugin<SessionConfig, SessionIndex>({
  name: 'session',
  priority: 1900,
  version: '3.9.0',
  configSchema: sessionConfigSchema,
  auth: true,
  noConsumer: true,
  compile: buildSessionIndex,
  indexSections: ['consumers'],
  authenticate: sessionAuthenticate,
  response: sessionResponse,
});
