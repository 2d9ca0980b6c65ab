/**
 * Marks a process the primary forked as a proxy worker; its value is the primary's role, so the worker reads the
 * same settings (listen defaults differ between `start` and `data-plane`).
 */
export const PROXY_WORKER_ENV = 'GATEHOUSE_PROXY_WORKER';
/** Tells a proxy worker that the node's oauth2 tokens live in the primary (embedded mode without Redis). */
export const WORKER_SHARED_TOKENS_ENV = 'GATEHOUSE_WORKER_SHARED_TOKENS';
