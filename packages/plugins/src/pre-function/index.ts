import { serverlessPlugin } from './serverless';

/** Kong's pre-function: Lua snippets per phase, run before every other plugin (priority 1000000). */
export const preFunction = serverlessPlugin('pre-function', 1_000_000);
